#include "tables/btree/table.h"

#include "tables/btree/cpu/backend.h"
#include "tables/stats_builder.h"

namespace gpkv::btree {

Result<std::unique_ptr<Table>> OpenEmptyTable(const std::string& where, const std::string& name,
                                              const TableOptions& options, gpkv::Backend backend,
                                              int cpu_threads) {
  if (backend == gpkv::Backend::kCuda) {
    return Status::Unsupported(where +
                               ": volatile ordered tables have no GPU backend yet; they run on "
                               "the CPU backend");
  }
  return tables::OpenFront<BtreeTable>(where, name, options,
                                       cpu::CreateCpuBackend(options, cpu_threads));
}

TableStats PublicStats(const Stats& stats) {
  tables::StatsBuilder out(kFamilyName, TableKind::kOrdered, Durability::kVolatile, stats.keys,
                           stats.bytes);
  out.Add("versions", static_cast<double>(stats.versions));
  out.Add("tombstones", static_cast<double>(stats.tombstones));
  out.Add("snapshots", static_cast<double>(stats.snapshots));
  out.Add("reclaimed", static_cast<double>(stats.reclaimed));
  out.Add("timestamp", static_cast<double>(stats.timestamp));
  return out.Take();
}

BtreeTable::BtreeTable(std::string where, std::string name, TableOptions options,
                       std::unique_ptr<Backend> backend)
    : FamilyTable(std::move(name), options),
      core_(std::move(where), this, options.key_size, options.value_size, std::move(backend)) {}

Status BtreeTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions&) {
  return core_.Put(keys.bytes(), values.bytes(), CountOf(keys));
}

Status BtreeTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                       const BatchOptions& options) {
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  return core_.Get(keys.bytes(), values.bytes(), found_bytes, CountOf(keys), options.snapshot);
}

Status BtreeTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions&) {
  uint8_t* erased_bytes = erased.empty() ? nullptr : erased.bytes();
  return core_.Erase(keys.bytes(), erased_bytes, CountOf(keys));
}

Status BtreeTable::Count(ConstBytes lo, ConstBytes hi, MutableBytes counts,
                         const BatchOptions& options) {
  auto* out = static_cast<uint64_t*>(counts.data());
  return core_.Count(lo.bytes(), hi.bytes(), out, CountOf(lo), options.snapshot);
}

Status BtreeTable::Range(ConstBytes lo, ConstBytes hi, RangeResults* results,
                         const BatchOptions& options) {
  return core_.Range(lo.bytes(), hi.bytes(), results, CountOf(lo), options.snapshot);
}

Status BtreeTable::RangeOnDevice(ConstBytes lo, ConstBytes hi, DeviceRangeResults* results,
                                 const BatchOptions& options) {
  const Status status =
      core_.RangeOnDevice(lo.bytes(), hi.bytes(), results, CountOf(lo), options.snapshot);
  // A backend without GPU memory: the table's own message.
  if (status.IsUnsupported()) return Table::RangeOnDevice(lo, hi, results, options);
  return status;
}

Status BtreeTable::Successor(ConstBytes keys, MutableBytes next_keys, MutableBytes values,
                             MutableBytes found, const BatchOptions& options) {
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  return core_.Successor(keys.bytes(), next_keys.bytes(), values.bytes(), found_bytes,
                         CountOf(keys), options.snapshot);
}

Status BtreeTable::Predecessor(ConstBytes keys, MutableBytes previous_keys, MutableBytes values,
                               MutableBytes found, const BatchOptions& options) {
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  return core_.Predecessor(keys.bytes(), previous_keys.bytes(), values.bytes(), found_bytes,
                           CountOf(keys), options.snapshot);
}

Status BtreeTable::Compact() { return core_.Compact(); }

Result<std::unique_ptr<Snapshot>> BtreeTable::TakeSnapshot() { return core_.TakeSnapshot(); }

Result<TableStats> BtreeTable::Stats() {
  auto stats = core_.Stats();
  if (!stats.ok()) return stats.status();
  return PublicStats(*stats);
}

Status BtreeTable::Scan(const ScanVisitor& visit) { return core_.Scan(visit); }

}  // namespace gpkv::btree
