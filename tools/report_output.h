// Prints a recovery::Report (of `gpkv verify` or `gpkv repair`) for people or
// as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "recovery/report.h"

namespace gpkv::tools {

// The whole report as JSON: path, counts, "tables" (each with its "name" and
// "id", as `gpkv tables` prints them) and "findings" (each with "severity":
// "info" | "recoverable" | "corruption", "region", "offset" and "message").
nlohmann::ordered_json ReportJson(const recovery::Report& report);

// Findings, one per line, then per-table lines.
void PrintFindingsText(const recovery::Report& report);

// "N corruption, N recoverable, N info".
std::string FindingCounts(const recovery::Report& report);

// Whether repair changed the pool (run on a copy: would change it): a count
// or a finding of what it did.
bool RepairChanged(const recovery::Report& report);

// The counts of what repair changed, one "name  N" line each.
void PrintRepairCounts(const recovery::Report& report);

}  // namespace gpkv::tools
