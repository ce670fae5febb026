// The slab suite's run on the device (slab_bench_run.cu), built with the
// CUDA backend only: what RunSlabBench (slab_bench.h) calls there.
//
// Who may call: slab_bench.cc.
#pragma once

#include <cstdio>
#include <string>

#include "bench/gpu/slab_bench.h"
#include "gpkv/status.h"

namespace gpkv::bench::gpu {

// RunSlabBench in a build with the CUDA backend.
Status RunSlabBenchOnDevice(const SlabBenchConfig& config, std::FILE* text,
                            std::string* json_lines);

}  // namespace gpkv::bench::gpu
