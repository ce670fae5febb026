#include "tables/gphash/logged/table.h"

#include <string>
#include <utility>
#include <vector>

#include "tables/gphash/logged/layout.h"
#include "tables/stats_builder.h"

namespace gpkv::gphash::logged {
namespace {

// Where the arrays of a batch copied to device memory start in the staging:
// aligned for the record's and the index's word loads.
constexpr size_t kStagingAlignment = 256;

size_t AlignUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace

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
  out.Add("write-checkpoint-scan-ns", static_cast<double>(phases.checkpoint_scan_ns));
  out.Add("write-checkpoint-wait-ns", static_cast<double>(phases.checkpoint_wait_ns));
  out.Add("write-checkpoint-publish-ns", static_cast<double>(phases.checkpoint_publish_ns));
  out.Add("write-record-ns", static_cast<double>(phases.record_ns));
  out.Add("write-publish-ns", static_cast<double>(phases.publish_ns));
  out.Add("write-sync-ns", static_cast<double>(phases.sync_ns));
  out.Add("write-index-ns", static_cast<double>(phases.index_ns));
  const LoggedStats::OpenPhases& open = stats.open_phases;
  out.Add("open-check-ns", static_cast<double>(open.check_ns));
  out.Add("open-index-ns", static_cast<double>(open.index_ns));
  out.Add("open-image-ns", static_cast<double>(open.image_ns));
  out.Add("open-replay-ns", static_cast<double>(open.replay_ns));
  out.Add("registration-ns", static_cast<double>(stats.registration_ns));
  out.Add("pageable-records", static_cast<double>(stats.pageable_records));
  return out.Take();
}

LoggedTable::LoggedTable(std::string name, const TableOptions& options, std::unique_ptr<Core> core,
                         std::unique_ptr<DeviceBatches> device_batches,
                         uint64_t device_copy_min_ops)
    : FamilyTable(std::move(name), options),
      core_(std::move(core)),
      device_batches_(std::move(device_batches)),
      device_copy_min_ops_(device_copy_min_ops) {}

Result<BatchMemory> LoggedTable::Prepare(std::initializer_list<const void*> arrays,
                                         const BatchOptions& options) const {
  if (device_batches_ == nullptr) return BatchMemory::kHost;
  if (options.stream != nullptr) {
    GPKV_RETURN_IF_ERROR(
        tables::Prefixed("table '" + name() + "'", device_batches_->WaitFor(options.stream)));
  }
  int device = 0, host = 0;
  for (const void* array : arrays) {
    if (array == nullptr) continue;
    ++(device_batches_->InDeviceMemory(array) ? device : host);
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

bool LoggedTable::CopiesToDevice(size_t count) const {
  return device_batches_ != nullptr && core_->TakesDeviceBatches() && device_copy_min_ops_ != 0 &&
         count >= device_copy_min_ops_;
}

Status LoggedTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) {
  auto memory = Prepare({keys.data(), values.data()}, options);
  if (!memory.ok()) return memory.status();
  if (*memory == BatchMemory::kHost && CopiesToDevice(CountOf(keys))) {
    return PutThroughDevice(keys, values);
  }
  return core_->Put(keys.bytes(), values.bytes(), CountOf(keys), *memory);
}

// A large host batch is copied to device memory and written as a device
// batch: its record is then summed on the GPU and copied to the pool by DMA
// while the index applies the batch, where from host memory the host sums and
// copies the record first. The record's bytes are the same.
Result<uint8_t*> LoggedTable::StageKeys(ConstBytes keys, size_t tail_bytes, size_t* tail_at) {
  *tail_at = AlignUp(keys.size(), kStagingAlignment);
  auto staging = device_batches_->Staging(*tail_at + tail_bytes);
  if (!staging.ok()) return staging.status();
  GPKV_RETURN_IF_ERROR(device_batches_->CopyToDevice(*staging, keys.data(), keys.size()));
  return staging;
}

Status LoggedTable::PutThroughDevice(ConstBytes keys, ConstBytes values) {
  const std::string where = "table '" + name() + "'";
  std::lock_guard<std::mutex> lock(staging_mutex_);
  size_t values_at = 0;
  auto staging = StageKeys(keys, values.size(), &values_at);
  if (!staging.ok()) return tables::Prefixed(where, staging.status());
  GPKV_RETURN_IF_ERROR(tables::Prefixed(
      where, device_batches_->CopyToDevice(*staging + values_at, values.data(), values.size())));
  return core_->Put(*staging, *staging + values_at, CountOf(keys), BatchMemory::kDevice);
}

Status LoggedTable::EraseThroughDevice(ConstBytes keys, MutableBytes erased) {
  const std::string where = "table '" + name() + "'";
  std::lock_guard<std::mutex> lock(staging_mutex_);
  size_t erased_at = 0;
  auto staging = StageKeys(keys, erased.size(), &erased_at);
  if (!staging.ok()) return tables::Prefixed(where, staging.status());
  uint8_t* device_erased = erased.empty() ? nullptr : *staging + erased_at;
  GPKV_RETURN_IF_ERROR(core_->Erase(*staging, device_erased, CountOf(keys), BatchMemory::kDevice));
  if (erased.empty()) return Status::OK();
  return tables::Prefixed(where,
                          device_batches_->CopyToHost(erased.data(), device_erased, erased.size()));
}

Status LoggedTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                        const BatchOptions& options) {
  return core_->Get(keys, values, found, options);
}

Status LoggedTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) {
  auto memory = Prepare({keys.data(), erased.empty() ? nullptr : erased.data()}, options);
  if (!memory.ok()) return memory.status();
  if (*memory == BatchMemory::kHost && CopiesToDevice(CountOf(keys))) {
    return EraseThroughDevice(keys, erased);
  }
  return core_->Erase(keys.bytes(), erased.empty() ? nullptr : erased.bytes(), CountOf(keys),
                      *memory);
}

