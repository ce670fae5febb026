// The volatile hash table (slab_hash family) through the public API on the
// CPU backend: answers against a std::unordered_map oracle over millions of
// mixed operations in batches (duplicates within batches: the last put wins,
// the first erase reports), concurrent batches from several threads, every
// key and value size, an empty table at every open that the catalog still
// declares, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gpkv/db.h"
#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv {
namespace {

Options CpuOptions(int threads = 4) { return testutil::DbOptions(uint64_t{16} << 20, threads); }

TableOptions Volatile(uint32_t key_size, uint32_t value_size, uint64_t expected_keys) {
  TableOptions options;
  options.durability = Durability::kVolatile;
  options.key_size = key_size;
  options.value_size = value_size;
  options.expected_keys = expected_keys;
  return options;
}

// Keys of `key_size` bytes from a number: the number in the first word and
// its mix in the others, so that longer keys differ in every word.
void MakeKey(uint64_t number, uint32_t key_size, uint8_t* out) {
  testutil::SplitMix64Fill(number * 7919, out, key_size);
  std::memcpy(out, &number, sizeof(number));
}

using Oracle = std::unordered_map<std::string, std::string>;

// Runs `ops` random operations on `table` in batches of random kinds and
// sizes, keys drawn from [key_base, key_base + key_space) (so batches repeat
// keys), checking every answer against `oracle`.
void RunMixedBatches(Table& table, Oracle& oracle, uint64_t ops, uint64_t key_base,
                     uint64_t key_space, uint64_t seed, uint32_t max_batch) {
  const uint32_t key_size = table.options().key_size;
  const uint32_t value_size = table.options().value_size;
  std::mt19937_64 random(seed);
  std::vector<uint8_t> keys;
  std::vector<uint8_t> values;
  std::vector<uint8_t> flags;
  uint64_t done = 0;
  while (done < ops) {
    const uint32_t count =
        static_cast<uint32_t>(std::min<uint64_t>(1 + random() % max_batch, ops - done));
    keys.assign(size_t{count} * key_size, 0);
    for (uint32_t i = 0; i < count; ++i) {
      // One key in eight repeats an earlier key of the batch.
      const bool repeat = i > 0 && random() % 8 == 0;
      if (repeat) {
        std::memcpy(&keys[size_t{i} * key_size], &keys[(random() % i) * key_size], key_size);
      } else {
        MakeKey(key_base + random() % key_space, key_size, &keys[size_t{i} * key_size]);
      }
    }
    auto key_at = [&](uint32_t i) {
      return std::string(reinterpret_cast<const char*>(&keys[size_t{i} * key_size]), key_size);
    };
    const uint64_t kind = random() % 10;  // 4 puts, 4 gets, 2 erases in ten
    if (kind < 4) {
      values.resize(size_t{count} * value_size);
      testutil::SplitMix64Fill(random(), values.data(), static_cast<uint32_t>(values.size()));
      ASSERT_TRUE(table.Put(keys, values).ok());
      for (uint32_t i = 0; i < count; ++i) {
        oracle[key_at(i)] =
            std::string(reinterpret_cast<const char*>(&values[size_t{i} * value_size]), value_size);
      }
    } else if (kind < 8) {
      values.assign(size_t{count} * value_size, 0xee);
      flags.assign(count, 0xee);
      ASSERT_TRUE(table.Get(keys, values, flags).ok());
      for (uint32_t i = 0; i < count; ++i) {
        auto it = oracle.find(key_at(i));
        ASSERT_EQ(flags[i], it != oracle.end() ? 1 : 0) << "get " << i << " of " << count;
        const std::string expected =
            it != oracle.end() ? it->second : std::string(value_size, '\0');
        ASSERT_EQ(std::memcmp(&values[size_t{i} * value_size], expected.data(), value_size), 0)
            << "get " << i << " of " << count;
      }
    } else {
      flags.assign(count, 0xee);
      ASSERT_TRUE(table.Erase(keys, flags).ok());
      for (uint32_t i = 0; i < count; ++i) {
        ASSERT_EQ(flags[i], oracle.erase(key_at(i)) ? 1 : 0) << "erase " << i << " of " << count;
      }
    }
    done += count;
  }
}

// The table holds exactly the oracle's pairs: Scan and Stats agree with it.
void ExpectSameContents(Table& table, const Oracle& oracle) {
  const uint32_t key_size = table.options().key_size;
  const uint32_t value_size = table.options().value_size;
  uint64_t visited = 0;
  bool all_match = true;
  ASSERT_TRUE(table
                  .Scan([&](const uint8_t* key, const uint8_t* value) {
                    ++visited;
                    auto it =
                        oracle.find(std::string(reinterpret_cast<const char*>(key), key_size));
                    all_match &= it != oracle.end() &&
                                 std::memcmp(it->second.data(), value, value_size) == 0;
                    return true;
                  })
                  .ok());
  EXPECT_TRUE(all_match);
  EXPECT_EQ(visited, oracle.size());
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, oracle.size());
}

