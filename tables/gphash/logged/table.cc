#include "tables/gphash/logged/table.h"

#include <utility>

#include "tables/gphash/logged/layout.h"
#include "tables/stats_builder.h"

namespace gpkv::gphash::logged {

TableStats PublicStats(const LoggedStats& stats) {
  tables::StatsBuilder out(
      "gphash", TableKind::kHash, Durability::kPersistent, stats.keys,
      kLoggedRootSize + LogExtentBytes(stats.log_capacity) + stats.image_bytes);
  out.Add("batch-entries", static_cast<double>(stats.batch_entries));
  out.Add("log-batches", static_cast<double>(stats.log_batches));
  out.Add("log-bytes", static_cast<double>(stats.log_bytes));
  out.Add("log-capacity", static_cast<double>(stats.log_capacity));
  out.Add("checkpoints", static_cast<double>(stats.checkpoints));
  out.Add("checkpoint-pending", stats.checkpoint_pending ? 1.0 : 0.0);
  out.Add("image-entries", static_cast<double>(stats.image_entries));
  out.Add("applied-seq", static_cast<double>(stats.applied_seq));
  const LoggedStats::WritePhases& phases = stats.write_phases;
  out.Add("write-batches", static_cast<double>(phases.batches));
  out.Add("write-ns", static_cast<double>(phases.total_ns));
  out.Add("write-checkpoint-ns", static_cast<double>(phases.checkpoint_ns));
  out.Add("write-record-ns", static_cast<double>(phases.record_ns));
  out.Add("write-publish-ns", static_cast<double>(phases.publish_ns));
  out.Add("write-sync-ns", static_cast<double>(phases.sync_ns));
  out.Add("write-index-ns", static_cast<double>(phases.index_ns));
  return out.Take();
}

LoggedTable::LoggedTable(std::string name, const TableOptions& options, std::unique_ptr<Core> core,
                         DeviceMemoryFn in_device_memory, int device)
    : FamilyTable(std::move(name), options),
      core_(std::move(core)),
      in_device_memory_(in_device_memory),
      device_(device) {}

Status LoggedTable::RequireHostBatch(std::initializer_list<const void*> arrays) const {
  if (in_device_memory_ == nullptr) return Status::OK();
  for (const void* array : arrays) {
    if (array != nullptr && in_device_memory_(array, device_)) {
      return Status::Unsupported("table '" + name() +
                                 "': a logged hash table takes mixed write batches in host "
                                 "memory (puts and erases also from device memory)");
    }
  }
  return Status::OK();
}

Result<BatchMemory> LoggedTable::MemoryOf(std::initializer_list<const void*> arrays) const {
  if (in_device_memory_ == nullptr) return BatchMemory::kHost;
  int device = 0, host = 0;
  for (const void* array : arrays) {
    if (array == nullptr) continue;
    ++(in_device_memory_(array, device_) ? device : host);
  }
  if (device == 0) return BatchMemory::kHost;
  if (host != 0) {
    return Status::Unsupported("table '" + name() +
                               "': a write batch's arrays lie all in host memory or all in "
                               "device memory");
  }
  if (!core_->TakesDeviceBatches()) {
    return Status::Unsupported("table '" + name() +
                               "': write batches in device memory need the CUDA backend");
  }
  return BatchMemory::kDevice;
}

Status LoggedTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions&) {
  auto memory = MemoryOf({keys.data(), values.data()});
  if (!memory.ok()) return memory.status();
  return core_->Put(keys.bytes(), values.bytes(), CountOf(keys), *memory);
}

Status LoggedTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                        const BatchOptions& options) {
  return core_->Get(keys, values, found, options);
}

Status LoggedTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions&) {
  auto memory = MemoryOf({keys.data(), erased.empty() ? nullptr : erased.data()});
  if (!memory.ok()) return memory.status();
  return core_->Erase(keys.bytes(), erased.empty() ? nullptr : erased.bytes(), CountOf(keys),
                      *memory);
}

Status LoggedTable::Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
                          const BatchOptions&) {
  GPKV_RETURN_IF_ERROR(RequireHostBatch({keys.data(), values.data(), ops.data(), erased.data()}));
  return ResolveAndWrite(keys, values, ops, erased,
                         [&](const tables::ResolvedWrite& batch, uint8_t* probe_found) {
                           return core_->Write(batch, probe_found);
                         });
}

Status LoggedTable::Close() { return core_->Close(); }

Result<TableStats> LoggedTable::Stats() {
  auto stats = core_->Stats();
  if (!stats.ok()) return stats.status();
  TableStats out = PublicStats(*stats);
  out.mode = "logged";
  return out;
}

Status LoggedTable::Scan(const ScanVisitor& visit) { return core_->Scan(visit); }

}  // namespace gpkv::gphash::logged
