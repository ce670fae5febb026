// The GPU micro-benchmarks of `gpkv-bench --suite gpu`: the CUDA backend of
// persistent hash tables in direct, mirror and staged mode, next to the link
// it runs over. Every gpkv table is reached through the public API (DB::Open,
// CreateTable, batches on gpkv::Table, its Stats() properties;
// bench/gpu/api_table.h), so the numbers are what a user gets.
//
//   1. link calibration: random 8-byte reads / CAS / stores of a registered
//      tmpfs mapping vs HBM, at 256 MiB, 512 MiB, 1 GiB, 4 GiB and the
//      table's index size;
//   2. per mode (GpuBenchConfig::modes; bench/gpu/gpu_modes.h: direct,
//      mirror and staged with options after '+', the CPU backend on all
//      hardware threads, the naive baseline of bench/gpu/naive_table.h):
//      YCSB LOAD (puts of `keys` new records), then for each batch size
//      YCSB C gets (uniform, scrambled zipfian 0.99), uniform updates and
//      YCSB A (half gets, half updates; uniform and zipfian); GPU batches in
//      device memory, plus one host-memory get point and a reopen; CPU
//      batches in host memory. A table with a BktCache warms it with 2^22
//      untimed operations of each point's workload first;
//   3. per mode, the load factor a table reaches before its first resize;
//   4. the model of pool transactions per operation of each mode, and the
//      modes' ratios to the naive baseline, the CPU backend and the link of
//      this run (the goals: docs/bench/targets.json).
//
// Keys and values are those of the other suites (bench/gpkv_bench_workload.h);
// every get batch's first answer set is checked against the records. The
// timed part of each point is an NVTX range "gpkv-timed" / "<what> batch <n>
// ops <m>", which scripts/gpu-pool-transactions.py reads from Nsight Compute.
//
// This header needs no CUDA: gpkv-bench includes it in every build, and a
// build without the CUDA backend answers Unsupported.
//
// Who may call: bench/gpkv_bench_main.cc, tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gpkv/status.h"

namespace gpkv::bench::gpu {

// What one run measures. Defaults are those of the benchmark's runs in
// docs/bench/gpu-backend.md.
struct GpuBenchConfig {
  uint64_t keys = uint64_t{1} << 24;  // records loaded
  std::string dir = "/dev/shm";       // pools, the naive table's and the calibration's files
  std::string staged_dir;             // staged mode's pool directory; empty: dir
  std::vector<int> batch_log2 = {12, 14, 16, 18, 20, 22};  // batch sizes, log2
  std::vector<std::string> modes = {"direct", "mirror", "staged", "cpu", "naive"};
  bool calibrate = true;  // measure the link first
};

// The most --batches may ask for: a point reads its operations from a fixed
// array of 2^25 (the timed first 2^23, the BktCache warm-up the rest).
inline constexpr int kMaxBatchLog2 = 22;

// Whether this build can run the GPU suite (the CUDA backend was built).
bool GpuBenchBuiltIn();

// OK when `config` can run here as far as the build can tell (a device is
// looked for only by RunGpuBench). InvalidArgument (naming the option) for
// a bad value; Unsupported in a build without the CUDA backend.
Status ValidateGpuBenchConfig(const GpuBenchConfig& config);

// Runs the benchmark. The report for people (progress lines "# ...", then
// the tables) goes to `text` as it is measured; `json_lines` receives one
// JSON object per line for each calibration, load factor and measurement.
// Unsupported when no CUDA device is usable; any other error stops the run.
// REQUIRES: ValidateGpuBenchConfig(config).ok().
Status RunGpuBench(const GpuBenchConfig& config, std::FILE* text, std::string* json_lines);

}  // namespace gpkv::bench::gpu
