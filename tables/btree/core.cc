#include "tables/btree/core.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <numeric>
#include <set>
#include <vector>

#include "tables/btree/batch_rule.h"
#include "tables/btree/keys.h"

namespace gpkv::btree {

// The live snapshots of one table. Shared with the handles, so that a handle
// destroyed after its table releases into a registry nobody reads.
class SnapshotRegistry {
 public:
  void Add(uint64_t timestamp) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(timestamp);
  }
  void Release(uint64_t timestamp) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(timestamp);
    if (it != live_.end()) live_.erase(it);
    released_.store(true, std::memory_order_release);
  }
  // The live timestamps, ascending.
  std::vector<uint64_t> Live() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::vector<uint64_t>(live_.begin(), live_.end());
  }
  // True once after any release (the caller then reclaims).
  bool TakeReleased() { return released_.exchange(false, std::memory_order_acq_rel); }

 private:
  mutable std::mutex mutex_;
  std::multiset<uint64_t> live_;
  std::atomic<bool> released_{false};
};

namespace {

class BtreeSnapshot final : public Snapshot {
 public:
  BtreeSnapshot(const Table* owner, uint64_t timestamp, std::shared_ptr<SnapshotRegistry> registry)
      : Snapshot(owner, timestamp), registry_(std::move(registry)) {}
  ~BtreeSnapshot() override { registry_->Release(timestamp()); }
  const SnapshotRegistry* registry() const { return registry_.get(); }

 private:
  const std::shared_ptr<SnapshotRegistry> registry_;
};

LiveSnapshots ViewOf(const std::vector<uint64_t>& live) {
  return LiveSnapshots{live.data(), live.size()};
}

}  // namespace

Core::Core(std::string where, const Table* owner, uint32_t key_size, uint32_t value_size,
           std::unique_ptr<Backend> backend)
    : where_(std::move(where)),
      owner_(owner),
      key_words_(key_size / 8),
      value_size_(value_size),
      backend_(std::move(backend)),
      snapshots_(std::make_shared<SnapshotRegistry>()) {}

Core::~Core() = default;

std::unique_lock<std::shared_mutex> Core::WriteLock() {
  std::lock_guard<std::mutex> turn(turnstile_);
  return std::unique_lock<std::shared_mutex>(mutex_);
}

std::shared_lock<std::shared_mutex> Core::ReadLock() {
  { std::lock_guard<std::mutex> turn(turnstile_); }
  return std::shared_lock<std::shared_mutex>(mutex_);
}

Status Core::Named(Status status) const {
  if (status.ok()) return status;
  return Status(status.code(), where_ + ": " + status.message());
}

Status Core::Put(const uint8_t* keys, const uint8_t* values, size_t n) {
  auto lock = WriteLock();
  GPKV_RETURN_IF_ERROR(ReclaimIfReleased());
  return WriteLocked(keys, values, nullptr, n, clock_ + 1);
}

Status Core::Erase(const uint8_t* keys, uint8_t* erased, size_t n) {
  auto lock = WriteLock();
  GPKV_RETURN_IF_ERROR(ReclaimIfReleased());
  return WriteLocked(keys, nullptr, erased, n, clock_ + 1);
}

Status Core::Write(const tables::ResolvedWrite& batch, uint8_t* probe_found) {
  auto lock = WriteLock();
  GPKV_RETURN_IF_ERROR(ReclaimIfReleased());
  if (batch.probes != 0) {
    std::vector<uint8_t> values(size_t{batch.probes} * value_size_);
    GPKV_RETURN_IF_ERROR(Named(
        backend_->Get(batch.probe_keys.data(), values.data(), probe_found, batch.probes, kLatest)));
  }
  // The two parts' keys are disjoint: at one timestamp they are one batch.
  const uint64_t timestamp = clock_ + 1;
  if (batch.puts != 0) {
    GPKV_RETURN_IF_ERROR(WriteLocked(batch.put_keys.data(), batch.put_values.data(), nullptr,
                                     batch.puts, timestamp));
  }
  if (batch.erases == 0) return Status::OK();
  return WriteLocked(batch.erase_keys.data(), nullptr, nullptr, batch.erases, timestamp);
}

