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
#include <functional>

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
  // Put (ordered after nothing) that calls meanwhile() exactly once on the
  // calling thread (tables::OverlappedIndexPut::PutWhile's contract): the
  // GPU backend once the batch's first launch is queued, so that the
  // caller's host work runs beside the kernels; the default after the put.
  virtual Status PutWhile(const uint8_t* keys, const uint8_t* values, size_t count,
                          const std::function<void()>& meanwhile) {
    const Status put = Put(keys, values, count, nullptr);
    meanwhile();
    return put;
  }
  // The CUDA device of the GPU backend; -1 on the CPU.
  virtual int cuda_device() const { return -1; }
};

}  // namespace gpkv::slab_hash
