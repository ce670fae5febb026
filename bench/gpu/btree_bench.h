// The benchmark of the volatile ordered table, `gpkv-bench --suite btree`:
// the GPU B-tree (a volatile ordered table on the CUDA backend) on 8-byte
// keys and values, beside the persistent ordered table (the LSM, CUDA
// backend, pool in --pool-dir) and the volatile slab hash on the same keys
// in the same run, all through the public API (DB::CreateTable, batches on
// gpkv::Table). Keys are distinct random 64-bit values.
//
// For each key count (BtreeBenchConfig::keys) and batch size
// (BtreeBenchConfig::batches), a fresh table per system and repeat:
//   - bulk build: all keys in one Put (the B-tree builds its leaves from the
//     sorted batch);
//   - insert: half the keys in one Put, then the other half in batches of
//     `batch`;
//   - get: every key, shuffled, in batches;
//   - range ~8 and ~32: as many queries as keys / 8, each [k, k + span] with
//     the span that holds 8 (32) keys on average, in batches, through
//     RangeOnDevice (results in GPU memory) where the table has it;
//   - erase: every key, in batches;
//   - the snapshot rows (the B-tree only): update (a Put over every key, in
//     batches) without a snapshot; then with a snapshot held: update, get
//     (after every key was updated), insert (the second half, into the first
//     and its snapshot), erase (every key); and on the snapshot (every key
//     updated after it): get, range ~8, range ~32. Each snapshot row gives
//     its cost: the time of the same operation without a snapshot (the
//     update row, or the phases above, at the same key count and batch size)
//     over its own.
// The slab hash runs bulk build, insert, get and erase; the LSM all but the
// snapshot rows. A peer that runs out of GPU memory is left out of that
// point with a line saying so; the B-tree's own failure ends the run.
// Batches come from host memory, or with `device_batches`
// (--device-batches) from GPU memory: the keys, values, range bounds and
// get answers copied there (or allocated) before any timing, every system
// reading and answering in place (RangeOnDevice's results stay on the
// device either way). Each phase is timed on the host around the
// synchronous calls, reported as the median of `repeats` runs in M
// operations (range: queries) per second (JSON: "gops", G per second, with
// "batch" and "batches": "host" or "device"; snapshot rows "without" and
// "snapshot_cost", btree_bench_report.h); answers are checked outside the
// timing.
//
// GPU memory: one system's table at a time (each closed before the next),
// beside the batch arrays in device batches (37 bytes a key).
//
// This header needs no CUDA: gpkv-bench includes it in every build.
//
// Who may call: bench/gpkv_bench_main.cc, tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gpkv/status.h"

namespace gpkv::bench::gpu {

struct BtreeBenchConfig {
  std::vector<uint64_t> keys = {uint64_t{1} << 20, uint64_t{1} << 22, uint64_t{1} << 24};
  // Operations per batch: every phase runs at each size.
  std::vector<uint64_t> batches = {uint64_t{1} << 20};
  bool device_batches = false;        // batch arrays in GPU memory
  int repeats = 3;                    // runs of each phase; the median is reported
  std::string pool_dir = "/dev/shm";  // pool files (created, then removed)
  uint64_t seed = 1;
};

// The key counts the suite runs (--keys-log2 bounds).
inline constexpr int kBtreeMinKeysLog2 = 10;
inline constexpr int kBtreeMaxKeysLog2 = 26;

// Whether this build can run the btree suite (the CUDA backend was built).
bool BtreeBenchBuiltIn();

// OK when `config` can run here as far as the build can tell.
// InvalidArgument naming the option for a bad value; Unsupported in a build
// without the CUDA backend.
Status ValidateBtreeBenchConfig(const BtreeBenchConfig& config);

// Runs the benchmark: progress lines ("# ...") and the table to `text`, one
// JSON object per measurement and line to `json_lines`. Unsupported when no
// CUDA device is usable. REQUIRES: ValidateBtreeBenchConfig(config).ok().
Status RunBtreeBench(const BtreeBenchConfig& config, std::FILE* text, std::string* json_lines);

}  // namespace gpkv::bench::gpu
