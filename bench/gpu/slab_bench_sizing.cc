// The slab suite's sizing model (see slab_bench_sizing.h).
#include "bench/gpu/slab_bench_sizing.h"

#include <algorithm>
#include <cmath>

#include "gpu/slab_alloc.h"

namespace gpkv::bench::gpu {
namespace {

// E[max(1, ceil(X / s))] for X ~ Poisson(lambda): the probabilities by the
// recurrence p(x) = p(x - 1) * lambda / x, summed until the tail is
// negligible (far past the mean).
double ExpectedSlabsPerList(double lambda, uint32_t slots_per_slab) {
  double probability = std::exp(-lambda);
  double expected = 0;
  const uint64_t last = static_cast<uint64_t>(lambda + 12 * std::sqrt(lambda) + 40);
  for (uint64_t x = 0; x <= last; ++x) {
    if (x > 0) probability *= lambda / static_cast<double>(x);
    const uint64_t slabs = std::max<uint64_t>(1, (x + slots_per_slab - 1) / slots_per_slab);
    expected += probability * static_cast<double>(slabs);
  }
  return expected;
}

}  // namespace

double ModelUtilisation(double keys_per_bucket, uint32_t slots_per_slab, uint32_t pair_bytes) {
  return keys_per_bucket * pair_bytes /
         (::gpkv::gpu::kSlabBytes * ExpectedSlabsPerList(keys_per_bucket, slots_per_slab));
}

BucketPlan PlanBuckets(uint64_t keys, double target, uint32_t slots_per_slab, uint32_t pair_bytes) {
  const double ceiling = kGrowthSlabsPerList * slots_per_slab * kGrowthMargin;
  BucketPlan plan;
  double lambda;
  if (ModelUtilisation(ceiling, slots_per_slab, pair_bytes) <= target) {
    plan.capped = true;
    lambda = ceiling;
  } else {
    // u is increasing in lambda: bisect on (0, ceiling].
    double low = 0, high = ceiling;
    for (int step = 0; step < 60; ++step) {
      const double middle = (low + high) / 2;
      (ModelUtilisation(middle, slots_per_slab, pair_bytes) < target ? low : high) = middle;
    }
    lambda = high;
  }
  plan.buckets = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(keys / lambda)));
  // The bucket count is whole: the lambda and utilisation it really gives.
  plan.keys_per_bucket = static_cast<double>(keys) / plan.buckets;
  plan.model_utilisation = ModelUtilisation(plan.keys_per_bucket, slots_per_slab, pair_bytes);
  return plan;
}

}  // namespace gpkv::bench::gpu
