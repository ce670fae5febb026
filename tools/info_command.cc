// `gpkv info POOL [--json]`: facts about the pool (PoolInfo), and of each
// table where it lives in the pool (its root and extents, DB::TableExtents)
// and its counters (TableStats).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "tables/registry.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/table_json.h"

namespace gpkv::tools {
namespace {

struct InfoArgs {
  PoolArgs pool;
  bool json = false;
};

// One table as info shows it: the catalog's description and, when the table
// could be opened, its counters.
struct TableReport {
  TableInfo info;
  bool has_extents = false;
  std::vector<TableExtentInfo> extents;
  bool has_stats = false;
  TableStats stats;
  bool damaged = false;  // OpenTable found its bytes corrupt
  std::string error;     // why there are no stats
};

// Counts print as integers, ratios with three decimals.
bool IsWhole(double value) { return value >= 0 && value < 9.0e15 && value == std::floor(value); }

std::string PropertyText(double value) {
  char text[64];
  if (IsWhole(value)) {
    std::snprintf(text, sizeof(text), "%llu", static_cast<unsigned long long>(value));
  } else {
    std::snprintf(text, sizeof(text), "%.3f", value);
  }
  return text;
}

void PrintPoolText(const PoolInfo& pool, size_t table_count) {
  std::printf("pool           %s\n", pool.path.c_str());
  std::printf("uuid           %s\n", pool.uuid.c_str());
  std::printf("format         %u\n", pool.format_version);
  std::printf("size           %s (%llu bytes)\n", HumanBytes(pool.pool_size).c_str(),
              static_cast<unsigned long long>(pool.pool_size));
  std::printf("heap           %s\n", HumanBytes(pool.heap_bytes).c_str());
  double used_percent =
      pool.heap_bytes ? 100.0 * static_cast<double>(pool.used_bytes) / pool.heap_bytes : 0.0;
  std::printf("used           %s (%.1f%%) in %llu extents\n", HumanBytes(pool.used_bytes).c_str(),
              used_percent, static_cast<unsigned long long>(pool.extents));
  std::printf("superblock     generation %llu\n",
              static_cast<unsigned long long>(pool.superblock_generation));
  std::printf("pmem mapping   %s\n", pool.is_pmem ? "yes" : "no");
  std::printf("backend        %s\n", pool.backend.c_str());
  std::printf("tables         %zu\n", table_count);
}

void PrintTableText(const TableReport& table) {
  const TableOptions& options = table.info.options;
  std::printf("\ntable '%s' (id %llu): %s, %s, key %u B, value %u B\n", table.info.name.c_str(),
              static_cast<unsigned long long>(table.info.id), KindName(options.kind),
              DurabilityName(options.durability), options.key_size, options.value_size);
  if (const tables::TableFamily* family = tables::FindFamily(options.kind, options.durability)) {
    for (const tables::InfoLine& line : family->cli().InfoLines(options)) {
      std::printf("  %-12s %s\n", line.label.c_str(), line.text.c_str());
    }
  }
  if (options.durability == Durability::kVolatile) {
    std::printf("  volatile     contents live in memory, empty after reopen; expected keys %llu\n",
                static_cast<unsigned long long>(options.expected_keys));
  } else {
    std::printf("  root         offset 0x%llx\n",
                static_cast<unsigned long long>(table.info.root_offset));
  }
  if (table.has_extents && !table.extents.empty()) {
    uint64_t bytes = 0;
    for (const TableExtentInfo& extent : table.extents) bytes += extent.length;
    std::printf("  extents      %zu, %s (--json lists them)\n", table.extents.size(),
                HumanBytes(bytes).c_str());
  }
  if (table.damaged) {
    std::printf("  damaged      %s\n", table.error.c_str());
    return;
  }
  if (!table.has_stats) {
    std::printf("  stats        unavailable: %s\n", table.error.c_str());
    return;
  }
  const TableStats& stats = table.stats;
  std::printf("  family       %s\n", stats.family.c_str());
  // Where the engine runs the table, and why on the CPU when it fell back.
  if (!stats.backend.empty()) std::printf("  backend      %s\n", stats.backend.c_str());
  if (stats.device >= 0) {
    std::printf("  device       %d\n", stats.device);
  } else {
    std::printf("  device       none\n");
  }
  if (!stats.mode.empty()) std::printf("  mode         %s\n", stats.mode.c_str());
  if (!stats.fallback.empty()) std::printf("  fallback     %s\n", stats.fallback.c_str());
  std::printf("  keys         %llu\n", static_cast<unsigned long long>(stats.keys));
  std::printf("  bytes        %s\n", HumanBytes(stats.bytes).c_str());
  int name_width = 24;  // the values line up, as far as the longest name allows
  for (const TableProperty& property : stats.properties) {
    name_width = std::max(name_width, static_cast<int>(property.name.size()));
  }
  for (const TableProperty& property : stats.properties) {
    std::printf("  %-*s %s\n", name_width, property.name.c_str(),
                PropertyText(property.value).c_str());
  }
}

nlohmann::ordered_json PoolJson(const PoolInfo& pool) {
  return {{"path", pool.path},
          {"uuid", pool.uuid},
          {"format_version", pool.format_version},
          {"pool_size", pool.pool_size},
          {"heap_bytes", pool.heap_bytes},
          {"used_bytes", pool.used_bytes},
          {"extents", pool.extents},
          {"superblock_generation", pool.superblock_generation},
          {"is_pmem", pool.is_pmem},
          {"backend", pool.backend}};
}

nlohmann::ordered_json ExtentsJson(const std::vector<TableExtentInfo>& extents) {
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const TableExtentInfo& extent : extents) {
    json.push_back({{"offset", extent.offset}, {"length", extent.length}, {"kind", extent.kind}});
  }
  return json;
}

nlohmann::ordered_json StatsJson(const TableStats& stats) {
  nlohmann::ordered_json properties = nlohmann::ordered_json::object();
  for (const TableProperty& property : stats.properties) {
    if (IsWhole(property.value)) {
      properties[property.name] = static_cast<uint64_t>(property.value);
    } else {
      properties[property.name] = property.value;
    }
  }
  nlohmann::ordered_json json = {{"family", stats.family}};
  if (!stats.backend.empty()) json["backend"] = stats.backend;
  // The CUDA device, or null on the CPU; the family's mode, or "".
  json["device"] = stats.device >= 0 ? nlohmann::ordered_json(stats.device) : nullptr;
  json["mode"] = stats.mode;
  if (!stats.fallback.empty()) json["fallback"] = stats.fallback;
  json["keys"] = stats.keys;
  json["bytes"] = stats.bytes;
  json["properties"] = std::move(properties);
  return json;
}

int RunInfo(const InfoArgs& args) {
  Result<std::unique_ptr<DB>> db = OpenPool(args.pool);
  if (!db.ok()) return FailOpen("info", args.pool.path, db.status());
  Result<PoolInfo> pool = (*db)->Info();
  if (!pool.ok()) return Fail("info", pool.status());
  Result<std::vector<TableInfo>> infos = (*db)->ListTables();
  if (!infos.ok()) return Fail("info", infos.status());

  int exit_code = kExitOk;
  std::vector<TableReport> tables;
  for (const TableInfo& info : *infos) {
    TableReport report;
    report.info = info;
    // A damaged table's root may not name its extents: it has none listed.
    Result<std::vector<TableExtentInfo>> extents = (*db)->TableExtents(info.name);
    if (extents.ok()) {
      report.has_extents = true;
      report.extents = std::move(*extents);
    }
    Result<Table*> table = (*db)->OpenTable(info.name);
    Result<TableStats> stats = table.ok() ? (*table)->Stats() : Result<TableStats>(table.status());
    if (stats.ok()) {
      report.has_stats = true;
      report.stats = *stats;
    } else {
      report.damaged = stats.status().IsCorruption();
      report.error = ErrorText(stats.status());
      PrintError("info", "table '" + info.name + "': " + report.error);
      if (exit_code == kExitOk) exit_code = ExitCodeFor(stats.status());
    }
    tables.push_back(std::move(report));
  }

  if (args.json) {
    nlohmann::ordered_json out = {{"pool", PoolJson(*pool)},
                                  {"tables", nlohmann::ordered_json::array()}};
    for (const TableReport& table : tables) {
      nlohmann::ordered_json entry = TableInfoJson(table.info);
      entry["damaged"] = table.damaged;
      if (table.has_extents) entry["extents"] = ExtentsJson(table.extents);
      if (table.has_stats) {
        entry["stats"] = StatsJson(table.stats);
      } else {
        entry["error"] = table.error;
      }
      out["tables"].push_back(std::move(entry));
    }
    std::printf("%s\n",
                out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else {
    PrintPoolText(*pool, tables.size());
    for (const TableReport& table : tables) PrintTableText(table);
  }
  return exit_code;
}

}  // namespace

void RegisterInfoCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "show the pool and the counters of every table");
  std::string footer =
      "Pool: size, heap use, extents, superblock generation, mapping and backend.\n"
      "Tables: kind, family, sizes, geometry, root offset and extents (--json: \"root_offset\"\n"
      "and \"extents\", each with \"offset\", \"length\" and \"kind\": table-root, bucket-level,\n"
      "value-chunk or other), keys, bytes, and the family's properties:\n";
  for (const tables::TableFamily* family : tables::Families()) {
    footer += family->cli().PropertiesHelp() + std::string(".\n");
  }
  footer +=
      "A volatile table's bytes are the memory it holds (GPU memory or RAM), not pool\n"
      "bytes; it is empty at every open, so info shows it empty.\n"
      "A table whose bytes are corrupt is listed as damaged (\"damaged\": true in JSON,\n"
      "with the error); the other tables are shown as usual and the exit code is 2.";
  cmd->footer(footer);
  AddPoolArgs(cmd, &args->pool, /*can_write=*/false);
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->callback([args, exit_code]() { *exit_code = RunInfo(*args); });
}

}  // namespace gpkv::tools
