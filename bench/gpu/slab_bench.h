// The benchmark of the volatile slab hash, `gpkv-bench --suite slab`:
// volatile hash tables on the CUDA backend (the slab hash) on 8-byte keys and
// values, beside the persistent hash table (the CUDA backend in mirror mode,
// pool on --pool-dir) on the same keys in the same run. Both are reached
// through the public API (DB::CreateTable, batches on gpkv::Table, Stats()
// properties); the slab hash's tables are volatile tables of a small pool in
// --pool-dir. The mixed batch, which gpkv::Table has no call for, goes
// through the slab hash's hook slab_hash::MixedBatch
// (tables/slab_hash/mixed_batch.h).
//
// For each key count (SlabBenchConfig::keys) and memory utilisation target
// (utilisation_percent; the table is sized for it with the model of
// slab_bench_sizing.h and the measured utilisation is printed beside it), a
// fresh table per phase and repeat:
//   - build: all keys inserted in batches of `batch` (device memory), the
//     same from host memory, and as one batch;
//   - search hit (every key), search miss (as many keys never inserted),
//     each in batches, device memory and host memory (hit);
//   - delete of every key, in batches;
//   - mixed concurrent batches (slab_hash::MixedBatch) on a table built in
//     batches: 10% inserts of new keys, 10% deletes, 40% search hits, 40%
//     search misses, shuffled within each batch, as many operations as keys.
// Then per key count: the same phases on the persistent table (mirror; its mixed batch
// runs as one Put, one Erase and one Get call), the growth cost (a slab hash
// created for kGrowthExpectedKeys keys, then the batched build: rate,
// rehashes and their seconds), and once per run the SlabAlloc allocation
// rate (SlabAlloc::TEST_AllocateMany, `allocations` allocations, to half of
// its capacity). Each phase is timed on the host around the synchronous
// calls (every call waits for its kernels), reported as the median of
// `repeats` runs in G operations per second; answers and key counts are
// checked after each phase (outside the timing). The goals of these rows are
// in docs/bench/targets.json.
//
// This header needs no CUDA: gpkv-bench includes it in every build; a build
// without the CUDA backend answers Unsupported.
//
// Who may call: bench/gpkv_bench_main.cc, tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gpkv/status.h"

namespace gpkv::bench::gpu {

// What one run measures. Defaults: the points the goals are read at (2^24
// and 2^26 keys, 60% utilisation among others).
struct SlabBenchConfig {
  std::vector<uint64_t> keys = {uint64_t{1} << 24, uint64_t{1} << 26};  // key counts
  std::vector<int> utilisation_percent = {20, 40, 60, 80};
  uint64_t batch = uint64_t{1} << 20;        // operations per batch (build, search, delete, mixed)
  int repeats = 3;                           // runs of each phase; the median is reported
  std::string pool_dir = "/dev/shm";         // pool files (created, then removed)
  uint64_t seed = 1;                         // keys, values and the mixed batches' order
  uint64_t allocations = uint64_t{1} << 24;  // SlabAlloc allocations per measurement
};

// The bounds ValidateSlabBenchConfig enforces.
inline constexpr int kSlabMinKeysLog2 = 10;
inline constexpr int kSlabMaxKeysLog2 = 28;
inline constexpr uint64_t kSlabMaxKeys = uint64_t{1} << kSlabMaxKeysLog2;
inline constexpr int kSlabMaxRepeats = 100;
// SlabAlloc's measurement allocates twice as many slabs (32 GiB at most).
inline constexpr uint64_t kSlabMaxAllocations = uint64_t{1} << 27;
// The growth measurement's table is created for this many keys.
inline constexpr uint64_t kGrowthExpectedKeys = 1024;

// Whether this build can run the slab suite (the CUDA backend was built).
bool SlabBenchBuiltIn();

// OK when `config` can run here as far as the build can tell (a device is
// looked for only by RunSlabBench). InvalidArgument naming the option for a
// bad value; Unsupported in a build without the CUDA backend.
Status ValidateSlabBenchConfig(const SlabBenchConfig& config);

// Runs the benchmark. Progress lines ("# ...") and then the tables go to
// `text`; `json_lines` receives one JSON object per line per measurement and
// target. Unsupported when no CUDA device is usable; any other error stops
// the run. REQUIRES: ValidateSlabBenchConfig(config).ok().
Status RunSlabBench(const SlabBenchConfig& config, std::FILE* text, std::string* json_lines);

}  // namespace gpkv::bench::gpu
