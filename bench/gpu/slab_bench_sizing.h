// How `gpkv-bench --suite slab` sizes a slab hash so that, after the build,
// its memory utilisation (slab_hash::Stats::memory_utilisation: pair bytes
// over bucket-array bytes plus chained slabs in use x 128) is near a target.
//
// The model: keys hash uniformly, so a bucket's key count is Poisson with
// mean lambda = keys / buckets; a bucket of x keys holds max(1, ceil(x / s))
// slabs (its base slab, then full chained slabs: the prefix property packs
// its list), s = slots per slab. Expected utilisation is then
//   u(lambda) = lambda * pair_bytes / (slab_bytes * E[max(1, ceil(X / s))]),
// increasing in lambda. The planner inverts it, capped below the table's
// growth bound (a rehash once keys > buckets * s * 2): the highest
// utilisation a table can hold without growing is u(2 s), ~72% for 8-byte
// keys and values (s = 7). The benchmark prints the measured value beside
// the target either way.
//
// Plain C++, no CUDA: tests check the model without a device.
// Who may call: the slab suite (bench/gpu/slab_bench*), tests.
#pragma once

#include <cstdint>

namespace gpkv::bench::gpu {

// The slab hash's growth bound: lists average at most this many slabs.
inline constexpr double kGrowthSlabsPerList = 2.0;
// The planner keeps lambda this far below the bound, so that a build never
// triggers a rehash.
inline constexpr double kGrowthMargin = 0.97;

// u(lambda) above, for `slots_per_slab` slots and `pair_bytes` key + value
// bytes per slot, inline values.
double ModelUtilisation(double keys_per_bucket, uint32_t slots_per_slab, uint32_t pair_bytes);

struct BucketPlan {
  uint64_t buckets = 0;          // buckets to create
  double keys_per_bucket = 0;    // lambda the plan reaches
  double model_utilisation = 0;  // u(lambda)
  bool capped = false;           // the target is above what the growth bound allows
};

// Buckets for `keys` keys to reach `target` utilisation (0..1).
// REQUIRES: keys >= 1, 0 < target < 1, slots_per_slab >= 1.
BucketPlan PlanBuckets(uint64_t keys, double target, uint32_t slots_per_slab, uint32_t pair_bytes);

}  // namespace gpkv::bench::gpu
