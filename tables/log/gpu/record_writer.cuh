// The GPU backend's primitives of the log: a columnar record (layout.h)
// whose arrays are in GPU memory has its checksum summed on the device and
// its arrays copied into the pool, both stream-ordered, so that a family runs
// them beside its other work and waits once; log::FinishRecord (record.h)
// then writes the header and persists the record.
//
// Who may call: the table families' GPU backends (tables/<family>/gpu/).
// Includes the CUDA runtime. Thread safety: plain launchers; the caller
// owns the stream and the memory it names.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/log/layout.h"

namespace gpkv::log::gpu {

// A record's entries in GPU memory: `count` keys of key_size bytes, and,
// unless values is null (a tombstone record), `count` values of value_size
// bytes followed by zero bytes up to a multiple of 8 (the record's padding,
// summed with them).
struct DeviceRecordEntries {
  const uint64_t* keys = nullptr;
  const uint8_t* values = nullptr;
  uint64_t count = 0;
};

// Zeroes *sum (8 bytes of GPU memory) and adds the checksum terms of the
// record's data words (layout.h: ChecksumTerm, seed RecordSeed(epoch,
// header)) to it on `stream`; the checksum is then ChecksumFinish(seed,
// ColumnarRecordWords(...), *sum). Stream-ordered: returns once launched.
// Errors name `where` and the kernel. REQUIRES: entries.count >= 1.
Status SumRecordTermsAsync(const DeviceRecordEntries& entries, uint32_t key_size,
                           uint32_t value_size, uint64_t seed, unsigned long long* sum,
                           cudaStream_t stream, const std::string& where);

// Copies the record's key and value arrays from GPU memory to the columnar
// record `header` at record_offset in the pool (its arrays: record.h
// ColumnarRecordArrays) on `stream`: at the link's bulk rate once the pool
// is registered. Stream-ordered: returns once queued. Errors name `where`.
Status CopyRecordArraysAsync(pm::Pool& pool, uint64_t record_offset, const RecordHeader& header,
                             const DeviceRecordEntries& entries, uint32_t key_size,
                             uint32_t value_size, cudaStream_t stream, const std::string& where);

}  // namespace gpkv::log::gpu
