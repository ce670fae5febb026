#include "tools/report_output.h"

#include <cstdio>
#include <string>

namespace gpkv::tools {
namespace {

using recovery::Finding;

const char* SeverityName(Finding::Severity severity) {
  switch (severity) {
    case Finding::Severity::kInfo:
      return "info";
    case Finding::Severity::kRecoverable:
      return "recoverable";
    case Finding::Severity::kCorruption:
      return "corruption";
  }
  return "unknown";
}

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

nlohmann::ordered_json ReportJson(const recovery::Report& report) {
  nlohmann::ordered_json json = {{"path", report.path},
                                 {"corruption", report.HasCorruption()},
                                 {"extents", report.extents},
                                 {"used_bytes", report.used_bytes},
                                 {"superblock_generation", report.superblock_generation},
                                 {"slots_cleared", report.slots_cleared},
                                 {"duplicates_removed", report.duplicates_removed},
                                 {"cells_reclaimed", report.cells_reclaimed},
                                 {"extents_freed", report.extents_freed},
                                 {"tables_dropped", report.tables_dropped},
                                 {"tables", nlohmann::ordered_json::array()},
                                 {"findings", nlohmann::ordered_json::array()}};
  for (const recovery::TableReport& table : report.tables) {
    json["tables"].push_back({{"name", table.name},
                              {"id", table.table_id},
                              {"keys", table.keys},
                              {"slots_scanned", table.slots_scanned},
                              {"reserved_slots", table.reserved_slots},
                              {"duplicate_slots", table.duplicate_slots},
                              {"value_cells_in_use", table.value_cells_in_use},
                              {"value_cells_unreferenced", table.value_cells_unreferenced},
                              {"resizing", table.resizing}});
  }
  for (const Finding& finding : report.findings) {
    json["findings"].push_back({{"severity", SeverityName(finding.severity)},
                                {"region", finding.region},
                                {"offset", finding.offset},
                                {"message", finding.message}});
  }
  return json;
}

void PrintFindingsText(const recovery::Report& report) {
  for (const Finding& finding : report.findings) {
    // The message names file, region and offset already; fall back on the
    // region when a finding carries none.
    std::string text = finding.message.empty()
                           ? finding.region + " (offset " + Hex(finding.offset) + ")"
                           : finding.message;
    // A message made from a Status starts with its code name ("corruption: ...");
    // the severity column says it already.
    std::string severity_prefix = std::string(SeverityName(finding.severity)) + ": ";
    if (text.rfind(severity_prefix, 0) == 0) text.erase(0, severity_prefix.size());
    std::printf("%-11s  %s\n", SeverityName(finding.severity), text.c_str());
  }
  for (const recovery::TableReport& table : report.tables) {
    std::printf("table '%s': %llu keys, %llu slots scanned, %llu reserved, %llu duplicate%s",
                table.name.c_str(), static_cast<unsigned long long>(table.keys),
                static_cast<unsigned long long>(table.slots_scanned),
                static_cast<unsigned long long>(table.reserved_slots),
                static_cast<unsigned long long>(table.duplicate_slots),
                table.resizing ? ", resize in progress" : "");
    if (table.value_cells_in_use || table.value_cells_unreferenced) {
      std::printf(", value cells %llu in use / %llu unreferenced",
                  static_cast<unsigned long long>(table.value_cells_in_use),
                  static_cast<unsigned long long>(table.value_cells_unreferenced));
    }
    std::printf("\n");
  }
}

std::string FindingCounts(const recovery::Report& report) {
  uint64_t counts[3] = {0, 0, 0};
  for (const Finding& finding : report.findings) {
    switch (finding.severity) {
      case Finding::Severity::kCorruption:
        ++counts[0];
        break;
      case Finding::Severity::kRecoverable:
        ++counts[1];
        break;
      case Finding::Severity::kInfo:
        ++counts[2];
        break;
    }
  }
  return std::to_string(counts[0]) + " corruption, " + std::to_string(counts[1]) +
         " recoverable, " + std::to_string(counts[2]) + " info";
}

bool RepairChanged(const recovery::Report& report) {
  return report.slots_cleared || report.duplicates_removed || report.cells_reclaimed ||
         report.extents_freed || report.tables_dropped || !report.findings.empty();
}

void PrintRepairCounts(const recovery::Report& report) {
  auto line = [](const char* name, uint64_t count) {
    std::printf("%-19s %llu\n", name, static_cast<unsigned long long>(count));
  };
  line("slots cleared", report.slots_cleared);
  line("duplicates removed", report.duplicates_removed);
  line("cells reclaimed", report.cells_reclaimed);
  line("extents freed", report.extents_freed);
  line("tables dropped", report.tables_dropped);
}

}  // namespace gpkv::tools
