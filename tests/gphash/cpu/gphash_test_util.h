// Helpers for the GPHash tests: a table in a fresh /dev/shm pool that can be
// closed and reopened (the CpuBackend object and the pm::Pool destroyed, as after
// a process exit), deterministic keys and values of any size, and access to
// the slots of a key for tests that write slot bytes directly.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/hash.h"
#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/cpu/backend.h"
#include "tables/gphash/layout.h"
#include "tables/gphash/reader.h"
#include "test_util.h"

namespace gpkv::gphash_test {

inline uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Key number `id` as key_size bytes. 8-byte keys are the id itself, so 0 and
// ~0 are keys like any other.
inline void MakeKey(uint64_t id, uint32_t key_size, uint8_t* out) {
  std::memcpy(out, &id, 8);
  for (uint32_t i = 8; i < key_size; i += 8) {
    uint64_t word = SplitMix(id * 131 + i);
    std::memcpy(out + i, &word, 8);
  }
}

inline void MakeValue(uint64_t id, uint64_t version, uint32_t value_size, uint8_t* out) {
  for (uint32_t i = 0; i < value_size; i += 8) {
    uint64_t word = SplitMix(id ^ (version << 40) ^ (uint64_t{i} << 32));
    std::memcpy(out + i, &word, std::min<uint32_t>(8, value_size - i));
  }
}

inline TableOptions Options(uint32_t key_size, uint32_t value_size, uint8_t levels = 2,
                            uint8_t locations = 2, uint8_t slots = 8,
                            uint64_t expected_keys = 1024) {
  TableOptions options;
  options.key_size = key_size;
  options.value_size = value_size;
  options.expected_keys = expected_keys;
  options.hash.levels = levels;
  options.hash.hash_locations = locations;
  options.hash.slots_per_bucket = slots;
  return options;
}

// One table in its own pool file.
class TestTable {
 public:
  TestTable(const std::string& tag, const TableOptions& options,
            uint64_t pool_size = uint64_t{64} << 20, int threads = 2)
      : file_(tag), options_(options), threads_(threads) {
    auto pool = pm::Pool::Create(file_.path(), pool_size, SyncMode::kBatch);
    EXPECT_TRUE(pool.ok()) << pool.status().ToString();
    pool_ = std::move(*pool);
    auto root = gphash::cpu::CpuBackend::Create(*pool_, /*table_id=*/7, options);
    EXPECT_TRUE(root.ok()) << root.status().ToString();
    root_ = *root;
    OpenTable(nullptr);
  }
  ~TestTable() { Close(); }

