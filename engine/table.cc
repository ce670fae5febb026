// The non-virtual parts of the public gpkv::Table and gpkv::TableStats.
#include "gpkv/table.h"

namespace gpkv {

std::optional<double> TableStats::Property(std::string_view name) const {
  for (const TableProperty& property : properties) {
    if (property.name == name) return property.value;
  }
  return std::nullopt;
}

namespace {

Status NotOrdered(const Table& table, const char* call) {
  return Status::Unsupported("table '" + table.name() + "' is a hash table: " + call +
                             " needs an ordered table (TableKind::kOrdered)");
}

}  // namespace

Status Table::Write(ConstBytes, ConstBytes, ConstBytes, MutableBytes, const BatchOptions&) {
  return Status::Unsupported("table '" + name() + "': its family takes no Write batches");
}
Status Table::Count(ConstBytes, ConstBytes, MutableBytes, const BatchOptions&) {
  return NotOrdered(*this, "Count");
}
Status Table::Range(ConstBytes, ConstBytes, RangeResults*, const BatchOptions&) {
  return NotOrdered(*this, "Range");
}
Status Table::RangeOnDevice(ConstBytes, ConstBytes, DeviceRangeResults*, const BatchOptions&) {
  return Status::Unsupported("table '" + name() +
                             "': RangeOnDevice needs an ordered table on a CUDA backend");
}
Status Table::Successor(ConstBytes, MutableBytes, MutableBytes, MutableBytes, const BatchOptions&) {
  return NotOrdered(*this, "Successor");
}
Status Table::Predecessor(ConstBytes, MutableBytes, MutableBytes, MutableBytes,
                          const BatchOptions&) {
  return NotOrdered(*this, "Predecessor");
}
Result<std::unique_ptr<Iterator>> Table::NewIterator(const IteratorOptions&) {
  return NotOrdered(*this, "NewIterator");
}
Status Table::Compact() { return NotOrdered(*this, "Compact"); }
Result<std::unique_ptr<Snapshot>> Table::TakeSnapshot() {
  return Status::Unsupported("table '" + name() +
                             "': snapshots need a volatile ordered table (TableKind::kOrdered, "
                             "Durability::kVolatile)");
}
Status Table::Close() { return Status::OK(); }
Status Table::Synchronize(void*) { return Status::OK(); }

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
