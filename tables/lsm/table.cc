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
  add("log-batches", static_cast<double>(stats.log_batches));
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
  add("log-halves", stats.log_halves);
  add("checkpoint-pending", stats.checkpoint_pending ? 1.0 : 0.0);
  // The last batch in the levels (a pending checkpoint's, which queries
  // read already).
  add("applied-seq", static_cast<double>(stats.applied_seq));
  for (size_t level = 0; level < stats.level_entries.size(); ++level) {
    add("level-" + std::to_string(level) + "-entries",
        static_cast<double>(stats.level_entries[level]));
  }
  for (const auto& [name, value] : stats.write_profile) add(name, value);
  return out;
}

LsmTable::LsmTable(std::string name, TableOptions options, std::unique_ptr<cpu::LsmCpu> backend)
    : name_(std::move(name)), options_(options), cpu_(std::move(backend)) {}

#if GPKV_HAVE_CUDA
LsmTable::LsmTable(std::string name, TableOptions options, std::unique_ptr<gpu::LsmGpu> backend)
    : name_(std::move(name)), options_(options), gpu_(std::move(backend)) {}
#define GPKV_LSM_ON_GPU(call) \
  if (gpu_ != nullptr) return gpu_->call
#else
#define GPKV_LSM_ON_GPU(call)
#endif

Status LsmTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions&) {
  GPKV_LSM_ON_GPU(Put(keys.bytes(), values.bytes(), CountOf(keys)));
  return cpu_->Put(keys.bytes(), values.bytes(), CountOf(keys));
}

Status LsmTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                     const BatchOptions&) {
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  GPKV_LSM_ON_GPU(Get(keys.bytes(), values.bytes(), found_bytes, CountOf(keys)));
  cpu_->Get(keys.bytes(), values.bytes(), found_bytes, CountOf(keys));
  return Status::OK();
}

Status LsmTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions&) {
  uint8_t* erased_bytes = erased.empty() ? nullptr : erased.bytes();
  GPKV_LSM_ON_GPU(Erase(keys.bytes(), erased_bytes, CountOf(keys)));
  return cpu_->Erase(keys.bytes(), erased_bytes, CountOf(keys));
}

Status LsmTable::Count(ConstBytes lo, ConstBytes hi, MutableBytes counts, const BatchOptions&) {
  auto* out = static_cast<uint64_t*>(counts.data());
  GPKV_LSM_ON_GPU(Count(lo.bytes(), hi.bytes(), out, CountOf(lo)));
  cpu_->Count(lo.bytes(), hi.bytes(), out, CountOf(lo));
  return Status::OK();
}

Status LsmTable::Range(ConstBytes lo, ConstBytes hi, RangeResults* results, const BatchOptions&) {
  GPKV_LSM_ON_GPU(Range(lo.bytes(), hi.bytes(), results, CountOf(lo)));
  cpu_->Range(lo.bytes(), hi.bytes(), results, CountOf(lo));
  return Status::OK();
}

Status LsmTable::RangeOnDevice(ConstBytes lo, ConstBytes hi, DeviceRangeResults* results,
                               const BatchOptions& options) {
  GPKV_LSM_ON_GPU(RangeOnDevice(lo.bytes(), hi.bytes(), results, CountOf(lo)));
  return Table::RangeOnDevice(lo, hi, results, options);
}

Status LsmTable::Successor(ConstBytes keys, MutableBytes next_keys, MutableBytes values,
                           MutableBytes found, const BatchOptions&) {
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  GPKV_LSM_ON_GPU(
      Successor(keys.bytes(), next_keys.bytes(), values.bytes(), found_bytes, CountOf(keys)));
  cpu_->Successor(keys.bytes(), next_keys.bytes(), values.bytes(), found_bytes, CountOf(keys));
  return Status::OK();
}

Status LsmTable::Predecessor(ConstBytes keys, MutableBytes previous_keys, MutableBytes values,
                             MutableBytes found, const BatchOptions&) {
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  GPKV_LSM_ON_GPU(
      Predecessor(keys.bytes(), previous_keys.bytes(), values.bytes(), found_bytes, CountOf(keys)));
  cpu_->Predecessor(keys.bytes(), previous_keys.bytes(), values.bytes(), found_bytes,
                    CountOf(keys));
  return Status::OK();
}

Status LsmTable::Compact() {
  GPKV_LSM_ON_GPU(Compact());
  return cpu_->Compact();
}

Status LsmTable::Close() {
  GPKV_LSM_ON_GPU(Close());
  return cpu_->Close();
}

Result<TableStats> LsmTable::Stats() {
#if GPKV_HAVE_CUDA
  if (gpu_ != nullptr) {
    auto stats = gpu_->Stats();
    if (!stats.ok()) return stats.status();
    return PublicStats(*stats);
  }
#endif
  return PublicStats(cpu_->Stats());
}

Status LsmTable::Scan(const ScanVisitor& visit) {
  GPKV_LSM_ON_GPU(Scan(visit));
  return cpu_->Scan(visit);
}

}  // namespace gpkv::lsm