TEST(SlabHashDb, TwoMillionMixedOperationsMatchTheOracle) {
  testutil::TempPool temp("slab-oracle");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  // Few expected keys: the table grows several times on the way.
  auto table = (*db)->CreateTable("cache", Volatile(8, 8, 1000));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  Oracle oracle;
  RunMixedBatches(**table, oracle, 2'100'000, 0, 300'000, 1, 40'000);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  ExpectSameContents(**table, oracle);
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->family, "slab_hash");
  EXPECT_EQ(stats->durability, Durability::kVolatile);
  EXPECT_GT(stats->Property("slab_hash.rehashes").value_or(0), 0);
  EXPECT_GT(stats->bytes, oracle.size() * 16);
}

TEST(SlabHashDb, EveryKeyAndValueSizeMatchesTheOracle) {
  testutil::TempPool temp("slab-sizes");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  uint64_t seed = 10;
  for (uint32_t key_size : {8u, 16u, 32u}) {
    for (uint32_t value_size : {1u, 8u, 100u, 128u}) {
      SCOPED_TRACE("key " + std::to_string(key_size) + " value " + std::to_string(value_size));
      const std::string name = "t" + std::to_string(key_size) + "-" + std::to_string(value_size);
      auto table = (*db)->CreateTable(name, Volatile(key_size, value_size, 4096));
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      Oracle oracle;
      RunMixedBatches(**table, oracle, 150'000, 0, 20'000, ++seed, 20'000);
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
      ExpectSameContents(**table, oracle);
    }
  }
}

TEST(SlabHashDb, ConcurrentBatchesOnDisjointKeysEachMatchTheirOracle) {
  testutil::TempPool temp("slab-concurrent");
  auto db = DB::Open(temp.path(), CpuOptions(2));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("shared", Volatile(16, 24, 1000));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  constexpr int kThreads = 4;
  std::vector<Oracle> oracles(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      RunMixedBatches(**table, oracles[t], 400'000, uint64_t(t) << 40, 50'000, 100 + t, 30'000);
      if (::testing::Test::HasFailure()) failures.fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0);
  Oracle all;
  for (const Oracle& oracle : oracles) all.insert(oracle.begin(), oracle.end());
  ExpectSameContents(**table, all);
}

// Writers put one key again and again, each value a word repeated 16
// times; readers of that key must see a value some writer wrote (or none
// before the first put), whole: never words of two values.
TEST(SlabHashDb, ReadersOfASharedKeySeeTheOldOrTheNewValueNeverAMix) {
  testutil::TempPool temp("slab-shared-key");
  auto db = DB::Open(temp.path(), CpuOptions(2));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("hot", Volatile(8, 128, 1000));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  constexpr uint64_t kKey = 42;
  constexpr int kWriters = 2;
  constexpr uint64_t kPutsPerWriter = 20'000;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<int> readers_started{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      // A batch of the hot key among other keys, the hot key twice.
      std::vector<uint64_t> keys = {1000 + uint64_t(w), kKey, 2000 + uint64_t(w), kKey};
      std::vector<uint64_t> values(keys.size() * 16);
      // Start once both readers have read, so reads overlap the writes
      // however the threads are scheduled (on a loaded machine the writers
      // could otherwise finish before a reader's first read).
      while (readers_started.load() < 2) std::this_thread::yield();
      for (uint64_t n = 1; n <= kPutsPerWriter; ++n) {
        const uint64_t word = (uint64_t(w + 1) << 32) | n;
        std::fill(values.begin(), values.end(), word);
        if (!(*table)->Put(keys, values).ok()) bad.fetch_add(1);
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      std::vector<uint64_t> keys(64, kKey);
      std::vector<uint64_t> values(keys.size() * 16);
      std::vector<uint8_t> found(keys.size());
      bool counted = false;  // this reader has told the writers it started
      while (!stop.load()) {
        if (!(*table)->Get(keys, values, found).ok()) bad.fetch_add(1);
        for (size_t i = 0; i < keys.size(); ++i) {
          const uint64_t* value = &values[i * 16];
          const uint64_t writer = value[0] >> 32;
          const uint64_t n = value[0] & 0xffffffff;
          bool whole = std::all_of(value, value + 16, [&](uint64_t x) { return x == value[0]; });
          bool written = found[i]
                             ? writer >= 1 && writer <= kWriters && n >= 1 && n <= kPutsPerWriter
                             : value[0] == 0;
          if (!whole || !written) bad.fetch_add(1);
        }
        reads.fetch_add(keys.size());
        if (!counted) {
          readers_started.fetch_add(1);
          counted = true;
        }
      }
    });
  }
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  stop.store(true);
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  // The last value is one writer's last put.
  std::vector<uint64_t> key = {kKey};
  std::vector<uint64_t> value(16);
  std::vector<uint8_t> found(1);
  ASSERT_TRUE((*table)->Get(key, value, found).ok());
  ASSERT_EQ(found[0], 1);
  EXPECT_EQ(value[0] & 0xffffffff, kPutsPerWriter);
}

