#include "tables/btree/cpu/backend.h"

#include <absl/container/btree_map.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tables/btree/keys.h"
#include "tables/exception_status.h"

namespace gpkv::btree::cpu {
namespace {

// Batches smaller than this run their reads on the calling thread alone.
constexpr size_t kParallelQueries = 256;

// A key of kKeyWords 8-byte words, ordered as keys.h says. An 8-byte key
// is a plain uint64_t ordered by std::less (the same order on this
// little-endian host), for which absl::btree_map searches a node linearly,
// without the mispredicted branches of a binary search.
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

template <uint32_t kKeyWords>
struct KeyType {
  using Type = Key<kKeyWords>;
  using Order = KeyOrder<kKeyWords>;
};

template <>
struct KeyType<1> {
  using Type = uint64_t;
  using Order = std::less<uint64_t>;
};

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "8-byte keys compare as uint64_t");

template <typename TableKey>
const uint8_t* BytesOf(const TableKey& key) {
  return reinterpret_cast<const uint8_t*>(&key);
}

template <typename TableKey>
struct KeyHash {
  size_t operator()(const TableKey& key) const {
    uint64_t hash = 0;
    for (size_t w = 0; w < sizeof(TableKey) / sizeof(uint64_t); ++w) {
      uint64_t word;
      std::memcpy(&word, BytesOf(key) + w * sizeof(uint64_t), sizeof(word));
      hash = (hash ^ word) * 0x9E3779B97F4A7C15ull;
    }
    return static_cast<size_t>(hash ^ hash >> 29);
  }
};

template <typename TableKey>
struct KeyEqual {
  bool operator()(const TableKey& a, const TableKey& b) const {
    return std::memcmp(&a, &b, sizeof(TableKey)) == 0;
  }
};

// One version of a key, 16 bytes: in `stamp` its timestamp (the high 61
// bits) and three flags (the low bits); in `payload` the value's bytes
// (values of up to 8 bytes) or the index of its cell in the value store.
// The map holds each key's newest version (its head) as the whole mapped
// value, so that a node of the map holds more keys and a lookup touches
// fewer cache lines; the older versions a live snapshot still sees sit in
// a side table, looked up only when the head's kHasOlder says so.
struct Version {
  uint64_t stamp = 0;
  uint64_t payload = 0;
};

constexpr uint64_t kTombstone = 1;  // the version is a tombstone
constexpr uint64_t kHasOlder = 2;   // head only: the side table holds older versions
constexpr uint64_t kListed = 4;     // head only: the key is in the list to reclaim from
constexpr uint64_t kHeadFlags = kHasOlder | kListed;
constexpr int kFlagBits = 3;
// The largest timestamp a stamp holds. The core's clock counts write
// batches from 1, so it is out of reach (2^61 batches); Write still refuses
// a batch past it rather than wrap.
constexpr uint64_t kMaxTimestamp = ~uint64_t{0} >> kFlagBits;

uint64_t Stamp(uint64_t timestamp, bool tombstone) {
  return timestamp << kFlagBits | (tombstone ? kTombstone : 0);
}
uint64_t TimestampOf(const Version& version) { return version.stamp >> kFlagBits; }
bool IsTombstone(const Version& version) { return (version.stamp & kTombstone) != 0; }
bool HasOlder(const Version& head) { return (head.stamp & kHasOlder) != 0; }
bool IsListed(const Version& head) { return (head.stamp & kListed) != 0; }

// `head` made the newest version `fresh`, keeping the head's flags.
void ReplaceHead(Version* head, const Version& fresh) {
  head->stamp = fresh.stamp | (head->stamp & kHeadFlags);
  head->payload = fresh.payload;
}

template <uint32_t kKeyWords>
class CpuBackend final : public Backend {
 public:
  using TableKey = typename KeyType<kKeyWords>::Type;
  using Order = typename KeyType<kKeyWords>::Order;
  using Map = absl::btree_map<TableKey, Version, Order>;
  // A key's older versions, newest first (never empty).
  using Older =
      std::unordered_map<TableKey, std::vector<Version>, KeyHash<TableKey>, KeyEqual<TableKey>>;
  static constexpr size_t kKeySize = kKeyWords * sizeof(uint64_t);
  static_assert(sizeof(TableKey) == kKeySize);

