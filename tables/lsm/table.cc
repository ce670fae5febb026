#include "tables/lsm/table.h"

#include "tables/lsm/root.h"

namespace gpkv::lsm {

TableStats PublicStats(const LsmStats& stats) {
  TableStats out;
  out.kind = TableKind::kOrdered;
  out.durability = Durability::kPersistent;
  out.family = kFamilyName;
  out.keys = stats.keys;
  out.bytes = kLsmRootSize + stats.log_capacity + stats.run_bytes;
  auto add = [&](const std::string& name, double value) {
    out.properties.push_back({std::string(kFamilyName) + "." + name, value});
  };
  add("batch-entries", static_cast<double>(stats.batch_entries));
  add("levels", stats.levels);
  add("runs", stats.runs);
  add("entries", static_cast<double>(stats.entries));
  add("buffer-entries", static_cast<double>(stats.buffer_entries));
  add("tombstones", static_cast<double>(stats.tombstones));
  add("dead-entries", static_cast<double>(stats.dead_entries));
  add("fill", stats.capacity == 0
                  ? 0.0
                  : static_cast<double>(stats.entries) / static_cast<double>(stats.capacity));
  add("compactions", static_cast<double>(stats.compactions));
  add("run-bytes", static_cast<double>(stats.run_bytes));
  add("log-bytes", static_cast<double>(stats.log_bytes));
  add("log-capacity", static_cast<double>(stats.log_capacity));
  for (size_t level = 0; level < stats.level_entries.size(); ++level) {
    add("level-" + std::to_string(level) + "-entries",
        static_cast<double>(stats.level_entries[level]));
  }
  return out;
}

LsmTable::LsmTable(std::string name, TableOptions options, std::unique_ptr<cpu::LsmCpu> backend)
    : name_(std::move(name)), options_(options), cpu_(std::move(backend)) {}

Status LsmTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions&) {
  return cpu_->Put(keys.bytes(), values.bytes(), CountOf(keys));
}

Status LsmTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                     const BatchOptions&) {
  cpu_->Get(keys.bytes(), values.bytes(), found.empty() ? nullptr : found.bytes(), CountOf(keys));
  return Status::OK();
}

Status LsmTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions&) {
  return cpu_->Erase(keys.bytes(), erased.empty() ? nullptr : erased.bytes(), CountOf(keys));
}

Status LsmTable::Count(ConstBytes lo, ConstBytes hi, MutableBytes counts, const BatchOptions&) {
  cpu_->Count(lo.bytes(), hi.bytes(), static_cast<uint64_t*>(counts.data()), CountOf(lo));
  return Status::OK();
}

Status LsmTable::Range(ConstBytes lo, ConstBytes hi, RangeResults* results, const BatchOptions&) {
  cpu_->Range(lo.bytes(), hi.bytes(), results, CountOf(lo));
  return Status::OK();
}

Status LsmTable::Successor(ConstBytes keys, MutableBytes next_keys, MutableBytes values,
                           MutableBytes found, const BatchOptions&) {
  cpu_->Successor(keys.bytes(), next_keys.bytes(), values.bytes(),
                  found.empty() ? nullptr : found.bytes(), CountOf(keys));
  return Status::OK();
}

Status LsmTable::Predecessor(ConstBytes keys, MutableBytes previous_keys, MutableBytes values,
                             MutableBytes found, const BatchOptions&) {
  cpu_->Predecessor(keys.bytes(), previous_keys.bytes(), values.bytes(),
                    found.empty() ? nullptr : found.bytes(), CountOf(keys));
  return Status::OK();
}

Status LsmTable::Compact() { return cpu_->Compact(); }

Result<TableStats> LsmTable::Stats() { return PublicStats(cpu_->Stats()); }

Status LsmTable::Scan(const ScanVisitor& visit) { return cpu_->Scan(visit); }

}  // namespace gpkv::lsm
