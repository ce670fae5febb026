// The GPU suite's run on the device (gpu_bench_run.cu), built with the CUDA
// backend only: what RunGpuBench (gpu_bench.h) calls there.
//
// Who may call: gpu_bench.cc.
#pragma once

#include <cstdio>
#include <string>

#include "bench/gpu/gpu_bench.h"
#include "gpkv/status.h"

namespace gpkv::bench::gpu {

// RunGpuBench in a build with the CUDA backend.
Status RunGpuBenchOnDevice(const GpuBenchConfig& config, std::FILE* text, std::string* json_lines);

}  // namespace gpkv::bench::gpu
