// The GPU suite's entry points (see gpu_bench.h), in every build: the
// configuration is checked here; the run itself is CUDA code
// (gpu_bench_run.cu), built only with the CUDA backend.
#include "bench/gpu/gpu_bench.h"

#include <string>

#include "bench/gpu/gpu_modes.h"

#if GPKV_HAVE_GPU_BENCH
#include "bench/gpu/gpu_bench_run.h"
#endif

namespace gpkv::bench::gpu {
namespace {

// Why this build has no GPU suite.
Status NotBuilt() {
#if GPKV_HAVE_CUDA
  return Status::Unsupported(
      "--suite gpu: this gpkv was built without the GPU benchmarks (GPKV_BUILD_BENCH=OFF)");
#else
  return Status::Unsupported(
      "--suite gpu: this gpkv was built without the CUDA backend (nvcc was not found when it "
      "was configured, or GPKV_WITH_CUDA was off)");
#endif
}

}  // namespace

bool GpuBenchBuiltIn() {
#if GPKV_HAVE_GPU_BENCH
  return true;
#else
  return false;
#endif
}

Status ValidateGpuBenchConfig(const GpuBenchConfig& config) {
  if (config.keys == 0) return Status::InvalidArgument("--keys must be at least 1");
  if (config.dir.empty()) return Status::InvalidArgument("--dir must name a directory");
  if (config.batch_log2.empty()) return Status::InvalidArgument("--batches: no batch size");
  for (int log2 : config.batch_log2) {
    if (log2 < 1 || log2 > kMaxBatchLog2) {
      return Status::InvalidArgument("--batches " + std::to_string(log2) +
                                     ": batch sizes are log2, from 1 to " +
                                     std::to_string(kMaxBatchLog2));
    }
  }
  if (config.modes.empty()) return Status::InvalidArgument("--modes: no mode");
  for (const std::string& mode : config.modes) {
    Status checked = CheckMode(mode);
    if (!checked.ok()) return Status::InvalidArgument("--modes: " + checked.message());
  }
  if (!GpuBenchBuiltIn()) return NotBuilt();
  return Status::OK();
}

Status RunGpuBench(const GpuBenchConfig& config, std::FILE* text, std::string* json_lines) {
#if GPKV_HAVE_GPU_BENCH
  return RunGpuBenchOnDevice(config, text, json_lines);
#else
  (void)config;
  (void)text;
  (void)json_lines;
  return NotBuilt();
#endif
}

}  // namespace gpkv::bench::gpu
