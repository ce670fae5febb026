#include "tables/btree/table.h"

#include <vector>

#include "tables/btree/cpu/backend.h"
#include "tables/stats_builder.h"
#include "tables/write_batch.h"

namespace gpkv::btree {

Result<std::unique_ptr<Table>> OpenEmptyTable(const std::string& where, const std::string& name,
                                              const TableOptions& options, gpkv::Backend backend,
                                              int cpu_threads, int /*cuda_device*/) {
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
    : OrderedFamilyTable(std::move(name), options),
      core_(std::move(where), this, options.key_size, options.value_size, std::move(backend)) {}

Status BtreeTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions&) {
  return core_.Put(keys.bytes(), values.bytes(), CountOf(keys));
}

Status BtreeTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions&) {
  return core_.Erase(keys.bytes(), OrNull(erased), CountOf(keys));
}

Status BtreeTable::Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
                         const BatchOptions&) {
  auto batch = tables::ResolveWrite("table '" + name() + "'", keys.bytes(), values.bytes(),
                                    ops.bytes(), CountOf(keys), options().key_size,
                                    options().value_size, !erased.empty());
  if (!batch.ok()) return batch.status();
  std::vector<uint8_t> probe_found(batch->probes);
  GPKV_RETURN_IF_ERROR(core_.Write(*batch, probe_found.data()));
  if (!erased.empty()) batch->FillErased(probe_found.data(), erased.bytes());
  return Status::OK();
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
