#include "tables/table_check.h"

#include <cstdlib>

namespace gpkv::tables {

uint64_t OffsetNamedIn(const Status& status, uint64_t fallback) {
  const std::string& message = status.message();
  const size_t at = message.find("(offset 0x");
  if (at == std::string::npos) return fallback;
  return std::strtoull(message.c_str() + at + 10, nullptr, 16);
}

void CheckTableId(const pm::Pool& pool, const RootIdentity& view, uint64_t table_id,
                  recovery::Report& report) {
  if (view.table_id == table_id) return;
  const std::string region = view.TableRegion() + " root";
  report.findings.push_back({recovery::Finding::Severity::kCorruption, region, view.root_offset + 8,
                             pool.Where(region, view.root_offset + 8) +
                                 ": root belongs to table id " + std::to_string(view.table_id) +
                                 ", the catalog says " + std::to_string(table_id)});
}

void AppendTableReport(const RootIdentity& view, const std::vector<recovery::Finding>& findings,
                       uint64_t keys, recovery::Report& report) {
  for (const recovery::Finding& finding : findings) report.findings.push_back(finding);
  recovery::TableReport table;
  table.name = view.table_name;
  table.table_id = view.table_id;
  table.keys = keys;
  report.tables.push_back(table);
}

Status RequireWritable(const pm::Pool& pool) {
  if (!pool.read_only()) return Status::OK();
  return Status::InvalidArgument(pool.path() + ": repair needs the pool open writable");
}

}  // namespace gpkv::tables
