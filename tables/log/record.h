// Writing a columnar log record (layout.h), backend-neutral: its header, where
// its arrays lie in the pool, and FinishRecord, the one writer of a record's
// header. A backend copies the arrays in and sums their checksum (the CPU's
// log::cpu::WriteRecordArrays, or a GPU's copy and reduction); the family
// then publishes the record (Appender::Publish).
//
// Who may call: the table families and their backends, and tests.
// Thread safety: plain functions; the caller owns the record's bytes (past
// the published ones, nothing reads them).
#pragma once

#include <cstdint>

#include "pm/pool.h"
#include "tables/log/layout.h"

namespace gpkv::log {

// The header of a columnar record of `count` entries of sequence number
// `seq` (all erases, no values, when `tombstones`); checksum 0.
RecordHeader ColumnarRecordHeader(uint64_t seq, uint64_t count, bool tombstones);

// Where the arrays of the columnar record `header` at record_offset lie in
// the pool: count * K key bytes at keys, count * V value bytes at values
// (null for a tombstone record).
struct RecordArrays {
  uint8_t* keys;
  uint8_t* values;
};
RecordArrays ColumnarRecordArrays(pm::Pool& pool, uint64_t record_offset,
                                  const RecordHeader& header, uint32_t key_size);

// Completes the columnar record `header` (checksum set by the caller: the
// position-keyed checksum of the record's data words, seed
// RecordSeed(epoch, header)) at record_offset, whose arrays the caller has
// copied to ColumnarRecordArrays: writes the values' padding and the header
// and persists the record. Returns its bytes; the caller then publishes it.
uint64_t FinishRecord(pm::Pool& pool, uint64_t record_offset, const RecordHeader& header,
                      uint32_t key_size, uint32_t value_size);

}  // namespace gpkv::log
