// slab_hash::Backend: what the slab-hash Table (table.h) asks of a backend.
// Two implementations: the GPU slab hash (gpu/backend.h, gpu::GpuBackend)
// and the CPU backend over libcuckoo (cpu/backend.h, cpu::CpuBackend). Both
// keep their contents in memory only (the family is volatile): a new backend
// is empty.
//
// Batches follow gpkv::Table's contract: within a batch the last put of a
// key wins and the first erase of a key reports it; concurrent batches from
// several threads are allowed; a reader sees the old or the new value of a
// key, never a mix. Arrays are host memory, or device memory on the GPU
// backend (detected per call). `stream` is BatchOptions::stream (a
// cudaStream_t or null): the batch starts after the work enqueued on it so
// far; every call returns when its results are written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/slab_hash/stats.h"

namespace gpkv::slab_hash {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Status Put(const uint8_t* keys, const uint8_t* values, size_t count, void* stream) = 0;
  virtual Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                     void* stream) = 0;
  virtual Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) = 0;
  // Visits every live pair (Table::Scan's contract).
  virtual Status Scan(const Table::ScanVisitor& visit) = 0;
  virtual Result<slab_hash::Stats> Stats() = 0;
};

}  // namespace gpkv::slab_hash
