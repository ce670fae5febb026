#include "engine/checked_table.h"

#include <vector>

namespace gpkv::engine {

CheckedTable::CheckedTable(std::string pool_path, bool read_only, std::string backend, int device,
                           std::string fallback, std::unique_ptr<Table> family_table)
    : pool_path_(std::move(pool_path)),
      read_only_(read_only),
      name_(family_table->name()),
      options_(family_table->options()),
      backend_(std::move(backend)),
      device_(device),
      fallback_(std::move(fallback)),
      table_(std::move(family_table)) {}

std::string CheckedTable::Where() const { return pool_path_ + ": table '" + name() + "'"; }

Status CheckedTable::CheckKeys(ConstBytes keys, size_t* count) const {
  const uint32_t key_size = options().key_size;
  if (keys.size() % key_size != 0) {
    return Status::InvalidArgument(Where() + ": " + std::to_string(keys.size()) +
                                   " key bytes is not a multiple of the key size " +
                                   std::to_string(key_size));
  }
  if (keys.data() == nullptr && keys.size() != 0) {
    return Status::InvalidArgument(Where() + ": null keys");
  }
  *count = keys.size() / key_size;
  return Status::OK();
}

Status CheckedTable::CheckSize(const char* what, size_t actual, size_t expected,
                               const void* data) const {
  if (actual != expected) {
    return Status::InvalidArgument(Where() + ": " + what + " holds " + std::to_string(actual) +
                                   " bytes, the batch needs " + std::to_string(expected));
  }
  if (data == nullptr && expected != 0) {
    return Status::InvalidArgument(Where() + ": null " + what);
  }
  return Status::OK();
}

Status CheckedTable::CheckOpen() const {
  if (table_ == nullptr) return Status::InvalidArgument(Where() + ": the table is closed");
  return Status::OK();
}

Status CheckedTable::CheckWritable() const {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  if (read_only_) return Status::InvalidArgument(Where() + ": the pool is open read-only");
  return Status::OK();
}

Status CheckedTable::CheckAsync(const BatchOptions& options) const {
  if (options.async && options.stream == nullptr) {
    return Status::InvalidArgument(Where() +
                                   ": an async batch needs a stream (BatchOptions::stream) to "
                                   "queue on and to wait for");
  }
  return Status::OK();
}

Status CheckedTable::CheckSnapshot(const BatchOptions& options, bool write) const {
  if (options.snapshot == nullptr) return Status::OK();
  if (write) {
    return Status::InvalidArgument(Where() +
                                   ": a write batch takes no snapshot (snapshots are "
                                   "for reads)");
  }
  if (!options.snapshot->TakenBy(table_.get())) {
    return Status::InvalidArgument(Where() + ": the snapshot was taken from another table");
  }
  return Status::OK();
}

Status CheckedTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckWritable());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/true));
  GPKV_RETURN_IF_ERROR(CheckAsync(options));
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  GPKV_RETURN_IF_ERROR(
      CheckSize("values", values.size(), count * this->options().value_size, values.data()));
  if (count == 0) return Status::OK();
  return table_->Put(keys, values, options);
}

Status CheckedTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                         const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/false));
  GPKV_RETURN_IF_ERROR(CheckAsync(options));
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  GPKV_RETURN_IF_ERROR(
      CheckSize("values", values.size(), count * this->options().value_size, values.data()));
  if (!found.empty()) GPKV_RETURN_IF_ERROR(CheckSize("found", found.size(), count, found.data()));
  if (count == 0) return Status::OK();
  return table_->Get(keys, values, found, options);
}

Status CheckedTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckWritable());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/true));
  GPKV_RETURN_IF_ERROR(CheckAsync(options));
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  if (!erased.empty()) {
    GPKV_RETURN_IF_ERROR(CheckSize("erased", erased.size(), count, erased.data()));
  }
  if (count == 0) return Status::OK();
  return table_->Erase(keys, erased, options);
}

Status CheckedTable::Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
                           const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckWritable());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/true));
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  GPKV_RETURN_IF_ERROR(
      CheckSize("values", values.size(), count * this->options().value_size, values.data()));
  GPKV_RETURN_IF_ERROR(CheckSize("ops", ops.size(), count, ops.data()));
  if (!erased.empty()) {
    GPKV_RETURN_IF_ERROR(CheckSize("erased", erased.size(), count, erased.data()));
  }
  for (size_t i = 0; i < count; ++i) {
    const uint8_t op = ops.bytes()[i];
    if (op != static_cast<uint8_t>(WriteOp::kPut) && op != static_cast<uint8_t>(WriteOp::kErase)) {
      return Status::InvalidArgument(Where() + ": operation " + std::to_string(i) + " is " +
                                     std::to_string(op) + ", not a WriteOp (0 put, 1 erase)");
    }
  }
  if (count == 0) return Status::OK();
  return table_->Write(keys, values, ops, erased, options);
}