Status LoggedTable::Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
                          const BatchOptions& options) {
  auto memory =
      Prepare({keys.data(), values.data(), erased.empty() ? nullptr : erased.data()}, options);
  if (!memory.ok()) return memory.status();
  if (*memory == BatchMemory::kDevice) return WriteFromDevice(keys, values, ops, erased);
  return ResolveAndWrite(keys, values, ops, erased,
                         [&](const tables::ResolvedWrite& batch, uint8_t* probe_found) {
                           return core_->Write(batch, probe_found);
                         });
}

Status LoggedTable::WriteFromDevice(ConstBytes keys, ConstBytes values, ConstBytes ops,
                                    MutableBytes erased) {
  // Resolving a batch takes its keys in order (the last operation of a key
  // wins): the arrays come to host memory, and the batch is then a host
  // batch, whose records and erased flags are those of the same batch from
  // host memory.
  const std::string where = "table '" + name() + "'";
  std::vector<uint8_t> host_keys(keys.size()), host_values(values.size());
  GPKV_RETURN_IF_ERROR(tables::Prefixed(
      where, device_batches_->CopyToHost(host_keys.data(), keys.data(), keys.size())));
  GPKV_RETURN_IF_ERROR(tables::Prefixed(
      where, device_batches_->CopyToHost(host_values.data(), values.data(), values.size())));
  std::vector<uint8_t> host_erased(erased.size());
  GPKV_RETURN_IF_ERROR(
      ResolveAndWrite(ConstBytes(host_keys.data(), host_keys.size()),
                      ConstBytes(host_values.data(), host_values.size()), ops,
                      MutableBytes(host_erased.data(), host_erased.size()),
                      [&](const tables::ResolvedWrite& batch, uint8_t* probe_found) {
                        return core_->Write(batch, probe_found);
                      }));
  if (erased.empty()) return Status::OK();
  return tables::Prefixed(
      where, device_batches_->CopyToDevice(erased.data(), host_erased.data(), erased.size()));
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