  void Close() {
    table_.reset();
    pool_.reset();
  }
  // Closes and opens again; open-time recovery reports into `report`.
  void Reopen(recovery::Report* report = nullptr) {
    Close();
    auto pool = pm::Pool::Open(file_.path(), /*read_only=*/false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    pool_ = std::move(*pool);
    OpenTable(report);
  }
  Status TryReopen(recovery::Report* report = nullptr) {
    Close();
    auto pool = pm::Pool::Open(file_.path(), /*read_only=*/false, SyncMode::kBatch);
    if (!pool.ok()) return pool.status();
    pool_ = std::move(*pool);
    auto table = gphash::cpu::CpuBackend::Open(*pool_, "t", root_, threads_, report);
    if (!table.ok()) return table.status();
    table_ = std::move(*table);
    return Status::OK();
  }
  // Closes the table but keeps the pool mapped (for byte-level edits).
  void CloseTableOnly() { table_.reset(); }
  void OpenTable(recovery::Report* report) {
    auto table = gphash::cpu::CpuBackend::Open(*pool_, "t", root_, threads_, report);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    table_ = std::move(*table);
  }

  gphash::cpu::CpuBackend& table() { return *table_; }
  bool is_open() const { return table_ != nullptr; }
  pm::Pool& pool() { return *pool_; }
  uint64_t root() const { return root_; }
  const std::string& path() const { return file_.path(); }
  const TableOptions& options() const { return options_; }
  uint32_t K() const { return options_.key_size; }
  uint32_t V() const { return options_.value_size; }
  void set_threads(int threads) { threads_ = threads; }

  std::vector<uint8_t> Keys(const std::vector<uint64_t>& ids) const {
    std::vector<uint8_t> keys(ids.size() * K());
    for (size_t i = 0; i < ids.size(); ++i) MakeKey(ids[i], K(), &keys[i * K()]);
    return keys;
  }
  std::vector<uint8_t> Values(const std::vector<uint64_t>& ids,
                              const std::vector<uint64_t>& versions) const {
    std::vector<uint8_t> values(ids.size() * V());
    for (size_t i = 0; i < ids.size(); ++i) MakeValue(ids[i], versions[i], V(), &values[i * V()]);
    return values;
  }
  Status Put(const std::vector<uint64_t>& ids, const std::vector<uint64_t>& versions) {
    std::vector<uint8_t> keys = Keys(ids);
    std::vector<uint8_t> values = Values(ids, versions);
    return table_->Put(keys.data(), values.data(), ids.size());
  }
  Status Put(const std::vector<uint64_t>& ids, uint64_t version) {
    return Put(ids, std::vector<uint64_t>(ids.size(), version));
  }
  // Values (or nullopt) of ids.
  std::vector<std::optional<std::vector<uint8_t>>> Get(const std::vector<uint64_t>& ids) {
    std::vector<uint8_t> keys = Keys(ids);
    std::vector<uint8_t> values(ids.size() * V(), 0xee);
    std::vector<uint8_t> found(ids.size(), 0xee);
    Status status = table_->Get(keys.data(), values.data(), found.data(), ids.size());
    EXPECT_TRUE(status.ok()) << status.ToString();
    std::vector<std::optional<std::vector<uint8_t>>> out(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_LE(found[i], 1);
      if (found[i] == 1) {
        out[i] = std::vector<uint8_t>(values.begin() + i * V(), values.begin() + (i + 1) * V());
      } else {
        for (uint32_t b = 0; b < V(); ++b) EXPECT_EQ(values[i * V() + b], 0);
      }
    }
    return out;
  }
  // True if id holds the value of (id, version).
  bool Holds(uint64_t id, uint64_t version) {
    auto got = Get({id})[0];
    if (!got) return false;
    std::vector<uint8_t> want(V());
    MakeValue(id, version, V(), want.data());
    return *got == want;
  }
  std::vector<uint8_t> Erase(const std::vector<uint64_t>& ids) {
    std::vector<uint8_t> keys = Keys(ids);
    std::vector<uint8_t> erased(ids.size(), 0xee);
    Status status = table_->Erase(keys.data(), erased.data(), ids.size());
    EXPECT_TRUE(status.ok()) << status.ToString();
    return erased;
  }

  // ---- slot access ----
  gphash::GphashView View() {
    auto view = gphash::ReadGphash(*pool_, "t", root_);
    EXPECT_TRUE(view.ok()) << view.status().ToString();
    return *view;
  }

 private:
  testutil::TempPool file_;
  TableOptions options_;
  int threads_;
  std::unique_ptr<pm::Pool> pool_;
  uint64_t root_ = 0;
  std::unique_ptr<gphash::cpu::CpuBackend> table_;
};

// What an open table answers: every pair its Scan visits, and its Get of
// `keys` (count keys of key_size bytes; nullopt where not found).
struct Answers {
  std::map<std::vector<uint8_t>, std::vector<uint8_t>> pairs;
  std::vector<std::optional<std::vector<uint8_t>>> gets;
  bool operator==(const Answers& other) const { return pairs == other.pairs && gets == other.gets; }
};

inline Answers AnswersOf(const gphash::cpu::CpuBackend& table, const std::vector<uint8_t>& keys) {
  const uint32_t key_size = table.key_size();
  const uint32_t value_size = table.value_size();
  Answers answers;
  Status scanned = table.Scan([&](const uint8_t* key, const uint8_t* value) {
    auto inserted = answers.pairs.emplace(std::vector<uint8_t>(key, key + key_size),
                                          std::vector<uint8_t>(value, value + value_size));
    EXPECT_TRUE(inserted.second) << "the scan visited a key twice";
    return true;
  });
  EXPECT_TRUE(scanned.ok()) << scanned.ToString();
  const size_t count = keys.size() / key_size;
  std::vector<uint8_t> values(count * value_size);
  std::vector<uint8_t> found(count);
  auto& reader = const_cast<gphash::cpu::CpuBackend&>(table);
  Status got = reader.Get(keys.data(), values.data(), found.data(), count);
  EXPECT_TRUE(got.ok()) << got.ToString();
  for (size_t i = 0; i < count; ++i) {
    if (found[i] == 0) {
      answers.gets.emplace_back();
    } else {
      answers.gets.emplace_back(std::vector<uint8_t>(values.begin() + i * value_size,
                                                     values.begin() + (i + 1) * value_size));
    }
  }
  return answers;
}

// Where a slot is, and its bytes.
struct SlotAt {
  uint32_t level = 0;
  uint64_t bucket = 0;
  uint32_t slot = 0;
  uint64_t word_offset = 0;
  uint64_t key_offset = 0;
  uint64_t value_offset = 0;
};

inline SlotAt Locate(const gphash::GphashView& view, uint32_t level, uint64_t bucket,
                     uint32_t slot) {
  SlotAt at;
  at.level = level;
  at.bucket = bucket;
  at.slot = slot;
  uint64_t base = view.BucketOffset(level, bucket);
  at.word_offset = base + gphash::SlotWordOffset(slot);
  at.key_offset = base + gphash::KeyOffset(view.geo.slots_per_bucket, view.key_size, slot);
  at.value_offset = base + gphash::ValueWordOffset(view.geo.slots_per_bucket, view.key_size, slot);
  return at;
}

// The candidate buckets of `hash` in level `level` of `view`, each once
// (gphash::CandidateBucketsOfLevel).
inline std::vector<uint64_t> CandidateBuckets(const gphash::GphashView& view,
                                              const format::KeyHash& hash, uint32_t level) {
  const gphash::LevelCandidates candidates = gphash::CandidateBucketsOfLevel(
      hash, view.geo.hash_locations, view.levels[level].bucket_count,
      gphash::CandidateOrder::kFirstLocation);
  return std::vector<uint64_t>(candidates.buckets, candidates.buckets + candidates.count);
}

// Every VALID slot holding `key`.
inline std::vector<SlotAt> FindKey(const pm::Pool& pool, const gphash::GphashView& view,
                                   const uint8_t* key) {
  std::vector<SlotAt> out;
  format::KeyHash hash = format::HashKey(key, view.key_size, view.geo.hash_seed);
  for (uint32_t level = 0; level < view.levels.size(); ++level) {
    for (uint64_t bucket : CandidateBuckets(view, hash, level)) {
      for (uint32_t slot = 0; slot < view.geo.slots_per_bucket; ++slot) {
        SlotAt at = Locate(view, level, bucket, slot);
        uint64_t word = *pool.At<uint64_t>(at.word_offset);
        if (gphash::SlotStateOf(word) == gphash::kSlotValid &&
            std::memcmp(pool.At<uint8_t>(at.key_offset), key, view.key_size) == 0) {
          out.push_back(at);
        }
      }
    }
  }
  return out;
}

// An EMPTY slot among the candidates of `key` in a bucket other than
// `not_bucket` of level `not_level` (any level when level < 0).
inline std::optional<SlotAt> FreeCandidate(const pm::Pool& pool, const gphash::GphashView& view,
                                           const uint8_t* key, int level_wanted, uint32_t not_level,
                                           uint64_t not_bucket) {
  format::KeyHash hash = format::HashKey(key, view.key_size, view.geo.hash_seed);
  for (uint32_t level = 0; level < view.levels.size(); ++level) {
    if (level_wanted >= 0 && level != static_cast<uint32_t>(level_wanted)) continue;
    for (uint64_t bucket : CandidateBuckets(view, hash, level)) {
      if (level == not_level && bucket == not_bucket) continue;
      for (uint32_t slot = 0; slot < view.geo.slots_per_bucket; ++slot) {
        SlotAt at = Locate(view, level, bucket, slot);
        if (*pool.At<uint64_t>(at.word_offset) == 0) return at;
      }
    }
  }
  return std::nullopt;
}

// Writes a second VALID copy of `key` (held once, VALID) into a free
// candidate slot of a lower level than its copy, so that the copy there loses
// the duplicate rule: the state a racing insert or an interrupted move leaves
// until open-time recovery erases it. False when no such slot is free.
inline bool PlantLosingCopy(pm::Pool& pool, const gphash::GphashView& view, const uint8_t* key) {
  std::vector<SlotAt> copies = FindKey(pool, view, key);
  if (copies.size() != 1 || copies[0].level + 1 >= view.levels.size()) return false;
  const SlotAt& winner = copies[0];
  auto free = FreeCandidate(pool, view, key, static_cast<int>(winner.level + 1), winner.level,
                            winner.bucket);
  if (!free) return false;
  std::memcpy(pool.At<uint8_t>(free->key_offset), key, view.key_size);
  *pool.At<uint64_t>(free->value_offset) = *pool.At<uint64_t>(winner.value_offset);
  *pool.At<uint64_t>(free->word_offset) = *pool.At<uint64_t>(winner.word_offset);
  return true;
}

}  // namespace gpkv::gphash_test
