#include "tables/btree/table.h"

#include "tables/btree/cpu/backend.h"
#include "tables/stats_builder.h"
#if GPKV_HAVE_CUDA
#include "tables/btree/gpu/backend.h"
#endif

namespace gpkv::btree {

Result<std::unique_ptr<Table>> OpenEmptyTable(const std::string& where, const std::string& name,
                                              const TableOptions& options, gpkv::Backend backend,
                                              int cpu_threads, int cuda_device) {
  if (backend == gpkv::Backend::kCuda) {
#if GPKV_HAVE_CUDA
    return tables::OpenFront<BtreeTable>(where, name, options,
                                         gpu::CreateGpuBackend(options, cuda_device));
#else
    (void)cuda_device;
    return Status::Unsupported(where + ": this build of gpkv has no CUDA backend");
#endif
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

Result<std::unique_ptr<Snapshot>> BtreeTable::TakeSnapshot() { return core_.TakeSnapshot(); }

Result<TableStats> BtreeTable::Stats() {
  auto stats = core_.Stats();
  if (!stats.ok()) return stats.status();
  return PublicStats(*stats);
}

Status BtreeTable::Scan(const ScanVisitor& visit) { return core_.Scan(visit); }

}  // namespace gpkv::btree