TEST(SlabHashDb, AReopenedVolatileTableIsEmptyAndStillInTheCatalog) {
  testutil::TempPool temp("slab-reopen");
  uint64_t used = 0;
  std::vector<uint64_t> keys = {1, 2, 3};
  std::vector<uint64_t> values = {10, 20, 30};
  {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto cache = (*db)->CreateTable("cache", Volatile(8, 8, 100));
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    used = (*(*db)->Info()).used_bytes;  // the catalog of one entry
    TableOptions persistent;
    persistent.expected_keys = 100;
    auto kept = (*db)->CreateTable("kept", persistent);
    ASSERT_TRUE(kept.ok());
    ASSERT_TRUE((*cache)->Put(keys, values).ok());
    ASSERT_TRUE((*kept)->Put(keys, values).ok());
    EXPECT_EQ((*(*cache)->Stats()).keys, 3u);
  }
  for (int open = 0; open < 2; ++open) {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto tables = (*db)->ListTables();
    ASSERT_TRUE(tables.ok());
    ASSERT_EQ(tables->size(), 2u);
    EXPECT_EQ((*tables)[0].name, "cache");
    EXPECT_EQ((*tables)[0].options.durability, Durability::kVolatile);
    EXPECT_EQ((*tables)[0].options.expected_keys, 100u);
    auto cache = (*db)->OpenTable("cache");
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    std::vector<uint64_t> got(3, 7);
    std::vector<uint8_t> found(3, 1);
    ASSERT_TRUE((*cache)->Get(keys, got, found).ok());
    EXPECT_EQ(found, std::vector<uint8_t>(3, 0));
    EXPECT_EQ(got, std::vector<uint64_t>(3, 0));
    EXPECT_EQ((*(*cache)->Stats()).keys, 0u);
    // The persistent table beside it keeps its pairs.
    auto kept = (*db)->OpenTable("kept");
    ASSERT_TRUE(kept.ok());
    ASSERT_TRUE((*kept)->Get(keys, got, found).ok());
    EXPECT_EQ(got, values);
    ASSERT_TRUE((*cache)->Put(keys, values).ok());
  }
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->HasCorruption());
  {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->DropTable("kept").ok());
    // Only the catalog is left: the volatile table has nothing in the pool.
    EXPECT_EQ((*(*db)->Info()).used_bytes, used);
    ASSERT_TRUE((*db)->DropTable("cache").ok());
    EXPECT_TRUE((*db)->OpenTable("cache").status().IsNotFound());
    EXPECT_TRUE((*db)->ListTables()->empty());
  }
}

// A crash's leftover extent (allocated, unlinked) in a pool whose catalog
// holds a volatile table: verify calls it recoverable, the open-time sweep
// and repair free it (a volatile table owns no extent, so it keeps no
// extent from being called unreachable).
TEST(SlabHashDb, LeftoverExtentsAreFreedBesideAVolatileTable) {
  testutil::TempPool temp("slab-sweep");
  uint64_t used = 0;
  {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->CreateTable("cache", Volatile(8, 8, 100)).ok());
    TableOptions persistent;
    persistent.expected_keys = 100;
    ASSERT_TRUE((*db)->CreateTable("kept", persistent).ok());
    used = (*(*db)->Info()).used_bytes;
  }
  auto leave_an_extent = [&] {
    auto pool = pm::Pool::Open(temp.path(), /*read_only=*/false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    ASSERT_TRUE((*pool)->allocator().Allocate(8192, format::kExtentKindOther, 0).ok());
    ASSERT_TRUE((*pool)->Sync().ok());
  };
  leave_an_extent();
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->HasCorruption());
  bool leftover = false;
  for (const auto& finding : report->findings) {
    leftover |= finding.severity == recovery::Finding::Severity::kRecoverable;
  }
  EXPECT_TRUE(leftover);
  {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok());
    EXPECT_EQ((*(*db)->Info()).used_bytes, used);
  }
  leave_an_extent();
  auto repaired = recovery::RepairPool(temp.path(), nullptr);
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  EXPECT_EQ(repaired->extents_freed, 1u);
  EXPECT_EQ(repaired->tables_dropped, 0u);
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok());
  EXPECT_EQ((*(*db)->Info()).used_bytes, used);
  EXPECT_EQ((*db)->ListTables()->size(), 2u);
  EXPECT_TRUE((*db)->OpenTable("cache").ok());
}

