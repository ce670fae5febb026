// The modes of the GPU benchmark (`gpkv-bench --suite gpu --modes ...`):
//
//   direct | mirror | staged [+OPTION]...   a persistent hash table on the CUDA backend
//                                           in that index mode (Options::hash_gpu)
//   cpu                                     the same on the CPU backend, all hardware threads
//   logged                                  a logged persistent hash table on the CUDA
//                                           backend (TableOptions::hash_log: batches of
//                                           2^20, a log of 32; the index the GPU slab hash)
//   ordered                                 a persistent ordered table (LSM) on the CUDA
//                                           backend, the same keys
//   naive                                   the naive baseline (naive_table.h)
//   host                                    the host-batch section (host_bench.h):
//                                           engine and every GPU mode, host batches
//   host-tables                             the host-batch section's logged and
//                                           ordered tables alone
//
// Options of a GPU mode, joined by '+' ("direct+nocache+sortall"), each a
// field of the public options: the kernels of mirror and staged mode,
// "warpputs" (warp-cooperative puts, HashGpuOptions::warp_puts) and
// "tilegets" (gets on a tile of lanes per key, tile_index_gets); and the
// tuning of direct mode, "sortall" (sort small get batches too,
// sorted_get_min_ops 0), "nocache" (no cache of hot buckets,
// Options::gpu_cache_fraction 0), "cacheP" (a cache of P percent of the
// buckets) and "reloadN" (a reload every 2^N operations,
// bkt_cache_reload_ops).
//
// Plain C++, no CUDA: gpkv-bench checks --modes in every build.
#pragma once

#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv::bench::gpu {

// How the DB of a GPU mode is opened: Options::hash_gpu and
// Options::gpu_cache_fraction.
struct GpuMode {
  HashGpuOptions options;
  double cache_fraction = Options().gpu_cache_fraction;

  // `base` (backend kCuda) with this mode's fields set.
  Options Apply(Options base) const {
    base.backend = Backend::kCuda;
    base.hash_gpu = options;
    base.gpu_cache_fraction = cache_fraction;
    return base;
  }
};

// The mode without its options: "direct" of "direct+nocache".
std::string BaseMode(const std::string& mode);

// Whether `mode` is one of the table modes that keep no GPHash index in
// place (logged, ordered): they have no load factor, levels or cache.
bool IsTableMode(const std::string& mode);

// The table options of a table mode (logged, ordered) for `keys` expected
// keys; those of a hash table written in place for any other mode.
TableOptions ModeTableOptions(const std::string& mode, uint64_t keys);

// The options of a direct, mirror or staged mode. InvalidArgument
// naming the mode for another base or an unknown option.
Result<GpuMode> ParseGpuMode(const std::string& mode);

// OK when `mode` is one the benchmark runs: cpu, naive, or a GPU mode that
// ParseGpuMode takes. InvalidArgument naming it otherwise.
Status CheckMode(const std::string& mode);

}  // namespace gpkv::bench::gpu
