// The modes of the GPU benchmark (`gpkv-bench --suite gpu --modes ...`):
//
//   direct | mirror | staged [+OPTION]...   gphash::gpu::GpuBackend in that index mode
//   cpu                                     gphash::cpu::CpuBackend on all hardware threads
//   naive                                   the naive baseline (naive_table.h)
//   host                                    the host-batch section (host_bench.h):
//                                           engine and every GPU mode, host batches
//
// Options of a GPU mode, joined by '+' ("direct+nocache+sortall"), each a
// GpuTableOptions field: the kernels of mirror and staged mode, "warpputs"
// (warp-cooperative puts, warp_puts) and "tilegets" (gets on a tile of lanes
// per key, tile_index_gets); and the tuning of direct mode, "sortall" (sort
// small get batches too), "nocache" (no BktCache), "cacheP" (a BktCache of P
// percent of the buckets) and "reloadN" (a reload every 2^N operations).
//
// Plain C++, no CUDA: gpkv-bench checks --modes in every build.
#pragma once

#include <string>

#include "gpkv/status.h"
#include "tables/gphash/gpu/backend.h"

namespace gpkv::bench::gpu {

// How the table of a GPU mode is opened.
struct GpuMode {
  ::gpkv::gphash::gpu::GpuTableOptions options;
};

// The mode without its options: "direct" of "direct+nocache".
std::string BaseMode(const std::string& mode);

// The table options of a direct, mirror or staged mode. InvalidArgument
// naming the mode for another base or an unknown option.
Result<GpuMode> ParseGpuMode(const std::string& mode);

// OK when `mode` is one the benchmark runs: cpu, naive, or a GPU mode that
// ParseGpuMode takes. InvalidArgument naming it otherwise.
Status CheckMode(const std::string& mode);

}  // namespace gpkv::bench::gpu