Status Core::WriteLocked(const uint8_t* keys, const uint8_t* values, uint8_t* erased, size_t n,
                         uint64_t timestamp) {
  const size_t key_size = size_t{key_words_} * 8;
  auto less = [&](size_t a, size_t b) {
    return KeyLess(keys + a * key_size, keys + b * key_size, key_words_);
  };
  // The batch's operations in ascending key order, one per key (the one
  // that counts: batch_rule.h); or, to a backend that sorts batches itself,
  // the batch as it came.
  const bool backend_sorts = backend_->SortsBatches();
  std::vector<size_t> order;
  std::vector<uint64_t> live;
  std::vector<uint8_t> was_live;
  try {
    order.resize(backend_sorts ? 0 : n);
    live = snapshots_->Live();
    // A backend that sorts answers in the caller's order, into `erased`
    // itself (which may be device memory, as the keys may).
    was_live.resize(erased != nullptr && !backend_sorts ? n : 0);
  } catch (const std::bad_alloc&) {
    return Status::OutOfDeviceMemory(where_ + ": out of memory (RAM) for a batch of " +
                                     std::to_string(n));
  }
  std::iota(order.begin(), order.end(), size_t{0});
  bool sorted_unique = true;
  for (size_t i = 1; i < order.size() && sorted_unique; ++i) sorted_unique = less(i - 1, i);
  if (!sorted_unique) {
    std::stable_sort(order.begin(), order.end(), less);
    // Compacted in place: position i is read before any write reaches it.
    size_t unique = 0;
    bool same_as_previous = false;
    for (size_t i = 0; i < n; ++i) {
      const bool same_as_next = i + 1 < n && !less(order[i], order[i + 1]);
      if (OperationCounts(values != nullptr, same_as_previous, same_as_next)) {
        order[unique++] = order[i];
      }
      same_as_previous = same_as_next;
    }
    order.resize(unique);
  }
  WriteBatch batch;
  batch.keys = keys;
  batch.values = values;
  batch.order = backend_sorts ? nullptr : order.data();
  batch.count = backend_sorts ? n : order.size();
  batch.timestamp = timestamp;
  batch.live = ViewOf(live);
  batch.was_live = backend_sorts ? erased : (erased != nullptr ? was_live.data() : nullptr);
  const Status written = Named(backend_->Write(batch));
  // A failed batch may have applied some of its operations: they keep its
  // timestamp, and the next batch gets a later one.
  clock_ = timestamp;
  GPKV_RETURN_IF_ERROR(written);
  if (erased != nullptr && !backend_sorts) {
    std::memset(erased, 0, n);
    for (size_t i = 0; i < order.size(); ++i) erased[order[i]] = was_live[i];
  }
  return Status::OK();
}

Status Core::ReclaimIfReleased() {
  if (!snapshots_->TakeReleased()) return Status::OK();
  const std::vector<uint64_t> live = snapshots_->Live();
  return Named(backend_->Reclaim(ViewOf(live)));
}

Status Core::Compact() {
  auto lock = WriteLock();
  snapshots_->TakeReleased();
  const std::vector<uint64_t> live = snapshots_->Live();
  return Named(backend_->Reclaim(ViewOf(live)));
}

Result<btree::Stats> Core::Stats() {
  auto lock = WriteLock();
  GPKV_RETURN_IF_ERROR(ReclaimIfReleased());
  auto stats = backend_->Stats();
  if (!stats.ok()) return Named(stats.status());
  stats->snapshots = snapshots_->Live().size();
  stats->timestamp = clock_;
  return stats;
}

