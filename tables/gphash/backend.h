// gphash::Backend: what the persistent hash table's front (table.h,
// GphashTable) asks of a backend. Two implementations, both reading and
// writing the same bytes (layout.h): cpu::CpuBackend, CPU threads on the pool
// mapping (cpu/backend.h), and gpu::GpuBackend, CUDA kernels (gpu/backend.h,
// in a CUDA build). A pool written by either opens, verifies and answers the
// same on the other. Each backend's static Open runs open-time recovery
// before it returns the backend.
//
// Batches follow gpkv::Table's contract: per-operation atomicity; within a
// batch the last put of a key wins and the first erase of a key reports it;
// a write batch is durable on return. Arrays are host memory, or device
// memory on the GPU backend (detected per call). `stream` is
// BatchOptions::stream (a cudaStream_t or null): the batch starts after the
// work enqueued on it so far (the CPU backend has nothing to order after and
// ignores it); the backend keeps nothing of the stream after the call.
//
// Who may call: tables/gphash/ (the front and the family), tests and the
// benchmark. Thread safety: batches, Scan and Stats may be called from
// several threads at once (see each backend for how they run).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/gphash/stats.h"

namespace gpkv::gphash {

class Backend {
 public:
  virtual ~Backend() = default;

  // Batches of `count` keys (key_size bytes each) and values (value_size
  // bytes each). found / erased (count bytes, or null): 1 where the key was
  // found / erased. PoolFull when growing the table cannot get pool space.
  virtual Status Put(const uint8_t* keys, const uint8_t* values, size_t count, void* stream) = 0;
  virtual Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                     void* stream) = 0;
  virtual Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) = 0;
  // The same batches ordered after nothing.
  Status Put(const uint8_t* keys, const uint8_t* values, size_t count) {
    return Put(keys, values, count, nullptr);
  }
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count) {
    return Get(keys, values, found, count, nullptr);
  }
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count) {
    return Erase(keys, erased, count, nullptr);
  }

  // Visits every live pair (gpkv::Table::Scan's contract) by reading the
  // pool on the host; single-threaded.
  virtual Status Scan(const Table::ScanVisitor& visit) const = 0;

  virtual gphash::Stats Stats() const = 0;
  virtual uint32_t key_size() const = 0;
  virtual uint32_t value_size() const = 0;
};

}  // namespace gpkv::gphash