  CpuBackend(uint32_t value_size, int threads)
      : value_size_(value_size), inline_values_(value_size <= 8), threads_(threads) {}

  Status Write(const WriteBatch& batch) override {
    if (batch.timestamp > kMaxTimestamp) {
      return Status::Unsupported("btree cpu: timestamp " + std::to_string(batch.timestamp) +
                                 " is past the largest the backend holds, " +
                                 std::to_string(kMaxTimestamp));
    }
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
        if (it == map_.end() || !IsListed(it->second)) continue;  // gone, or seen this pass
        Version& head = it->second;
        head.stamp &= ~kListed;
        Trim(key, &head, live);
        if (!HasOlder(head) && IsTombstone(head)) {
          DropLoneTombstone(it);
          continue;
        }
        if (Listable(head)) still_listed.push_back(key);
      }
      for (const TableKey& key : still_listed) map_.find(key)->second.stamp |= kListed;
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
    // The side table: its buckets, a node per key (the pair, the next
    // pointer and the cached hash) and each key's vector of older versions.
    uint64_t older_bytes = older_.bucket_count() * sizeof(void*) +
                           older_.size() * (sizeof(typename Older::value_type) + 2 * sizeof(void*));
    for (const auto& [key, older] : older_) older_bytes += older.capacity() * sizeof(Version);
    // The buffers kept for parallel Ranges.
    uint64_t spare_bytes = 0;
    std::lock_guard<std::mutex> lock(spare_mutex_);
    for (const PairBuffer& buffer : spare_) {
      spare_bytes += buffer.keys.capacity() + buffer.values.capacity();
    }
    stats.bytes = map_.size() * sizeof(typename Map::value_type) + older_bytes + cells_.capacity() +
                  free_cells_.capacity() * sizeof(uint64_t) +
                  listed_.capacity() * sizeof(TableKey) + spare_bytes;
    return stats;
  }

  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n, uint64_t at) override {
#pragma omp parallel for num_threads(threads_) schedule(static) if (n >= kParallelQueries)
    for (size_t i = 0; i < n; ++i) {
      const Version* version = nullptr;
      auto it = map_.find(Load(keys + i * kKeySize));
      if (it != map_.end()) version = LiveAt(it->first, it->second, at);
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

  // One walk per query (up to its limit): the smallest keys walking up
  // from lo, or the largest walking down from hi (and then put in
  // ascending order). Run on one thread, the walks append straight to the
  // results; on several, each worker appends its blocks of queries to a
  // buffer of its own (kept for the next Range), and once the offsets are
  // summed each block is copied into place.
  Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n,
               tables::RangeLimit limit, uint64_t at) override {
    std::vector<PairBuffer> buffers;
    try {
      results->offsets.assign(n + 1, 0);
      if (n < kParallelQueries) {
        PairBuffer out;
        out.keys.swap(results->keys);  // their storage reused
        out.values.swap(results->values);
        out.keys.clear();
        out.values.clear();
        for (size_t i = 0; i < n; ++i) {
          results->offsets[i + 1] =
              results->offsets[i] + RangeOne(lo + i * kKeySize, hi + i * kKeySize, limit, at, &out);
        }
        out.keys.resize(out.pairs * kKeySize);
        out.values.resize(out.pairs * value_size_);
        results->keys.swap(out.keys);
        results->values.swap(out.values);
        return Status::OK();
      }
      buffers = TakeBuffers();
      const size_t blocks = (n + kRangeBlock - 1) / kRangeBlock;
      std::vector<std::exception_ptr> errors(threads_);
      // Block b's pairs: from pair first_pair[b] of buffers[buffer_of[b]].
      std::vector<int> buffer_of(blocks);
      std::vector<uint64_t> first_pair(blocks);
#pragma omp parallel num_threads(threads_)
      {
        const int worker = omp_get_thread_num();
        PairBuffer& buffer = buffers[worker];
#pragma omp for schedule(dynamic, 1)
        for (size_t b = 0; b < blocks; ++b) {
          if (errors[worker] != nullptr) continue;
          buffer_of[b] = worker;
          first_pair[b] = buffer.pairs;
          try {
            for (size_t i = b * kRangeBlock; i < std::min(n, (b + 1) * kRangeBlock); ++i) {
              results->offsets[i + 1] =
                  RangeOne(lo + i * kKeySize, hi + i * kKeySize, limit, at, &buffer);
            }
          } catch (...) {
            errors[worker] = std::current_exception();
          }
        }
      }
      for (const std::exception_ptr& error : errors) {
        if (error != nullptr) std::rethrow_exception(error);
      }
      for (size_t i = 0; i < n; ++i) results->offsets[i + 1] += results->offsets[i];
      const uint64_t pairs = results->offsets[n];
      results->keys.resize(pairs * kKeySize);
      results->values.resize(pairs * value_size_);
#pragma omp parallel for num_threads(threads_) schedule(static)
      for (size_t b = 0; b < blocks; ++b) {
        const uint64_t begin = results->offsets[b * kRangeBlock];
        const uint64_t count = results->offsets[std::min(n, (b + 1) * kRangeBlock)] - begin;
        if (count == 0) continue;
        const PairBuffer& buffer = buffers[buffer_of[b]];
        std::memcpy(&results->keys[begin * kKeySize], &buffer.keys[first_pair[b] * kKeySize],
                    count * kKeySize);
        std::memcpy(&results->values[begin * value_size_],
                    &buffer.values[first_pair[b] * value_size_], count * value_size_);
      }
    } catch (...) {
      GiveBack(&buffers);
      return tables::StatusOfCurrentException("btree cpu range");
    }
    GiveBack(&buffers);
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
        if (const Version* version = LiveAt(it->first, it->second, at)) {
          return {&it->first, version};
        }
      }
      return {};
    });
  }

  Status Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values, uint8_t* found,
                     size_t n, uint64_t at) override {
    return Neighbours(keys, previous_keys, values, found, n, [&](const TableKey& key) -> LiveEntry {
      for (auto it = map_.upper_bound(key); it != map_.begin();) {
        --it;
        if (const Version* version = LiveAt(it->first, it->second, at)) {
          return {&it->first, version};
        }
      }
      return {};
    });
  }

  Status ScanChunk(const uint8_t* after, size_t limit, uint64_t at, std::vector<uint8_t>* keys,
                   std::vector<uint8_t>* values) override {
    try {
      auto it = after == nullptr ? map_.begin() : map_.upper_bound(Load(after));
      for (size_t pairs = 0; pairs < limit && it != map_.end(); ++it) {
        const Version* version = LiveAt(it->first, it->second, at);
        if (version == nullptr) continue;
        const auto* key_bytes = BytesOf(it->first);
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
  // Queries a parallel Range hands a worker at a time.
  static constexpr size_t kRangeBlock = 16;

  // Spare buffers of more bytes than this are freed rather than kept.
  static constexpr size_t kSpareBytes = size_t{8} << 20;

  // A Range's pairs as a walk appends them: `pairs` of them, in arrays
  // sized for at least that many (grown by doubling).
  struct PairBuffer {
    std::vector<uint8_t> keys;
    std::vector<uint8_t> values;
    uint64_t pairs = 0;
  };

  // threads_ empty buffers for a parallel Range, spare ones where there
  // are (their storage reused: no allocation, no page faults).
  std::vector<PairBuffer> TakeBuffers() {
    std::vector<PairBuffer> buffers(threads_);
    std::lock_guard<std::mutex> lock(spare_mutex_);
    for (PairBuffer& buffer : buffers) {
      if (spare_.empty()) break;
      buffer = std::move(spare_.back());
      spare_.pop_back();
      buffer.pairs = 0;
    }
    return buffers;
  }

  // Keeps the buffers of a Range for the next one, up to threads_ of them
  // of at most kSpareBytes each.
  void GiveBack(std::vector<PairBuffer>* buffers) {
    std::lock_guard<std::mutex> lock(spare_mutex_);
    for (PairBuffer& buffer : *buffers) {
      if (spare_.size() >= static_cast<size_t>(threads_)) break;
      if (buffer.keys.capacity() + buffer.values.capacity() > kSpareBytes) continue;
      if (buffer.keys.empty()) continue;
      try {
        spare_.push_back(std::move(buffer));
      } catch (...) {
        return;  // out of memory: the buffers are freed
      }
    }
  }

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
    std::memcpy(&key, bytes, kKeySize);
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

  // The version a reader at `at` sees of `key`, whose newest version is
  // `head`, or null when it sees the key absent.
  const Version* LiveAt(const TableKey& key, const Version& head, uint64_t at) const {
    const Version* seen = nullptr;
    if (VisibleAt(TimestampOf(head), at)) {
      seen = &head;
    } else if (HasOlder(head)) {
      for (const Version& version : older_.find(key)->second) {
        if (VisibleAt(TimestampOf(version), at)) {
          seen = &version;
          break;
        }
      }
    }
    return seen != nullptr && !IsTombstone(*seen) ? seen : nullptr;
  }

  static bool Listable(const Version& head) { return HasOlder(head) || IsTombstone(head); }

  void ListIfNeeded(const TableKey& key, Version* head) {
    if (Listable(*head) && !IsListed(*head)) {
      listed_.push_back(key);
      head->stamp |= kListed;
    }
  }

  void DropVersion(const Version& version) {
    FreeValue(version);
    --versions_;
    if (IsTombstone(version)) --tombstones_;
    ++reclaimed_;
  }

  // Drops the older versions of `key` (newest version `head`) no live
  // snapshot sees.
  void Trim(const TableKey& key, Version* head, LiveSnapshots live) {
    if (!HasOlder(*head)) return;
    auto it = older_.find(key);
    std::vector<Version>& older = it->second;
    uint64_t newer_timestamp = TimestampOf(*head);
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
    if (kept == 0) {
      older_.erase(it);
      head->stamp &= ~kHasOlder;
    }
  }

  // A key left with only a tombstone: absent to every reader.
  void DropLoneTombstone(typename Map::iterator it) {
    DropVersion(it->second);
    map_.erase(it);
  }

  // Moves `key`'s newest version `head` into its older versions (a
  // snapshot sees it). An allocation that throws changes nothing.
  void KeepHead(const TableKey& key, Version* head) {
    auto [it, added] = older_.try_emplace(key);
    try {
      it->second.insert(it->second.begin(), Version{head->stamp & ~kHeadFlags, head->payload});
    } catch (...) {
      if (added) older_.erase(it);
      throw;
    }
    head->stamp |= kHasOlder;
  }

  // Returns the position after the key's entry (the hint for a larger key).
  // An allocation that throws leaves the key as it was.
  typename Map::iterator Put(typename Map::iterator hint, const TableKey& key, const uint8_t* value,
                             uint64_t timestamp, LiveSnapshots live) {
    const size_t size_before = map_.size();
    auto it = map_.try_emplace(hint, key);
    Version& head = it->second;
    Version fresh{Stamp(timestamp, false), 0};
    if (map_.size() != size_before) {
      try {
        StoreNewValue(&fresh, value);
      } catch (...) {
        map_.erase(it);
        throw;
      }
      head = fresh;
      ++versions_;
      ++live_keys_;
      return std::next(it);
    }
    Trim(key, &head, live);
    const bool was_live = !IsTombstone(head);
    if (WriteInPlace(TimestampOf(head), live) && was_live) {
      OverwriteValue(&head, value);
      head.stamp = fresh.stamp | (head.stamp & kHeadFlags);
    } else {
      StoreNewValue(&fresh, value);
      if (WriteInPlace(TimestampOf(head), live)) {
        --tombstones_;  // the tombstone no snapshot sees is replaced
      } else {
        try {
          KeepHead(key, &head);
        } catch (...) {
          FreeValue(fresh);
          throw;
        }
        ++versions_;
      }
      ReplaceHead(&head, fresh);
      if (!was_live) ++live_keys_;
    }
    ListIfNeeded(key, &head);
    return std::next(it);
  }

  // Returns whether the key was live.
  bool Erase(const TableKey& key, uint64_t timestamp, LiveSnapshots live) {
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    Version& head = it->second;
    Trim(key, &head, live);
    if (IsTombstone(head)) {
      if (!HasOlder(head)) DropLoneTombstone(it);
      return false;
    }
    // What may throw (an allocation) comes before any change.
    if (WriteInPlace(TimestampOf(head), live)) {
      FreeValue(head);
      if (!HasOlder(head)) {
        --versions_;
        --live_keys_;
        map_.erase(it);
        return true;
      }
    } else {
      KeepHead(key, &head);
      ++versions_;
    }
    ReplaceHead(&head, Version{Stamp(timestamp, true), 0});
    ++tombstones_;
    --live_keys_;
    ListIfNeeded(key, &head);
    return true;
  }

  // ---- queries ----

  // Appends the key and the version's value to *buffer.
  void Append(const TableKey& key, const Version* version, PairBuffer* buffer) const {
    if ((buffer->pairs + 1) * kKeySize > buffer->keys.size()) {
      const uint64_t room = std::max<uint64_t>(64, 2 * buffer->pairs);
      buffer->keys.resize(room * kKeySize);
      buffer->values.resize(room * value_size_);
    }
    std::memcpy(&buffer->keys[buffer->pairs * kKeySize], &key, kKeySize);
    CopyValue(version, &buffer->values[buffer->pairs * value_size_]);
    ++buffer->pairs;
  }

  // Appends the pairs of one Range query (up to limit.pairs, ascending) to
  // *buffer in one walk; returns how many.
  uint64_t RangeOne(const uint8_t* lo, const uint8_t* hi, tables::RangeLimit limit, uint64_t at,
                    PairBuffer* buffer) const {
    const TableKey low = Load(lo);
    const TableKey high = Load(hi);
    const Order less;
    if (less(high, low)) return 0;
    const uint64_t first = buffer->pairs;
    uint64_t count = 0;
    if (limit.largest) {
      for (auto it = map_.upper_bound(high); count < limit.pairs && it != map_.begin();) {
        --it;
        if (less(it->first, low)) break;
        if (const Version* version = LiveAt(it->first, it->second, at)) {
          Append(it->first, version, buffer);
          ++count;
        }
      }
      // Walked down: turn the pairs ascending.
      for (uint64_t a = first, b = first + count; a + 1 < b; ++a) {
        --b;
        std::swap_ranges(&buffer->keys[a * kKeySize], &buffer->keys[(a + 1) * kKeySize],
                         &buffer->keys[b * kKeySize]);
        std::swap_ranges(&buffer->values[a * value_size_], &buffer->values[(a + 1) * value_size_],
                         &buffer->values[b * value_size_]);
      }
    } else {
      for (auto it = map_.lower_bound(low);
           count < limit.pairs && it != map_.end() && !less(high, it->first); ++it) {
        if (const Version* version = LiveAt(it->first, it->second, at)) {
          Append(it->first, version, buffer);
          ++count;
        }
      }
    }
    return count;
  }

  // The live keys of [lo, hi] at `at`.
  uint64_t CountOne(const uint8_t* lo, const uint8_t* hi, uint64_t at) const {
    const TableKey low = Load(lo);
    const TableKey high = Load(hi);
    const Order less;
    if (less(high, low)) return 0;
    uint64_t count = 0;
    for (auto it = map_.lower_bound(low); it != map_.end() && !less(high, it->first); ++it) {
      if (LiveAt(it->first, it->second, at) != nullptr) ++count;
    }
    return count;
  }

  void Neighbour(const Version* version, const TableKey* key, uint8_t* key_out, uint8_t* value_out,
                 uint8_t* found) const {
    if (version == nullptr) {
      std::memset(key_out, 0, kKeySize);
    } else {
      std::memcpy(key_out, key, kKeySize);
    }
    CopyValue(version, value_out);
    if (found != nullptr) *found = version != nullptr ? 1 : 0;
  }

  const uint32_t value_size_;
  const bool inline_values_;
  const int threads_;
  Map map_;                           // each key's newest version
  Older older_;                       // the older versions of the keys flagged kHasOlder
  std::vector<uint8_t> cells_;        // values of more than 8 bytes, value_size_ each
  std::vector<uint64_t> free_cells_;  // cells no version holds
  std::vector<TableKey> listed_;      // keys with older versions or a tombstone
  uint64_t live_keys_ = 0;
  uint64_t versions_ = 0;
  uint64_t tombstones_ = 0;
  uint64_t reclaimed_ = 0;
  std::mutex spare_mutex_;         // guards spare_ (parallel Ranges run beside each other)
  std::vector<PairBuffer> spare_;  // the buffers of earlier parallel Ranges
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
