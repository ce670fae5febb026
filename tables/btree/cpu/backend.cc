#include "tables/btree/cpu/backend.h"

#include <absl/container/btree_map.h>

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "tables/btree/keys.h"
#include "tables/exception_status.h"

namespace gpkv::btree::cpu {
namespace {

// Batches smaller than this run their reads on the calling thread alone.
constexpr size_t kParallelQueries = 256;

template <uint32_t kKeyWords>
struct Key {
  uint64_t words[kKeyWords];
};

template <uint32_t kKeyWords>
struct KeyOrder {
  bool operator()(const Key<kKeyWords>& a, const Key<kKeyWords>& b) const {
    return KeyLess(reinterpret_cast<const uint8_t*>(a.words),
                   reinterpret_cast<const uint8_t*>(b.words), kKeyWords);
  }
};

// One version of a key: its timestamp and whether it is a tombstone packed
// in `stamp`; the value's bytes (values of up to 8 bytes) or the index of
// its cell in the value store in `payload`.
struct Version {
  uint64_t stamp = 0;
  uint64_t payload = 0;
};

uint64_t Stamp(uint64_t timestamp, bool tombstone) { return timestamp << 1 | (tombstone ? 1 : 0); }
uint64_t TimestampOf(const Version& version) { return version.stamp >> 1; }
bool IsTombstone(const Version& version) { return (version.stamp & 1) != 0; }

// A key's versions: the newest in `head`, the older ones a live snapshot
// still sees in `older` (newest first; null when there are none). `listed`:
// the key is in the backend's list of keys to reclaim from.
struct Entry {
  Version head;
  std::unique_ptr<std::vector<Version>> older;
  bool listed = false;
};

template <uint32_t kKeyWords>
class CpuBackend final : public Backend {
 public:
  using TableKey = Key<kKeyWords>;
  using Map = absl::btree_map<TableKey, Entry, KeyOrder<kKeyWords>>;
  static constexpr size_t kKeySize = kKeyWords * sizeof(uint64_t);

  CpuBackend(uint32_t value_size, int threads)
      : value_size_(value_size), inline_values_(value_size <= 8), threads_(threads) {}

  Status Write(const WriteBatch& batch) override {
    try {
      // The batch's keys ascend: each put's position is the hint for the
      // next, so a batch into an empty table, or past its largest key, is
      // appended without a search (the bulk build from sorted pairs).
      auto hint = map_.end();
      for (size_t i = 0; i < batch.count; ++i) {
        const TableKey key = Load(batch.keys + batch.order[i] * kKeySize);
        if (batch.values != nullptr) {
          hint = Put(hint, key, batch.values + batch.order[i] * value_size_, batch.timestamp,
                     batch.live);
        } else {
          const bool was_live = Erase(key, batch.timestamp, batch.live);
          if (batch.was_live != nullptr) batch.was_live[i] = was_live ? 1 : 0;
        }
      }
    } catch (...) {
      return tables::StatusOfCurrentException("btree cpu write");
    }
    return Status::OK();
  }

  Status Reclaim(LiveSnapshots live) override {
    try {
      std::vector<TableKey> still_listed;
      for (const TableKey& key : listed_) {
        auto it = map_.find(key);
        if (it == map_.end() || !it->second.listed) continue;  // gone, or seen this pass
        Entry& entry = it->second;
        entry.listed = false;
        Trim(entry, live);
        if (entry.older == nullptr && IsTombstone(entry.head)) {
          DropLoneTombstone(it);
          continue;
        }
        if (Listable(entry)) still_listed.push_back(key);
      }
      for (const TableKey& key : still_listed) map_.find(key)->second.listed = true;
      listed_.swap(still_listed);
      listed_.shrink_to_fit();
    } catch (...) {
      return tables::StatusOfCurrentException("btree cpu reclaim");
    }
    return Status::OK();
  }

  Result<btree::Stats> Stats() override {
    btree::Stats stats;
    stats.keys = live_keys_;
    stats.versions = versions_;
    stats.tombstones = tombstones_;
    stats.reclaimed = reclaimed_;
    uint64_t older_bytes = 0;
    for (const TableKey& key : listed_) {
      auto it = map_.find(key);
      if (it != map_.end() && it->second.older != nullptr) {
        older_bytes +=
            sizeof(std::vector<Version>) + it->second.older->capacity() * sizeof(Version);
      }
    }
    stats.bytes = map_.size() * sizeof(typename Map::value_type) + older_bytes + cells_.capacity() +
                  free_cells_.capacity() * sizeof(uint64_t) + listed_.capacity() * sizeof(TableKey);
    return stats;
  }

  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n, uint64_t at) override {
#pragma omp parallel for num_threads(threads_) schedule(static) if (n >= kParallelQueries)
    for (size_t i = 0; i < n; ++i) {
      const Version* version = nullptr;
      auto it = map_.find(Load(keys + i * kKeySize));
      if (it != map_.end()) version = LiveAt(it->second, at);
      CopyValue(version, values + i * value_size_);
      if (found != nullptr) found[i] = version != nullptr ? 1 : 0;
    }
    return Status::OK();
  }