TEST(SlabHashDb, MismatchedSpansAreInvalidArgumentAndChangeNothing) {
  testutil::TempPool temp("slab-bad-input");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("v", Volatile(16, 8, 100));
  ASSERT_TRUE(table.ok());
  Table& t = **table;
  std::vector<uint8_t> keys(32, 1);  // two keys
  std::vector<uint8_t> values(16, 2);
  std::vector<uint8_t> flags(2);
  auto invalid = [](const Status& status) {
    return status.IsInvalidArgument() && status.message().find("table 'v'") != std::string::npos;
  };
  EXPECT_TRUE(invalid(t.Put(ConstBytes(keys.data(), 24), values)));
  EXPECT_TRUE(invalid(t.Put(keys, ConstBytes(values.data(), 8))));
  EXPECT_TRUE(invalid(t.Put(ConstBytes(nullptr, 32), values)));
  EXPECT_TRUE(invalid(t.Get(keys, MutableBytes(values.data(), 24), flags)));
  EXPECT_TRUE(invalid(t.Get(keys, values, MutableBytes(flags.data(), 1))));
  EXPECT_TRUE(invalid(t.Erase(ConstBytes(keys.data(), 17), flags)));
  EXPECT_TRUE(invalid(t.Erase(keys, MutableBytes(flags.data(), 3))));
  EXPECT_EQ((*t.Stats()).keys, 0u);
  // Empty batches are no-ops.
  EXPECT_TRUE(t.Put(ConstBytes(), ConstBytes()).ok());
  EXPECT_TRUE(t.Erase(ConstBytes()).ok());
}

TEST(SlabHashDb, BadTableOptionsAreInvalidArgument) {
  testutil::TempPool temp("slab-bad-options");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok());
  EXPECT_TRUE((*db)->CreateTable("a", Volatile(12, 8, 100)).status().IsInvalidArgument());
  EXPECT_TRUE((*db)->CreateTable("b", Volatile(8, 0, 100)).status().IsInvalidArgument());
  EXPECT_TRUE((*db)->CreateTable("c", Volatile(8, 129, 100)).status().IsInvalidArgument());
  TableOptions geometry = Volatile(8, 8, 100);
  geometry.hash.levels = 1;
  auto refused = (*db)->CreateTable("d", geometry);
  ASSERT_TRUE(refused.status().IsInvalidArgument());
  EXPECT_NE(refused.status().message().find("persistent hash tables"), std::string::npos);
  TableOptions logged = Volatile(8, 8, 100);
  logged.hash_log.log_batches = 4;  // the logged mode is the persistent table's
  Status log_refused = (*db)->CreateTable("e", logged).status();
  EXPECT_TRUE(log_refused.IsInvalidArgument()) << log_refused.ToString();
  EXPECT_NE(log_refused.message().find("persistent hash tables only"), std::string::npos);
  EXPECT_TRUE((*db)->ListTables()->empty());
}

TEST(SlabHashDb, AReadOnlyPoolServesAnEmptyVolatileTableAndRefusesWrites) {
  testutil::TempPool temp("slab-read-only");
  {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->CreateTable("v", Volatile(8, 8, 100)).ok());
  }
  Options options = CpuOptions();
  options.read_only = true;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("v");
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> keys = {5};
  std::vector<uint64_t> values = {6};
  std::vector<uint8_t> found(1, 1);
  EXPECT_TRUE((*table)->Put(keys, values).IsInvalidArgument());
  ASSERT_TRUE((*table)->Get(keys, values, found).ok());
  EXPECT_EQ(found[0], 0);
}

}  // namespace
}  // namespace gpkv
