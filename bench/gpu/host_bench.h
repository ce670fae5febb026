// The host-batch section of `gpkv-bench --suite gpu` (mode "host"; mode
// "host-tables": its logged and ordered tables alone): batches
// whose keys and answers live in host memory, as a database process hands
// them over, through
//   - the engine (gpkv::DB + Table) on the CUDA backend (the mode kAuto
//     picks: mirror for an index that fits in GPU memory) and on the CPU
//     backend (all hardware threads);
//   - the engine on the CUDA backend in direct, mirror and staged mode
//     (Options::hash_gpu), and in mirror mode with the pipeline off ("mirror
//     legacy": HashGpuOptions::host_lanes 0, one stream, pageable copies) as
//     the before-row of the same run;
//   - a logged hash table and an ordered table on the CUDA backend
//     (gpu_modes.h: modes logged and ordered), beside them on the same keys,
//     the logged table also with every record written by the host;
// each with pageable, registered (DB::RegisterHostMemory)
// and device buffers, YCSB C (uniform gets) and YCSB A (half gets, half
// updates, uniform) at batches of 2^20 and 4096, batch-size sweeps
// 2^8..2^22 through the engine with p50 / p99 batch latency, 4096-op batches
// from several caller threads at once, and mirror mode's pipeline chunk size
// and lane count. The goals of these rows are in docs/bench/targets.json.
//
// Who may call: gpu_bench_run.cu. CUDA build only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gpkv/status.h"

namespace gpkv::bench::gpu {

// One measured point of the section.
struct HostRow {
  std::string table;     // "engine cuda", "engine cpu", "mirror", "mirror legacy", ...
  std::string memory;    // "pageable", "registered", "device"
  std::string workload;  // "C", "A", "LOAD"
  uint64_t batch = 0;
  int callers = 1;  // threads calling the table at once
  uint64_t ops = 0;
  double seconds = 0;  // wall time of all batches
  double p50_us = 0;   // batch latency (A: a get batch and its update batch)
  double p99_us = 0;
  double mops() const { return seconds > 0 ? static_cast<double>(ops) / seconds / 1e6 : 0; }
};

// Runs the section (`tables_only`: the logged and ordered tables' part) with
// `keys` records in pools under `dir`; progress lines go to `text`, the rows
// to *rows. Then prints the rows.
Status RunHostBatches(uint64_t keys, const std::string& dir, bool tables_only, std::FILE* text,
                      std::vector<HostRow>* rows);

// One JSON object per row ("kind":"host").
std::string HostJsonLines(const std::string& device, uint64_t keys,
                          const std::vector<HostRow>& rows);

}  // namespace gpkv::bench::gpu
