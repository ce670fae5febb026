// slab_hash::SlabHashTable: the gpkv::Table of a volatile hash table. Hands
// each batch to its backend: the GPU slab hash (gpu/backend.h, in a CUDA
// build) or the CPU backend over libcuckoo (cpu/backend.h). Contents live in
// memory only: a table opened is empty, and what it holds is gone when the
// DB closes. The engine checks every batch's spans before they get here
// (engine/checked_table.h). Stats() reports the backend's counters as
// "slab_hash.*" properties.
//
// Thread safety: as gpkv::Table promises; the backends handle concurrent
// batches.
#pragma once

#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/hash_family_table.h"
#include "tables/hash_index.h"
#include "tables/slab_hash/backend.h"
#include "tables/slab_hash/stats.h"

namespace gpkv::slab_hash {

// The family's name, the prefix of its property names.
constexpr const char* kFamilyName = "slab_hash";

// The public stats of a table from its backend's counters: keys, bytes of
// memory held (GPU memory or RAM, not pool bytes) and the properties
// slab_hash.buckets, .slabs, .slots, .dead-slots, .load-factor,
// .memory-utilisation, .super-blocks, .rehashes, .rehash-seconds, .flushes.
TableStats PublicStats(const Stats& stats);

// An empty table named `name` for `options` (checked by the family); errors
// start with `where` ("pool.gpkv: table 'cache'"). On CUDA device
// `cuda_device` (gpu::GpuBackend) when `backend` is kCuda: Unsupported or OutOfDeviceMemory when
// the GPU cannot take it (no usable device, not enough device memory). On the CPU when `backend` is
// kCpu: cpu::CreateCpuBackend with `cpu_threads` workers; a CPU table too large for RAM at its
// expected size starts small and grows as keys arrive (the table's contents are empty anyway; only
// its first size is lost).
Result<std::unique_ptr<Table>> OpenEmptyTable(const std::string& where, const std::string& name,
                                              const TableOptions& options, gpkv::Backend backend,
                                              int cpu_threads, int cuda_device = 0);

class SlabHashTable final : public tables::HashFamilyTable<Backend>,
                            public tables::DeviceIndexScan,
                            public tables::OverlappedIndexPut {
 public:
  // Errors of the backend get `where` in front of their message.
  SlabHashTable(std::string where, std::string name, TableOptions options,
                std::unique_ptr<Backend> backend);

  Result<TableStats> Stats() override;
  Status Scan(const ScanVisitor& visit) override;
  // The backend's mixed batch (mixed_batch.h), errors named as the batches'.
  Status Mixed(const uint8_t* ops, const uint8_t* keys, uint8_t* values, uint8_t* results,
               size_t count, void* stream);
  // The GPU backend's gather of the pairs (the CPU backend: Unsupported,
  // cuda_device() -1).
  int cuda_device() const override;
  Status ScanIntoDevice(uint64_t* keys, uint64_t* values, uint64_t capacity,
                        uint64_t* pairs) override;
  // The backend's PutWhile (the GPU backend runs meanwhile() beside the
  // batch's kernels), errors named as the batches'.
  Status PutWhile(ConstBytes keys, ConstBytes values,
                  const std::function<void()>& meanwhile) override;
};

}  // namespace gpkv::slab_hash
