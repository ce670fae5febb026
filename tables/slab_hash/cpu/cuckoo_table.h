// slab_hash::cpu::CpuBackend<kKeyWords, kValueWords>: the CPU backend's table for one pair of
// stored types (cpu/backend.cc instantiates it for 8/16/32-byte keys and
// values rounded up to 8, 16, 32, 64 or 128 bytes). A libcuckoo
// cuckoohash_map does the work; this class adds the batch contract of
// backend.h:
//  - write batches are split among worker threads by a hash of the key
//    (ParallelByKey), so every key's operations run in batch order on one
//    thread: the last put of a key wins, the first erase of a key reports it;
//  - gets are split into contiguous ranges (their order does not matter);
//  - growth: before a put batch that could push the load past kGrowLoad the
//    table grows itself, timed (Stats: rehashes, rehash_seconds); libcuckoo's
//    own doublings (when a cuckoo path fails inside a batch) count in
//    rehashes, not in rehash_seconds;
//  - libcuckoo reports failure by exceptions (std::bad_alloc on growth): they
//    are caught here and become a Status; none leaves the backend.
//
// Who may call: cpu/backend.cc only.
// Thread safety: every method may be called from several threads at once.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <libcuckoo/cuckoohash_map.hh>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "gpkv/options.h"
#include "tables/exception_status.h"
#include "tables/slab_hash/backend.h"

namespace gpkv::slab_hash::cpu {

// A batch runs on fewer workers when each would get fewer operations.
constexpr size_t kMinOpsPerWorker = 1024;
// Grow before a put batch that could take the load past this: cuckoo inserts
// slow down as the table fills (libcuckoo doubles only when a path fails).
constexpr double kGrowLoad = 0.9;

// splitmix64's finaliser: every key bit reaches every hash bit.
inline uint64_t MixWord(uint64_t word) {
  word ^= word >> 30;
  word *= 0xbf58476d1ce4e5b9ULL;
  word ^= word >> 27;
  word *= 0x94d049bb133111ebULL;
  return word ^ (word >> 31);
}

// Stored words of a key or value: a uint64_t for one word (libcuckoo's
// fastest case), else an array of words.
template <uint32_t kWords>
struct WordsOf {
  using type = std::array<uint64_t, kWords>;
};
template <>
struct WordsOf<1> {
  using type = uint64_t;
};
template <uint32_t kWords>
using Words = typename WordsOf<kWords>::type;

struct KeyHasher {
  size_t operator()(uint64_t key) const { return MixWord(key + 0x9e3779b97f4a7c15ULL); }
  template <size_t kWords>
  size_t operator()(const std::array<uint64_t, kWords>& key) const {
    uint64_t hash = 0x9e3779b97f4a7c15ULL;
    for (uint64_t word : key) hash = MixWord(hash ^ word);
    return hash;
  }
};

// The worker a key's operations run on: the high bits of a second mix, so
// that the choice is independent of libcuckoo's bucket bits.
inline uint32_t WorkerOf(size_t key_hash, uint32_t workers) {
  const uint64_t mixed = MixWord(key_hash ^ 0x5851f42d4c957f2dULL);
  return static_cast<uint32_t>(((mixed >> 32) * workers) >> 32);
}

// The first error of a batch's workers.
class FirstError {
 public:
  void Set(Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_.ok()) status_ = std::move(status);
    failed_.store(true, std::memory_order_relaxed);
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  Status Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(status_);
  }

 private:
  std::mutex mutex_;
  std::atomic<bool> failed_{false};
  Status status_;
};

template <uint32_t kKeyWords, uint32_t kValueWords>
class CpuBackend final : public Backend {
 public:
  using Key = Words<kKeyWords>;
  using Value = Words<kValueWords>;
  using Map = libcuckoo::cuckoohash_map<Key, Value, KeyHasher>;

  // REQUIRES: key_size == 8 * kKeyWords, value_size <= 8 * kValueWords.
  // Throws what libcuckoo throws (CreateCpuBackend catches it).
  CpuBackend(const TableOptions& options, int threads)
      : map_(InitialSlots(options.expected_keys)),
        value_size_(options.value_size),
        threads_(static_cast<uint32_t>(std::max(1, threads))) {
    static_assert(sizeof(Key) == 8 * kKeyWords && sizeof(Value) == 8 * kValueWords);
    // Growth rehashes on the batch's worker count.
    map_.max_num_worker_threads(threads_ - 1);
    known_hashpower_.store(map_.hashpower());
  }

