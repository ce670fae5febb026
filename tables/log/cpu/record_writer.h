// The CPU backend's primitive of the log: a columnar record's arrays copied
// from host memory into the pool, its checksum summed on worker threads.
//
// Who may call: the table families' CPU backends, and tests.
// Thread safety: a plain function; it runs its own OpenMP team.
#pragma once

#include <cstdint>

#include "pm/pool.h"
#include "tables/log/layout.h"

namespace gpkv::log::cpu {

// The entries of one record in host memory: `count` keys of key_size bytes
// (ascending is the family's rule, not the log's) and, unless the record is
// all tombstones, `count` values of value_size bytes.
struct RecordEntries {
  const uint64_t* keys = nullptr;
  const uint8_t* values = nullptr;  // null: a tombstone record
  uint64_t count = 0;
};

// Copies the arrays of the columnar record of `entries` (sequence number
// `seq`) to record_offset and returns its header with the checksum of log
// `epoch` summed on `threads` threads: what log::FinishRecord then
// completes. Past the published bytes: nothing reads them until the record
// is published. REQUIRES: entries.count >= 1; the record fits its half.
RecordHeader WriteRecordArrays(pm::Pool& pool, uint64_t record_offset, uint64_t epoch, uint64_t seq,
                               const RecordEntries& entries, uint32_t key_size, uint32_t value_size,
                               int threads);

}  // namespace gpkv::log::cpu