Result<std::unique_ptr<Snapshot>> Core::TakeSnapshot() {
  // Shared: no write batch runs, so the clock names a state every batch
  // that returned is in and no later one.
  auto lock = ReadLock();
  snapshots_->Add(clock_);
  return std::unique_ptr<Snapshot>(std::make_unique<BtreeSnapshot>(owner_, clock_, snapshots_));
}

Result<uint64_t> Core::ReadTimestamp(const Snapshot* snapshot) const {
  if (snapshot == nullptr) return kLatest;
  const auto* ours = dynamic_cast<const BtreeSnapshot*>(snapshot);
  if (ours == nullptr || ours->registry() != snapshots_.get()) {
    return Status::InvalidArgument(where_ + ": the snapshot was taken from another table");
  }
  return snapshot->timestamp();
}

Status Core::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n,
                 const Snapshot* snapshot) {
  auto at = ReadTimestamp(snapshot);
  if (!at.ok()) return at.status();
  auto lock = ReadLock();
  return Named(backend_->Get(keys, values, found, n, *at));
}

Status Core::Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n,
                   const Snapshot* snapshot) {
  auto at = ReadTimestamp(snapshot);
  if (!at.ok()) return at.status();
  auto lock = ReadLock();
  return Named(backend_->Count(lo, hi, counts, n, *at));
}

Status Core::Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n,
                   tables::RangeLimit limit, const Snapshot* snapshot) {
  auto at = ReadTimestamp(snapshot);
  if (!at.ok()) return at.status();
  auto lock = ReadLock();
  return Named(backend_->Range(lo, hi, results, n, limit, *at));
}

Status Core::RangeOnDevice(const uint8_t* lo, const uint8_t* hi, Table::DeviceRangeResults* results,
                           size_t n, tables::RangeLimit limit, const Snapshot* snapshot) {
  auto at = ReadTimestamp(snapshot);
  if (!at.ok()) return at.status();
  auto lock = ReadLock();
  // Unsupported passes unnamed: the front answers with the table's message.
  return backend_->RangeOnDevice(lo, hi, results, n, limit, *at);
}

Status Core::Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                       size_t n, const Snapshot* snapshot) {
  auto at = ReadTimestamp(snapshot);
  if (!at.ok()) return at.status();
  auto lock = ReadLock();
  return Named(backend_->Successor(keys, next_keys, values, found, n, *at));
}

Status Core::Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values,
                         uint8_t* found, size_t n, const Snapshot* snapshot) {
  auto at = ReadTimestamp(snapshot);
  if (!at.ok()) return at.status();
  auto lock = ReadLock();
  return Named(backend_->Predecessor(keys, previous_keys, values, found, n, *at));
}

Status Core::Scan(const Table::ScanVisitor& visit) {
  // Through a snapshot of its own, a chunk of pairs at a time with the lock
  // released while `visit` runs: the visitor may write to the table, and the
  // scan sees the table as it was when it started.
  auto snapshot = TakeSnapshot();
  if (!snapshot.ok()) return snapshot.status();
  const uint64_t at = (*snapshot)->timestamp();
  const size_t key_size = size_t{key_words_} * 8;
  const size_t value_size = value_size_;
  constexpr size_t kChunk = 4096;
  std::vector<uint8_t> keys, values, after;
  for (;;) {
    keys.clear();
    values.clear();
    {
      auto lock = ReadLock();
      GPKV_RETURN_IF_ERROR(Named(
          backend_->ScanChunk(after.empty() ? nullptr : after.data(), kChunk, at, &keys, &values)));
    }
    const size_t pairs = keys.size() / key_size;
    for (size_t i = 0; i < pairs; ++i) {
      if (!visit(&keys[i * key_size], &values[i * value_size])) return Status::OK();
    }
    if (pairs < kChunk) return Status::OK();
    after.assign(keys.end() - key_size, keys.end());
  }
}

}  // namespace gpkv::btree
