// The slab suite's entry points (see slab_bench.h), in every build: the
// configuration is checked here; the run itself is CUDA code
// (slab_bench_run.cu), built only with the CUDA backend.
#include "bench/gpu/slab_bench.h"

#include <string>

#if GPKV_HAVE_GPU_BENCH
#include "bench/gpu/slab_bench_run.h"
#endif

namespace gpkv::bench::gpu {
namespace {

// Why this build has no slab suite.
Status NotBuilt() {
#if GPKV_HAVE_CUDA
  return Status::Unsupported(
      "--suite slab: this gpkv was built without the GPU benchmarks (GPKV_BUILD_BENCH=OFF)");
#else
  return Status::Unsupported(
      "--suite slab: this gpkv was built without the CUDA backend (nvcc was not found when it "
      "was configured, or GPKV_WITH_CUDA was off)");
#endif
}

}  // namespace

bool SlabBenchBuiltIn() {
#if GPKV_HAVE_GPU_BENCH
  return true;
#else
  return false;
#endif
}

Status ValidateSlabBenchConfig(const SlabBenchConfig& config) {
  if (config.keys.empty()) return Status::InvalidArgument("--keys-log2 / --keys: no key count");
  for (uint64_t keys : config.keys) {
    if (keys < (uint64_t{1} << kSlabMinKeysLog2) || keys > kSlabMaxKeys) {
      return Status::InvalidArgument("--keys-log2 / --keys " + std::to_string(keys) +
                                     ": the slab suite runs 2^" + std::to_string(kSlabMinKeysLog2) +
                                     " to 2^" + std::to_string(kSlabMaxKeysLog2) + " keys");
    }
  }
  if (config.utilisation_percent.empty()) {
    return Status::InvalidArgument("--utilisation: no target");
  }
  for (int percent : config.utilisation_percent) {
    if (percent < 1 || percent > 95) {
      return Status::InvalidArgument("--utilisation " + std::to_string(percent) +
                                     ": a memory utilisation in percent, from 1 to 95");
    }
  }
  if (config.batch == 0 || config.batch > kSlabMaxKeys) {
    return Status::InvalidArgument("--batch must be 1 to 2^" + std::to_string(kSlabMaxKeysLog2));
  }
  if (config.repeats < 1 || config.repeats > kSlabMaxRepeats) {
    return Status::InvalidArgument("--repeats must be 1 to " + std::to_string(kSlabMaxRepeats));
  }
  if (config.pool_dir.empty()) return Status::InvalidArgument("--pool-dir must name a directory");
  if (config.allocations == 0 || config.allocations > kSlabMaxAllocations) {
    return Status::InvalidArgument("--allocations must be 1 to 2^27");
  }
  if (!SlabBenchBuiltIn()) return NotBuilt();
  return Status::OK();
}

Status RunSlabBench(const SlabBenchConfig& config, std::FILE* text, std::string* json_lines) {
#if GPKV_HAVE_GPU_BENCH
  return RunSlabBenchOnDevice(config, text, json_lines);
#else
  (void)config;
  (void)text;
  (void)json_lines;
  return NotBuilt();
#endif
}

}  // namespace gpkv::bench::gpu