  Status Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n,
               uint64_t at) override {
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 16) if (n >= kParallelQueries)
    for (size_t i = 0; i < n; ++i) {
      counts[i] = CountOne(lo + i * kKeySize, hi + i * kKeySize, at);
    }
    return Status::OK();
  }

  // Counts each query's pairs (up to the limit) first, then copies them
  // into place: the smallest keys walking up from lo, or the largest
  // walking down from hi and filling their slots from the end.
  Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n,
               tables::RangeLimit limit, uint64_t at) override {
    try {
      results->offsets.assign(n + 1, 0);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 16) if (n >= kParallelQueries)
      for (size_t i = 0; i < n; ++i) {
        results->offsets[i + 1] = CountOne(lo + i * kKeySize, hi + i * kKeySize, at, limit.pairs);
      }
      for (size_t i = 0; i < n; ++i) results->offsets[i + 1] += results->offsets[i];
      const uint64_t pairs = results->offsets[n];
      results->keys.resize(pairs * kKeySize);
      results->values.resize(pairs * value_size_);
    } catch (...) {
      return tables::StatusOfCurrentException("btree cpu range");
    }
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 16) if (n >= kParallelQueries)
    for (size_t i = 0; i < n; ++i) {
      const uint64_t begin = results->offsets[i];
      const uint64_t end = results->offsets[i + 1];
      if (limit.largest) {
        uint64_t out = end;
        for (auto it = map_.upper_bound(Load(hi + i * kKeySize)); out > begin;) {
          --it;  // the count saw `end - begin` live keys in [lo, hi] below it
          const Version* version = LiveAt(it->second, at);
          if (version != nullptr) CopyPair(--out, it->first, version, results);
        }
      } else {
        uint64_t out = begin;
        for (auto it = map_.lower_bound(Load(lo + i * kKeySize)); out < end; ++it) {
          const Version* version = LiveAt(it->second, at);
          if (version != nullptr) CopyPair(out++, it->first, version, results);
        }
      }
    }
    return Status::OK();
  }

  Status RangeOnDevice(const uint8_t*, const uint8_t*, Table::DeviceRangeResults*, size_t,
                       tables::RangeLimit, uint64_t) override {
    return Status::Unsupported("the CPU backend keeps no results in GPU memory");
  }

  Status Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                   size_t n, uint64_t at) override {
    return Neighbours(keys, next_keys, values, found, n, [&](const TableKey& key) -> LiveEntry {
      for (auto it = map_.lower_bound(key); it != map_.end(); ++it) {
        if (const Version* version = LiveAt(it->second, at)) return {&it->first, version};
      }
      return {};
    });
  }

  Status Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values, uint8_t* found,
                     size_t n, uint64_t at) override {
    return Neighbours(keys, previous_keys, values, found, n, [&](const TableKey& key) -> LiveEntry {
      for (auto it = map_.upper_bound(key); it != map_.begin();) {
        --it;
        if (const Version* version = LiveAt(it->second, at)) return {&it->first, version};
      }
      return {};
    });
  }

  Status ScanChunk(const uint8_t* after, size_t limit, uint64_t at, std::vector<uint8_t>* keys,
                   std::vector<uint8_t>* values) override {
    try {
      auto it = after == nullptr ? map_.begin() : map_.upper_bound(Load(after));
      for (size_t pairs = 0; pairs < limit && it != map_.end(); ++it) {
        const Version* version = LiveAt(it->second, at);
        if (version == nullptr) continue;
        const auto* key_bytes = reinterpret_cast<const uint8_t*>(it->first.words);
        keys->insert(keys->end(), key_bytes, key_bytes + kKeySize);
        values->resize(values->size() + value_size_);
        CopyValue(version, values->data() + values->size() - value_size_);
        ++pairs;
      }
    } catch (...) {
      return tables::StatusOfCurrentException("btree cpu scan");
    }
    return Status::OK();
  }

 private:
  // A key of the map and its version live at a snapshot; both null for none.
  struct LiveEntry {
    const TableKey* key = nullptr;
    const Version* version = nullptr;
  };

  // Successor and Predecessor: for each of the n keys, the neighbour
  // find(key) gives (a LiveEntry) into neighbour_keys, values and found.
  template <typename Find>
  Status Neighbours(const uint8_t* keys, uint8_t* neighbour_keys, uint8_t* values, uint8_t* found,
                    size_t n, const Find& find) {
#pragma omp parallel for num_threads(threads_) schedule(static) if (n >= kParallelQueries)
    for (size_t i = 0; i < n; ++i) {
      const LiveEntry entry = find(Load(keys + i * kKeySize));
      Neighbour(entry.version, entry.key, neighbour_keys + i * kKeySize, values + i * value_size_,
                found == nullptr ? nullptr : found + i);
    }
    return Status::OK();
  }

  static TableKey Load(const uint8_t* bytes) {
    TableKey key;
    std::memcpy(key.words, bytes, kKeySize);
    return key;
  }

  // ---- values ----

  const uint8_t* ValueBytes(const Version& version) const {
    if (inline_values_) return reinterpret_cast<const uint8_t*>(&version.payload);
    return &cells_[version.payload * value_size_];
  }

  // Gives a value version (new, or a tombstone turned into a value) its
  // bytes: in the payload, or a cell of its own.
  void StoreNewValue(Version* version, const uint8_t* value) {
    if (inline_values_) {
      version->payload = 0;
      std::memcpy(&version->payload, value, value_size_);
      return;
    }
    if (free_cells_.empty()) {
      version->payload = cells_.size() / value_size_;
      cells_.insert(cells_.end(), value, value + value_size_);
    } else {
      version->payload = free_cells_.back();
      free_cells_.pop_back();
      std::memcpy(&cells_[version->payload * value_size_], value, value_size_);
    }
  }

  // Replaces the bytes of a value version that no snapshot sees.
  void OverwriteValue(Version* version, const uint8_t* value) {
    if (inline_values_) {
      version->payload = 0;
      std::memcpy(&version->payload, value, value_size_);
    } else {
      std::memcpy(&cells_[version->payload * value_size_], value, value_size_);
    }
  }

  void FreeValue(const Version& version) {
    if (!inline_values_ && !IsTombstone(version)) free_cells_.push_back(version.payload);
  }

  void CopyValue(const Version* version, uint8_t* out) const {
    if (version == nullptr) {
      std::memset(out, 0, value_size_);
    } else {
      std::memcpy(out, ValueBytes(*version), value_size_);
    }
  }

  // ---- versions ----

  // The version a reader at `at` sees, or null when it sees the key absent.
  static const Version* LiveAt(const Entry& entry, uint64_t at) {
    const Version* seen = nullptr;
    if (VisibleAt(TimestampOf(entry.head), at)) {
      seen = &entry.head;
    } else if (entry.older != nullptr) {
      for (const Version& version : *entry.older) {
        if (VisibleAt(TimestampOf(version), at)) {
          seen = &version;
          break;
        }
      }
    }
    return seen != nullptr && !IsTombstone(*seen) ? seen : nullptr;
  }

  static bool Listable(const Entry& entry) {
    return entry.older != nullptr || IsTombstone(entry.head);
  }

  void ListIfNeeded(const TableKey& key, Entry* entry) {
    if (Listable(*entry) && !entry->listed) {
      listed_.push_back(key);
      entry->listed = true;
    }
  }

  void DropVersion(const Version& version) {
    FreeValue(version);
    --versions_;
    if (IsTombstone(version)) --tombstones_;
    ++reclaimed_;
  }

  // Drops the older versions of `entry` no live snapshot sees.
  void Trim(Entry& entry, LiveSnapshots live) {
    if (entry.older == nullptr) return;
    std::vector<Version>& older = *entry.older;
    uint64_t newer_timestamp = TimestampOf(entry.head);
    size_t kept = 0;
    for (const Version& version : older) {
      const uint64_t timestamp = TimestampOf(version);
      if (SeenBySnapshot(timestamp, newer_timestamp, live)) {
        older[kept++] = version;
      } else {
        DropVersion(version);
      }
      newer_timestamp = timestamp;
    }
    older.resize(kept);
    if (kept == 0) entry.older.reset();
  }

  // A key left with only a tombstone: absent to every reader.
  void DropLoneTombstone(typename Map::iterator it) {
    DropVersion(it->second.head);
    map_.erase(it);
  }

  // Moves `entry`'s head into its older versions (a snapshot sees it).
  static void KeepHead(Entry* entry) {
    if (entry->older == nullptr) entry->older = std::make_unique<std::vector<Version>>();
    entry->older->insert(entry->older->begin(), entry->head);
  }

  // Returns the position after the key's entry (the hint for a larger key).
  // Returns the position after the key's entry (the hint for a larger key).
  // An allocation that throws leaves the key as it was.
  typename Map::iterator Put(typename Map::iterator hint, const TableKey& key, const uint8_t* value,
                             uint64_t timestamp, LiveSnapshots live) {
    const size_t size_before = map_.size();
    auto it = map_.try_emplace(hint, key);
    Entry& entry = it->second;
    Version fresh{Stamp(timestamp, false), 0};
    if (map_.size() != size_before) {
      try {
        StoreNewValue(&fresh, value);
      } catch (...) {
        map_.erase(it);
        throw;
      }
      entry.head = fresh;
      ++versions_;
      ++live_keys_;
      return std::next(it);
    }
    Trim(entry, live);
    const bool was_live = !IsTombstone(entry.head);
    if (WriteInPlace(TimestampOf(entry.head), live) && was_live) {
      OverwriteValue(&entry.head, value);
      entry.head.stamp = fresh.stamp;
    } else {
      StoreNewValue(&fresh, value);
      if (WriteInPlace(TimestampOf(entry.head), live)) {
        --tombstones_;  // the tombstone no snapshot sees is replaced
      } else {
        try {
          KeepHead(&entry);
        } catch (...) {
          FreeValue(fresh);
          throw;
        }
        ++versions_;
      }
      entry.head = fresh;
      if (!was_live) ++live_keys_;
    }
    ListIfNeeded(key, &entry);
    return std::next(it);
  }

  // Returns whether the key was live.
  bool Erase(const TableKey& key, uint64_t timestamp, LiveSnapshots live) {
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    Entry& entry = it->second;
    Trim(entry, live);
    if (IsTombstone(entry.head)) {
      if (entry.older == nullptr) DropLoneTombstone(it);
      return false;
    }
    // What may throw (an allocation) comes before any change.
    if (WriteInPlace(TimestampOf(entry.head), live)) {
      FreeValue(entry.head);
      if (entry.older == nullptr) {
        --versions_;
        --live_keys_;
        map_.erase(it);
        return true;
      }
    } else {
      KeepHead(&entry);
      ++versions_;
    }
    entry.head = Version{Stamp(timestamp, true), 0};
    ++tombstones_;
    --live_keys_;
    ListIfNeeded(key, &entry);
    return true;
  }

  // ---- queries ----

  // Pair `out` of *results: key and the version's value.
  void CopyPair(uint64_t out, const TableKey& key, const Version* version,
                Table::RangeResults* results) const {
    std::memcpy(&results->keys[out * kKeySize], key.words, kKeySize);
    CopyValue(version, &results->values[out * value_size_]);
  }

  // The live keys of [lo, hi] at `at`, counted up to `limit`.
  uint64_t CountOne(const uint8_t* lo, const uint8_t* hi, uint64_t at,
                    uint64_t limit = ~uint64_t{0}) const {
    const TableKey low = Load(lo);
    const TableKey high = Load(hi);
    KeyOrder<kKeyWords> less;
    if (less(high, low)) return 0;
    uint64_t count = 0;
    for (auto it = map_.lower_bound(low);
         count < limit && it != map_.end() && !less(high, it->first); ++it) {
      if (LiveAt(it->second, at) != nullptr) ++count;
    }
    return count;
  }

  void Neighbour(const Version* version, const TableKey* key, uint8_t* key_out, uint8_t* value_out,
                 uint8_t* found) const {
    if (version == nullptr) {
      std::memset(key_out, 0, kKeySize);
    } else {
      std::memcpy(key_out, key->words, kKeySize);
    }
    CopyValue(version, value_out);
    if (found != nullptr) *found = version != nullptr ? 1 : 0;
  }

  const uint32_t value_size_;
  const bool inline_values_;
  const int threads_;
  Map map_;
  std::vector<uint8_t> cells_;        // values of more than 8 bytes, value_size_ each
  std::vector<uint64_t> free_cells_;  // cells no version holds
  std::vector<TableKey> listed_;      // keys with older versions or a tombstone
  uint64_t live_keys_ = 0;
  uint64_t versions_ = 0;
  uint64_t tombstones_ = 0;
  uint64_t reclaimed_ = 0;
};

}  // namespace

Result<std::unique_ptr<Backend>> CreateCpuBackend(const TableOptions& options, int threads) {
  if (options.value_size < 1 || options.value_size > 128) {
    return Status::InvalidArgument("btree cpu: value size " + std::to_string(options.value_size) +
                                   " is not 1..128");
  }
  const int workers = threads < 1 ? 1 : threads;
  switch (options.key_size) {
    case 8:
      return std::unique_ptr<Backend>(std::make_unique<CpuBackend<1>>(options.value_size, workers));
    case 16:
      return std::unique_ptr<Backend>(std::make_unique<CpuBackend<2>>(options.value_size, workers));
    case 32:
      return std::unique_ptr<Backend>(std::make_unique<CpuBackend<4>>(options.value_size, workers));
  }
  return Status::InvalidArgument("btree cpu: key size " + std::to_string(options.key_size) +
                                 " is not 8, 16 or 32");
}

}  // namespace gpkv::btree::cpu
