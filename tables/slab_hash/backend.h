// slab_hash::Backend: what the slab-hash Table (table.h) asks of a backend.
// Two implementations: the GPU slab hash (gpu/backend.h, gpu::GpuBackend)
// and the CPU backend over libcuckoo (cpu/backend.h, cpu::CpuBackend). Both
// keep their contents in memory only (the family is volatile): a new backend
// is empty.
//
// Batches (tables::HashBackend: Put, Get, Erase, with or without a stream)
// follow gpkv::Table's contract: concurrent batches from several threads are
// allowed; a reader sees the old or the new value of a key, never a mix;
// every call returns when its results are written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/hash_backend.h"
#include "tables/slab_hash/stats.h"

namespace gpkv::slab_hash {

class Backend : public tables::HashBackend {
 public:
  // Visits every live pair (Table::Scan's contract).
  virtual Status Scan(const Table::ScanVisitor& visit) = 0;
  virtual Result<slab_hash::Stats> Stats() = 0;
  // One launch of concurrent searches, replaces and deletes (mixed_batch.h's
  // contract; ops are MixedOp codes). The GPU backend runs it; the default
  // answers Unsupported.
  virtual Status Mixed(const uint8_t* /*ops*/, const uint8_t* /*keys*/, uint8_t* /*values*/,
                       uint8_t* /*results*/, size_t /*count*/, void* /*stream*/) {
    return Status::Unsupported("the CPU backend of volatile hash tables has no mixed batch");
  }
  // The GPU backend's gather of its live pairs into device memory
  // (tables::DeviceIndexScan::ScanIntoDevice's contract); the default
  // answers Unsupported.
  virtual Status ScanIntoDevice(uint64_t* /*keys*/, uint64_t* /*values*/, uint64_t /*capacity*/,
                                uint64_t* /*pairs*/) {
    return Status::Unsupported("the CPU backend of volatile hash tables keeps no device memory");
  }
  // The CUDA device of the GPU backend; -1 on the CPU.
  virtual int cuda_device() const { return -1; }
};

}  // namespace gpkv::slab_hash
