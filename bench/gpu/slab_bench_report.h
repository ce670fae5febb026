// What the slab suite measured (a row per point, the SlabAlloc rate) and how
// it prints it: the tables for people, with each row's ratio to the
// persistent hash table, and one JSON object per line for machines (the
// goals they are held to: docs/bench/targets.json).
//
// Plain C++, no CUDA: tests check the tables and the JSON without a device.
// Who may call: the slab suite (bench/gpu/slab_bench*), tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gpkv::bench::gpu {

// Systems of the rows.
inline constexpr const char* kSlabSystem = "slab_hash";
inline constexpr const char* kGphashSystem = "gphash-mirror";

// Workloads of the rows.
inline constexpr const char* kBuild = "build";
inline constexpr const char* kBuildOneBatch = "build (one batch)";
inline constexpr const char* kSearchHit = "search hit";
inline constexpr const char* kSearchMiss = "search miss";
inline constexpr const char* kDelete = "delete";
inline constexpr const char* kMixed = "mixed";
inline constexpr const char* kGrowthBuild = "build (growing)";

// One measured point: `repeats` runs of one phase on fresh tables.
struct SlabRow {
  std::string system;             // kSlabSystem or kGphashSystem
  std::string workload;           // one of the workloads above
  std::string memory = "device";  // where the batches were: "device" or "host"
  uint64_t keys = 0;              // the point's key count (keys built)
  int target_percent = 0;         // memory utilisation asked for; 0: none (gphash, growth)
  double utilisation = -1;        // measured after the build; -1: not known (gphash)
  double load_factor = -1;        // keys / slots after the build; -1: not known
  uint64_t buckets = 0;           // buckets (slab hash) after the build
  uint64_t batch = 0;             // operations per call
  uint64_t ops = 0;               // operations of one run
  std::vector<double> seconds;    // each run's time
  uint64_t flushes = 0;           // delete and mixed rows: list compactions the phase ran
  uint64_t rehashes = 0;          // growth rows: rehashes of the build (slab_hash::Stats)
  double rehash_seconds = 0;      // and their total time

  double median_seconds() const;
  double gops() const;  // ops / median_seconds, in 10^9 per second
};

// The SlabAlloc measurement.
struct SlabAllocRow {
  uint64_t allocations = 0;     // per run
  uint32_t super_blocks = 0;    // of the allocator
  double fill = 0;              // share of its slabs in use after a run
  std::vector<double> seconds;  // each run's allocation kernel time (events)
  double median_seconds() const;
  double gops() const;  // allocations / median_seconds, in 10^9 per second
};

// The persistent peer's row of the same key count, workload and memory as `row`, or
// nullptr.
const SlabRow* FindGphashPeer(const std::vector<SlabRow>& rows, const SlabRow& row);

// "2^24" for a power of two, else the number.
std::string KeyCountText(uint64_t keys);

// The tables: every row (with its ratio to the persistent peer), the growth
// rows, the SlabAlloc rate.
void PrintSlabReport(const std::vector<SlabRow>& rows, const SlabAllocRow* alloc, std::FILE* out);

// One JSON object per line: "slab" per row, "slab_alloc".
std::string SlabJsonLines(const std::string& device, const std::vector<SlabRow>& rows,
                          const SlabAllocRow* alloc);

}  // namespace gpkv::bench::gpu
