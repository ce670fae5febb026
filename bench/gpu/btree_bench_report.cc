// The btree suite's lines (see btree_bench_report.h).
#include "bench/gpu/btree_bench_report.h"

#include <cinttypes>
#include <cstdio>
#include <string>

namespace gpkv::bench::gpu {
namespace {

// A rate or ratio as JSON writes it: six significant digits.
std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

}  // namespace

double BtreeRow::snapshot_cost() const {
  return without.empty() || mops <= 0 ? 0 : without_mops / mops;
}

std::string BtreeTextHeader() {
  char line[128];
  std::snprintf(line, sizeof(line), "%-14s %10s  %-26s %12s  %s\n", "system", "keys", "operation",
                "M ops/s", "snapshot cost");
  return line;
}

std::string BtreeTextLine(const BtreeRow& row) {
  char line[192];
  int length = std::snprintf(line, sizeof(line), "%-14s %10" PRIu64 "  %-26s %12.1f",
                             row.system.c_str(), row.keys, row.operation.c_str(), row.mops);
  if (!row.without.empty() && length > 0 && length < static_cast<int>(sizeof(line))) {
    std::snprintf(line + length, sizeof(line) - length, "  %.2fx", row.snapshot_cost());
  }
  return std::string(line) + "\n";
}

std::string BtreeJsonLine(const BtreeRow& row) {
  std::string json =
      "{\"kind\":\"btree\",\"system\":\"" + row.system + "\",\"keys\":" + std::to_string(row.keys) +
      ",\"operation\":\"" + row.operation + "\",\"operations\":" + std::to_string(row.operations) +
      ",\"batch\":" + std::to_string(row.batch) + ",\"batches\":\"" +
      (row.device_batches ? "device" : "host") + "\",\"gops\":" + std::to_string(row.mops / 1000);
  if (!row.without.empty()) {
    json += ",\"without\":\"" + row.without + "\",\"snapshot_cost\":" + Number(row.snapshot_cost());
  }
  return json + "}\n";
}

}  // namespace gpkv::bench::gpu
