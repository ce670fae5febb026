// The slab suite's tables and JSON lines (see slab_bench_report.h).
#include "bench/gpu/slab_bench_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/gpu/slab_bench.h"

namespace gpkv::bench::gpu {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

double Rate(uint64_t ops, double seconds) {
  return seconds > 0 ? static_cast<double>(ops) / seconds / 1e9 : 0;
}

std::string Percent(double share) {
  if (share < 0) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", 100 * share);
  return text;
}

}  // namespace

double SlabRow::median_seconds() const { return Median(seconds); }
double SlabRow::gops() const { return Rate(ops, median_seconds()); }
double SlabAllocRow::median_seconds() const { return Median(seconds); }
double SlabAllocRow::gops() const { return Rate(allocations, median_seconds()); }

const SlabRow* FindGphashPeer(const std::vector<SlabRow>& rows, const SlabRow& row) {
  for (const SlabRow& peer : rows) {
    if (peer.system == kGphashSystem && peer.keys == row.keys && peer.workload == row.workload &&
        peer.memory == row.memory) {
      return &peer;
    }
  }
  return nullptr;
}

std::string KeyCountText(uint64_t keys) {
  if (keys != 0 && (keys & (keys - 1)) == 0) {
    int log2 = 0;
    while ((uint64_t{1} << log2) < keys) ++log2;
    return "2^" + std::to_string(log2);
  }
  return std::to_string(keys);
}

void PrintSlabReport(const std::vector<SlabRow>& rows, const SlabAllocRow* alloc, std::FILE* out) {
  std::fprintf(out,
               "\nG ops/s: operations per second / 10^9, median of the runs, timed on the host "
               "around\nthe synchronous calls. target / util: memory utilisation "
               "(slab_hash::Stats: pair bytes /\ntable bytes) asked for and measured after the "
               "build. memory: where the batches are (host:\ncopies to and from the device "
               "included). vs gphash: slab_hash / gphash-mirror on the same\nkeys and batches "
               "(gphash's mixed batch runs as one Put, one Erase and one Get call).\n");
  std::fprintf(out, "\n%-13s %5s %6s %6s %-17s %-6s %8s %9s %9s %9s\n", "system", "keys", "target",
               "util", "workload", "memory", "batch", "seconds", "G ops/s", "vs gphash");
  for (const SlabRow& row : rows) {
    if (row.workload == kGrowthBuild) continue;
    const std::string target =
        row.target_percent > 0 ? std::to_string(row.target_percent) + "%" : std::string("-");
    std::fprintf(out, "%-13s %5s %6s %6s %-17s %-6s %8llu %9.4f %9.3f", row.system.c_str(),
                 KeyCountText(row.keys).c_str(), target.c_str(), Percent(row.utilisation).c_str(),
                 row.workload.c_str(), row.memory.c_str(),
                 static_cast<unsigned long long>(row.batch), row.median_seconds(), row.gops());
    const SlabRow* peer = row.system == kSlabSystem ? FindGphashPeer(rows, row) : nullptr;
    if (peer != nullptr && peer->gops() > 0)
      std::fprintf(out, " %8.2fx", row.gops() / peer->gops());
    std::fprintf(out, "\n");
  }
  bool header = false;
  for (const SlabRow& row : rows) {
    if (row.workload != kGrowthBuild) continue;
    if (!header) {
      std::fprintf(
          out,
          "\ngrowth: a slab hash created for %llu keys, then the batched build (device "
          "memory; rehash secs: mean of the runs)\n%5s %8s %9s %9s %9s %13s %6s %9s %12s\n",
          static_cast<unsigned long long>(kGrowthExpectedKeys), "keys", "batch", "seconds",
          "G ops/s", "rehashes", "rehash secs", "share", "util", "buckets");
      header = true;
    }
    const double seconds = row.median_seconds();
    std::fprintf(out, "%5s %8llu %9.4f %9.3f %9llu %13.4f %6s %9s %12llu\n",
                 KeyCountText(row.keys).c_str(), static_cast<unsigned long long>(row.batch),
                 seconds, row.gops(), static_cast<unsigned long long>(row.rehashes),
                 row.rehash_seconds,
                 Percent(seconds > 0 ? row.rehash_seconds / seconds : -1).c_str(),
                 Percent(row.utilisation).c_str(), static_cast<unsigned long long>(row.buckets));
  }
  if (alloc != nullptr && !alloc->seconds.empty()) {
    std::fprintf(out,
                 "\nSlabAlloc: %llu allocations (TEST_AllocateMany, the slab hash's pattern) "
                 "from %u super blocks, %s full after: %.4f s = %.3f G allocations/s\n",
                 static_cast<unsigned long long>(alloc->allocations), alloc->super_blocks,
                 Percent(alloc->fill).c_str(), alloc->median_seconds(), alloc->gops());
  }
}

std::string SlabJsonLines(const std::string& device, const std::vector<SlabRow>& rows,
                          const SlabAllocRow* alloc) {
  std::string lines;
  for (const SlabRow& row : rows) {
    nlohmann::ordered_json json = {{"kind", "slab"},
                                   {"device", device},
                                   {"system", row.system},
                                   {"workload", row.workload},
                                   {"memory", row.memory},
                                   {"keys", row.keys},
                                   {"target_utilisation", row.target_percent / 100.0},
                                   {"utilisation", row.utilisation},
                                   {"load_factor", row.load_factor},
                                   {"buckets", row.buckets},
                                   {"batch", row.batch},
                                   {"ops", row.ops},
                                   {"repeats", row.seconds.size()},
                                   {"seconds", row.median_seconds()},
                                   {"seconds_each", row.seconds},
                                   {"gops", row.gops()}};
    if (row.system == kSlabSystem && (row.workload == kDelete || row.workload == kMixed)) {
      json["flushes"] = row.flushes;
    }
    if (row.workload == kGrowthBuild) {
      json["rehashes"] = row.rehashes;
      json["rehash_seconds"] = row.rehash_seconds;
    }
    const SlabRow* peer = row.system == kSlabSystem ? FindGphashPeer(rows, row) : nullptr;
    if (peer != nullptr && peer->gops() > 0) json["vs_gphash"] = row.gops() / peer->gops();
    lines += json.dump() + "\n";
  }
  if (alloc != nullptr && !alloc->seconds.empty()) {
    nlohmann::ordered_json json = {{"kind", "slab_alloc"},
                                   {"device", device},
                                   {"allocations", alloc->allocations},
                                   {"super_blocks", alloc->super_blocks},
                                   {"fill", alloc->fill},
                                   {"repeats", alloc->seconds.size()},
                                   {"seconds", alloc->median_seconds()},
                                   {"seconds_each", alloc->seconds},
                                   {"gops", alloc->gops()}};
    lines += json.dump() + "\n";
  }
  return lines;
}

}  // namespace gpkv::bench::gpu