Status CheckedTable::CheckBounds(ConstBytes lo, ConstBytes hi, size_t* count) const {
  GPKV_RETURN_IF_ERROR(CheckKeys(lo, count));
  size_t hi_count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(hi, &hi_count));
  if (hi_count != *count) {
    return Status::InvalidArgument(Where() + ": " + std::to_string(*count) + " lower bounds but " +
                                   std::to_string(hi_count) + " upper bounds");
  }
  return Status::OK();
}

Status CheckedTable::CheckNeighbours(size_t count, MutableBytes keys, MutableBytes values,
                                     MutableBytes found) const {
  GPKV_RETURN_IF_ERROR(
      CheckSize("result keys", keys.size(), count * options().key_size, keys.data()));
  GPKV_RETURN_IF_ERROR(
      CheckSize("values", values.size(), count * options().value_size, values.data()));
  if (!found.empty()) GPKV_RETURN_IF_ERROR(CheckSize("found", found.size(), count, found.data()));
  return Status::OK();
}

Status CheckedTable::Count(ConstBytes lo, ConstBytes hi, MutableBytes counts,
                           const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/false));
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckBounds(lo, hi, &count));
  GPKV_RETURN_IF_ERROR(CheckSize("counts", counts.size(), count * sizeof(uint64_t), counts.data()));
  if (count == 0) return Status::OK();
  return table_->Count(lo, hi, counts, options);
}

Status CheckedTable::Range(ConstBytes lo, ConstBytes hi, RangeResults* results,
                           const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/false));
  if (results == nullptr) return Status::InvalidArgument(Where() + ": null range results");
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckBounds(lo, hi, &count));
  if (count == 0 || options.range_limit == 0) {
    *results = RangeResults{std::vector<uint64_t>(count + 1, 0), {}, {}};
    return Status::OK();
  }
  return table_->Range(lo, hi, results, options);
}

Status CheckedTable::RangeOnDevice(ConstBytes lo, ConstBytes hi, DeviceRangeResults* results,
                                   const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/false));
  if (results == nullptr) return Status::InvalidArgument(Where() + ": null range results");
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckBounds(lo, hi, &count));
  return table_->RangeOnDevice(lo, hi, results, options);
}

Result<std::unique_ptr<Iterator>> CheckedTable::NewIterator(const IteratorOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  BatchOptions batch;
  batch.snapshot = options.snapshot;
  GPKV_RETURN_IF_ERROR(CheckSnapshot(batch, /*write=*/false));
  const uint32_t key_size = this->options().key_size;
  for (const auto* bound : {&options.lower_bound, &options.upper_bound}) {
    if (!bound->empty() && bound->size() != key_size) {
      return Status::InvalidArgument(Where() + ": an iterator bound holds " +
                                     std::to_string(bound->size()) + " bytes, a key " +
                                     std::to_string(key_size));
    }
  }
  if (options.page_size == 0) {
    return Status::InvalidArgument(Where() + ": an iterator's page_size must be at least 1");
  }
  return table_->NewIterator(options);
}

Status CheckedTable::Successor(ConstBytes keys, MutableBytes next_keys, MutableBytes values,
                               MutableBytes found, const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/false));
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  GPKV_RETURN_IF_ERROR(CheckNeighbours(count, next_keys, values, found));
  if (count == 0) return Status::OK();
  return table_->Successor(keys, next_keys, values, found, options);
}

Status CheckedTable::Predecessor(ConstBytes keys, MutableBytes previous_keys, MutableBytes values,
                                 MutableBytes found, const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  GPKV_RETURN_IF_ERROR(CheckSnapshot(options, /*write=*/false));
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  GPKV_RETURN_IF_ERROR(CheckNeighbours(count, previous_keys, values, found));
  if (count == 0) return Status::OK();
  return table_->Predecessor(keys, previous_keys, values, found, options);
}

Status CheckedTable::Compact() {
  GPKV_RETURN_IF_ERROR(CheckWritable());
  return table_->Compact();
}

Result<std::unique_ptr<Snapshot>> CheckedTable::TakeSnapshot() {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  return table_->TakeSnapshot();
}

Result<TableStats> CheckedTable::Stats() {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  auto stats = table_->Stats();
  if (!stats.ok()) return stats;
  stats->backend = backend_;
  stats->device = device_;
  stats->fallback = fallback_;
  return stats;
}

Status CheckedTable::Synchronize(void* stream) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  return table_->Synchronize(stream);
}

Status CheckedTable::Scan(const ScanVisitor& visit) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  return table_->Scan(visit);
}

Status CheckedTable::Close() {
  if (table_ == nullptr) return Status::OK();
  Status status = table_->Close();
  table_.reset();  // releases the table's memory, on the GPU too
  return status;
}

}  // namespace gpkv::engine