  Status Put(const uint8_t* keys, const uint8_t* values, size_t count, void*) override {
    GPKV_RETURN_IF_ERROR(GrowFor(count));
    std::atomic<int64_t> inserted{0};
    Status status = ParallelByKey(keys, count, "put", [&](auto&& each) {
      int64_t mine = 0;
      each([&](size_t i, const Key& key) {
        Value value{};
        std::memcpy(&value, values + i * value_size_, value_size_);
        mine += map_.insert_or_assign(key, value) ? 1 : 0;
      });
      inserted.fetch_add(mine, std::memory_order_relaxed);
    });
    keys_.fetch_add(inserted.load(), std::memory_order_relaxed);
    NoteDoublings();
    return status;
  }

  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count, void*) override {
    const uint32_t workers = WorkersFor(count);
    FirstError error;
    auto range = [&](size_t begin, size_t end) {
      try {
        for (size_t i = begin; i < end; ++i) {
          Value value{};
          const bool hit = map_.find(LoadKey(keys, i), value);
          std::memcpy(values + i * value_size_, &value, value_size_);
          if (found != nullptr) found[i] = hit ? 1 : 0;
        }
      } catch (...) {
        error.Set(tables::StatusOfCurrentException("slab_hash cpu get"));
      }
    };
    if (workers == 1) {
      range(0, count);
    } else {
#pragma omp parallel for num_threads(static_cast <int>(workers)) schedule(static, 1)
      for (uint32_t w = 0; w < workers; ++w) range(count * w / workers, count * (w + 1) / workers);
    }
    return error.Take();
  }

  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, void*) override {
    std::atomic<int64_t> removed{0};
    Status status = ParallelByKey(keys, count, "erase", [&](auto&& each) {
      int64_t mine = 0;
      each([&](size_t i, const Key& key) {
        const bool hit = map_.erase(key);
        mine += hit ? 1 : 0;
        if (erased != nullptr) erased[i] = hit ? 1 : 0;
      });
      removed.fetch_add(mine, std::memory_order_relaxed);
    });
    keys_.fetch_sub(removed.load(), std::memory_order_relaxed);
    return status;
  }

  // Copies the pairs out under libcuckoo's whole-table lock, then visits
  // them unlocked: a visitor may call this table (its lock is a spinlock
  // that the visiting thread would otherwise hold).
  Status Scan(const Table::ScanVisitor& visit) override {
    constexpr size_t kKeyBytes = sizeof(Key);
    const size_t pair_bytes = kKeyBytes + value_size_;
    std::vector<uint8_t> pairs;
    try {
      auto locked = map_.lock_table();
      pairs.resize(locked.size() * pair_bytes);
      uint8_t* out = pairs.data();
      for (const auto& pair : locked) {
        std::memcpy(out, &pair.first, kKeyBytes);
        std::memcpy(out + kKeyBytes, &pair.second, value_size_);
        out += pair_bytes;
      }
    } catch (...) {
      return tables::StatusOfCurrentException("slab_hash cpu scan");
    }
    for (size_t at = 0; at < pairs.size(); at += pair_bytes) {
      if (!visit(pairs.data() + at, pairs.data() + at + kKeyBytes)) break;
    }
    return Status::OK();
  }

  Result<slab_hash::Stats> Stats() override {
    NoteDoublings();
    slab_hash::Stats stats;
    stats.keys = static_cast<uint64_t>(std::max<int64_t>(0, keys_.load()));
    stats.buckets = map_.bucket_count();
    stats.slots = map_.capacity();
    stats.load_factor =
        stats.slots ? static_cast<double>(stats.keys) / static_cast<double>(stats.slots) : 0.0;
    stats.bytes = BytesFor(stats.buckets);
    stats.memory_utilisation = stats.bytes
                                   ? static_cast<double>(stats.keys) * (sizeof(Key) + value_size_) /
                                         static_cast<double>(stats.bytes)
                                   : 0.0;
    stats.rehashes = rehashes_.load();
    stats.rehash_seconds = static_cast<double>(rehash_nanoseconds_.load()) * 1e-9;
    return stats;
  }

  // RAM a new table for `expected_keys` takes (its buckets are a power of
  // two, as libcuckoo sizes them).
  static uint64_t InitialBytes(uint64_t expected_keys) {
    const uint64_t slots = InitialSlots(expected_keys);
    constexpr uint64_t kSlots = libcuckoo::DEFAULT_SLOT_PER_BUCKET;
    uint64_t buckets = 1;
    while (buckets * kSlots < slots) buckets *= 2;
    return BytesFor(buckets);
  }

 private:
  // Slots for `expected_keys` at most kGrowLoad full, so that loading the
  // expected keys does not grow the table.
  static uint64_t InitialSlots(uint64_t expected_keys) {
    const double wanted = static_cast<double>(expected_keys) / kGrowLoad;
    return std::max<uint64_t>(libcuckoo::DEFAULT_SLOT_PER_BUCKET,
                              static_cast<uint64_t>(wanted) + 1);
  }

  // RAM the map holds: its buckets (pairs, partial keys, occupied flags) and
  // its locks (one 64-byte spinlock per bucket, at most 2^16).
  static uint64_t BytesFor(uint64_t buckets) {
    constexpr size_t kSlots = libcuckoo::DEFAULT_SLOT_PER_BUCKET;
    constexpr size_t kPair = sizeof(std::pair<Key, Value>);
    constexpr size_t kBucketRaw = kSlots * (kPair + sizeof(uint8_t) + sizeof(bool));
    constexpr size_t kAlign = alignof(std::pair<Key, Value>);
    constexpr size_t kBucket = (kBucketRaw + kAlign - 1) / kAlign * kAlign;
    const uint64_t locks = std::min<uint64_t>(buckets, uint64_t{1} << 16);
    return buckets * kBucket + locks * 64 + sizeof(Map);
  }

  static Key LoadKey(const uint8_t* keys, size_t i) {
    Key key;
    std::memcpy(&key, keys + i * sizeof(Key), sizeof(Key));
    return key;
  }

  uint32_t WorkersFor(size_t count) const {
    return static_cast<uint32_t>(
        std::min<size_t>(threads_, std::max<size_t>(1, count / kMinOpsPerWorker)));
  }

  // Runs body(each) once per worker, where each(op) calls op(i, key)
  // for the batch's operations that worker owns, in batch order. Every
  // operation on one key belongs to one worker.
  template <typename Body>
  Status ParallelByKey(const uint8_t* keys, size_t count, const char* what, const Body& body) {
    const uint32_t workers = WorkersFor(count);
    FirstError error;
    const std::string where = std::string("slab_hash cpu ") + what;
    if (workers == 1) {
      try {
        body([&](auto&& op) {
          for (size_t i = 0; i < count; ++i) op(i, LoadKey(keys, i));
        });
      } catch (...) {
        error.Set(tables::StatusOfCurrentException(where));
      }
      return error.Take();
    }
    std::vector<uint16_t>& owner = OwnerScratch(count);
    KeyHasher hasher;
#pragma omp parallel num_threads(static_cast <int>(workers))
    {
#pragma omp for schedule(static)
      for (size_t i = 0; i < count; ++i) {
        owner[i] = static_cast<uint16_t>(WorkerOf(hasher(LoadKey(keys, i)), workers));
      }
#pragma omp for schedule(static, 1)
      for (uint32_t w = 0; w < workers; ++w) {
        try {
          body([&](auto&& op) {
            for (size_t i = 0; i < count; ++i) {
              if (owner[i] == w) op(i, LoadKey(keys, i));
            }
          });
        } catch (...) {
          error.Set(tables::StatusOfCurrentException(where));
        }
      }
    }
    return error.Take();
  }

  // The calling thread's worker-choice array, grown to `count`.
  static std::vector<uint16_t>& OwnerScratch(size_t count) {
    thread_local std::vector<uint16_t> owner;
    if (owner.size() < count) owner.resize(count);
    return owner;
  }

  // Grows the table before a put batch of `count` that could take the load
  // past kGrowLoad: to twice the keys it could then hold.
  Status GrowFor(size_t count) {
    const auto could_hold = [&] {
      return static_cast<double>(std::max<int64_t>(0, keys_.load()) + count);
    };
    if (could_hold() <= kGrowLoad * static_cast<double>(map_.capacity())) return Status::OK();
    std::lock_guard<std::mutex> lock(growth_mutex_);
    if (could_hold() <= kGrowLoad * static_cast<double>(map_.capacity())) return Status::OK();
    NoteDoublings();
    const auto start = std::chrono::steady_clock::now();
    try {
      map_.reserve(static_cast<size_t>(2 * could_hold()));
    } catch (...) {
      return tables::StatusOfCurrentException("slab_hash cpu put: growing the table");
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    rehash_nanoseconds_.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
    rehashes_.fetch_add(1);
    known_hashpower_.store(map_.hashpower());
    return Status::OK();
  }

  // Counts libcuckoo's own doublings (each adds one to the hash power) since
  // the last look.
  void NoteDoublings() {
    const size_t now = map_.hashpower();
    size_t known = known_hashpower_.load();
    while (now > known) {
      if (known_hashpower_.compare_exchange_weak(known, now)) {
        rehashes_.fetch_add(now - known);
        return;
      }
    }
  }

  Map map_;
  const uint32_t value_size_;
  const uint32_t threads_;
  std::atomic<int64_t> keys_{0};  // live keys (exact: inserts minus erases)
  std::mutex growth_mutex_;       // one growth at a time (reserve may also shrink)
  std::atomic<size_t> known_hashpower_{0};
  std::atomic<uint64_t> rehashes_{0};
  std::atomic<uint64_t> rehash_nanoseconds_{0};
};

}  // namespace gpkv::slab_hash::cpu
