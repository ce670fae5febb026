// What the GPU suite measured (a row per point, a load factor per mode, the
// link calibration) and how it prints it: the tables for people and one JSON
// object per line for machines, in the format docs/bench/gpu-backend.md's
// runs recorded.
//
// Who may call: gpu_bench_run.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/gpu/link_calibration.h"

namespace gpkv::bench::gpu {

// Records per LOAD batch.
inline constexpr size_t kLoadBatch = size_t{1} << 20;

// Where a logged table's write batches of a point spent their time
// (the table's gphash.write-* properties over the point): batches timed,
// and microseconds per batch of the whole write and of each step
// (docs/ARCHITECTURE.md, "Logged hash tables"). batches 0: none (other
// tables, get points).
struct WritePhases {
  double batches = 0;
  double total_us = 0;
  double checkpoint_us = 0;    // the sum of the checkpoint's three steps:
  double scan_us = 0;          // the index's pairs taken, the image's extent reserved
  double wait_us = 0;          // waiting for the worker's image
  double ckpt_publish_us = 0;  // the checkpoint published
  double record_us = 0;
  double publish_us = 0;
  double sync_us = 0;
  double index_us = 0;
};

// One measured point.
struct Row {
  std::string mode;
  std::string workload;
  uint64_t batch = 0;
  uint64_t ops = 0;
  double seconds = 0;
  // Tables with a BktCache: the bucket reads of the point's gets that the
  // cache served, and those that crossed the link, per get (-1: none).
  double cache_reads_per_get = -1;
  double pool_reads_per_get = -1;
  WritePhases write_phases;
  double mops() const { return static_cast<double>(ops) / seconds / 1e6; }
};

// An open of a mode's loaded pool (for a logged table, with its log filled:
// the image read and the whole log replayed, as after a crash). The table's
// steps are those of a logged table (-1 for the other modes).
struct OpenRow {
  std::string mode;
  double seconds = 0;
  double log_fill = -1;  // the log's bytes over its capacity at the close
  double check_seconds = -1;
  double index_seconds = -1;
  double image_seconds = -1;
  double replay_seconds = -1;
};

// The load factor a mode's table reaches before its first resize.
struct LoadFactorRow {
  std::string mode;
  bool resized = false;
  double load_factor = 0;
  uint64_t batch = 0;  // precision: the size of the batch that resized
  uint64_t slots = 0;
};

// The tables after the run, in this order. index_bytes: the loaded table's
// index (its working set on the pool), marked in the link table.
void PrintLinkCalibration(const std::vector<LinkResult>& link, uint64_t index_bytes,
                          std::FILE* out);
void PrintTransactionModel(std::FILE* out);
void PrintRows(const std::vector<Row>& rows, std::FILE* out);
// The rows with write phases (logged tables' write points): microseconds per
// batch in each step.
void PrintWritePhases(const std::vector<Row>& rows, std::FILE* out);
// Each mode's YCSB A beside the naive baseline's at the same batch size.
void PrintNaiveRatios(const std::vector<Row>& rows, std::FILE* out);
// The logged and ordered modes' points beside mirror and direct mode's of
// the same workload and batch size.
void PrintTableModeRatios(const std::vector<Row>& rows, std::FILE* out);
// The GPU modes' YCSB C beside the CPU backend's, mirror mode's LOAD beside
// the link's store rate at the index's size, and each mode's load factor
// beside the CPU backend's.
void PrintCpuRatios(const std::vector<Row>& rows, const std::vector<LinkResult>& link,
                    const std::vector<LoadFactorRow>& load_factors, uint64_t index_bytes,
                    std::FILE* out);

// One JSON object per line: "link" per calibrated region ("index": whether
// it is the size of the loaded table's index), "load_factor" per mode,
// "table" per row (with "write_batches" and "write_us", microseconds per
// batch of each step, where the row has write phases), "open" per reopen.
std::string JsonLines(const std::string& device, uint64_t keys, const std::vector<LinkResult>& link,
                      uint64_t index_bytes, const std::vector<LoadFactorRow>& load_factors,
                      const std::vector<Row>& rows, const std::vector<OpenRow>& opens = {});

}  // namespace gpkv::bench::gpu
