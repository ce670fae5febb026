// What the slab hash's kernels receive: the table (bucket array, SlabAlloc
// view, geometry of tables/slab_hash/layout.h) and, for write kernels, where
// they report. Plain data passed by value to kernels; no CUDA headers, so
// the host side (backend.cu) and the kernels (*.cu) share it.
#pragma once

#include <cstdint>

#include "gpu/slab_alloc.h"
#include "tables/slab_hash/layout.h"

namespace gpkv::slab_hash::gpu {

static_assert(kNullNext == gpkv::gpu::kNullSlab, "a list ends where SlabAlloc names no slab");
static_assert(kSlabBytes == gpkv::gpu::kSlabBytes,
              "list slabs and value slabs come from SlabAlloc");

// The table as the kernels see it. Valid until the table's next rehash,
// SlabAlloc growth or destruction (the host holds the table lock meanwhile).
struct DeviceView {
  uint8_t* buckets = nullptr;  // bucket_count base slabs of kSlabBytes
  uint64_t bucket_count = 0;
  uint64_t seed = 0;  // KeyHash64 seed
  gpkv::gpu::SlabAllocView alloc;
  SlabGeometry geometry{};
  // Write kernels: the batch's tag (layout.h, 1..kTagCount-1); 0 for reads.
  uint32_t tag = 0;
};

// Counters of one write launch, in device memory (zeroed before it).
struct BatchCounters {
  unsigned long long inserted = 0;   // new keys (claimed slots)
  unsigned long long replaced = 0;   // puts that found their key
  unsigned long long erased = 0;     // live slots turned dead
  unsigned long long retries = 0;    // operations in WriteSink::retry_ops (or a list)
  unsigned long long retired = 0;    // value slabs in WriteSink::retired
  unsigned long long allocated = 0;  // slabs taken from SlabAlloc (appends, value slabs)
  unsigned long long pairs = 0;      // scan: live pairs found (also past the capacity)
  unsigned int duplicate = 0;        // the batch wrote a key twice (touched bits)
  unsigned int failed = 0;           // rehash: an allocation failed
  unsigned int next_unit = 0;        // write kernels: the next work unit a tile takes
};

// Where a write launch reports.
struct WriteSink {
  BatchCounters* counters = nullptr;
  // Operations (batch indices) not run: those that found SlabAlloc full
  // (the host grows it and runs them again). Room for every operation.
  uint32_t* retry_ops = nullptr;
  // Value slabs replaced or erased (out-of-line values): freed after the
  // launch, when no reader of the launch can still read them. Room for one
  // per operation.
  uint32_t* retired = nullptr;
};

}  // namespace gpkv::slab_hash::gpu
