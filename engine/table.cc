// The non-virtual parts of the public gpkv::Table and gpkv::TableStats.
#include "gpkv/table.h"

namespace gpkv {

std::optional<double> TableStats::Property(std::string_view name) const {
  for (const TableProperty& property : properties) {
    if (property.name == name) return property.value;
  }
  return std::nullopt;
}

Result<double> Table::GetProperty(std::string_view name) {
  Result<TableStats> stats = Stats();
  if (!stats.ok()) return stats.status();
  std::optional<double> value = stats->Property(name);
  if (!value) {
    return Status::NotFound("table '" + this->name() + "' (" + stats->family + "): no property '" +
                            std::string(name) + "'");
  }
  return *value;
}

}  // namespace gpkv
