// The runs' key filters (tables/lsm/layout.h): every key of a run is in its
// filter and few others are, the bits are the same however many threads add
// the keys in whatever order, gets over many levels of runs, with
// overwrites and erases, never miss a key a std::map oracle holds, and the
// oldest run's filter, which gets do not read, has every bit set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <vector>

#include "lsm_test_util.h"
#include "recovery/verify.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"

namespace gpkv {
namespace {

std::vector<uint64_t> RandomKeys(uint64_t n, uint32_t key_words, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<uint64_t> keys(n * key_words);
  for (uint64_t& word : keys) word = random();
  return keys;
}

std::vector<uint64_t> FilterOf(const std::vector<uint64_t>& keys, uint32_t key_words, int threads) {
  const uint64_t n = keys.size() / key_words;
  std::vector<uint64_t> filter(lsm::RunFilterWords(n), 0);
  lsm::AddToFilter(keys.data(), n, key_words, filter.data(), lsm::RunFilterWords(n), threads);
  return filter;
}

// The filter of layout.h's rule written out here, one key at a time.
std::vector<uint64_t> RuleFilterOf(const std::vector<uint64_t>& keys, uint32_t key_words) {
  const uint64_t n = keys.size() / key_words;
  const uint64_t words = lsm::RunFilterWords(n);
  std::vector<uint64_t> filter(words, 0);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t hash = lsm::FilterHash(&keys[i * key_words], key_words);
    filter[lsm::FilterWordOf(hash, words)] |= lsm::FilterMaskOf(hash);
  }
  return filter;
}

TEST(LsmFilter, EveryWayOfComputingTheBitsSetThoseOfTheRule) {
  for (lsm::FilterLanes lanes :
       {lsm::FilterLanes::kOneByOne, lsm::FilterLanes::kAvx2, lsm::FilterLanes::kAvx512}) {
    if (!lsm::TEST_HostHasFilterLanes(lanes)) {
      std::printf("this host has no lanes %d: not tested\n", static_cast<int>(lanes));
      continue;
    }
    for (uint32_t key_words : {1u, 2u, 4u}) {
      // Counts around the eight keys of a step of the lanes.
      for (uint64_t n : {0u, 1u, 7u, 8u, 9u, 63u, 1000u, 65543u}) {
        const std::vector<uint64_t> keys = RandomKeys(n, key_words, n * 10 + key_words);
        const uint64_t words = lsm::RunFilterWords(n);
        std::vector<uint64_t> filter(words, 0);
        lsm::TEST_AddToFilterWith(lanes, keys.data(), n, key_words, filter.data(), words);
        ASSERT_EQ(filter, RuleFilterOf(keys, key_words))
            << "lanes " << static_cast<int>(lanes) << ", " << n << " keys of " << key_words
            << " words";
      }
    }
  }
}

TEST(LsmFilter, HoldsEveryKeyAddedAndAboutTwoPercentOfOthers) {
  constexpr uint64_t kKeys = 200000;
  for (uint32_t key_words : {1u, 2u, 4u}) {
    const std::vector<uint64_t> keys = RandomKeys(kKeys, key_words, key_words);
    const std::vector<uint64_t> filter = FilterOf(keys, key_words, 1);
    const uint64_t words = lsm::RunFilterWords(kKeys);
    for (uint64_t i = 0; i < kKeys; ++i) {
      ASSERT_TRUE(lsm::FilterMayContain(filter.data(), words,
                                        lsm::FilterHash(&keys[i * key_words], key_words)))
          << "key " << i << " of " << key_words << " words";
    }
    const std::vector<uint64_t> others = RandomKeys(kKeys, key_words, 100 + key_words);
    uint64_t false_positives = 0;
    for (uint64_t i = 0; i < kKeys; ++i) {
      false_positives += lsm::FilterMayContain(filter.data(), words,
                                               lsm::FilterHash(&others[i * key_words], key_words));
    }
    // 10 bits a key, 5 of them set in one 64-bit word: about 2%.
    EXPECT_LT(false_positives, kKeys * 3 / 100) << key_words << " words";
    EXPECT_GT(false_positives, 0u);
  }
}

TEST(LsmFilter, BitsAreTheSameOnAnyNumberOfThreadsInAnyOrder) {
  constexpr uint64_t kKeys = uint64_t{1} << 21;  // large enough for the threads to share it
  std::vector<uint64_t> keys = RandomKeys(kKeys, 1, 7);
  const std::vector<uint64_t> one_thread = FilterOf(keys, 1, 1);
  EXPECT_EQ(one_thread, RuleFilterOf(keys, 1));
  EXPECT_EQ(FilterOf(keys, 1, 2), one_thread);
  EXPECT_EQ(FilterOf(keys, 1, 4), one_thread);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(FilterOf(keys, 1, 5), one_thread);
}

TEST(LsmFilter, IsWholeCacheLinesOfTenBitsAKey) {
  EXPECT_EQ(lsm::RunFilterWords(0), 8u);
  EXPECT_EQ(lsm::RunFilterWords(1), 8u);
  EXPECT_EQ(lsm::RunFilterWords(51), 8u);
  EXPECT_EQ(lsm::RunFilterWords(52), 16u);
  EXPECT_EQ(lsm::RunFilterWords(uint64_t{1} << 20), (uint64_t{1} << 20) * 10 / 64);
  EXPECT_EQ(lsm::RunFilterOffset(3, 8, 8) % 64, 0u);
  EXPECT_EQ(lsm::RunExtentBytes(3, 8, 8), lsm::RunFilterOffset(3, 8, 8) + 64 + 8);
}

// Puts that overwrite, erases of present and absent keys, over a table of
// b = 16 (runs on many levels, a flush or a compaction every few batches),
// with every key of the universe looked up after each batch and after a
// reopen; verify (which checks each run's filter against its keys) stays
// clean.
TEST(LsmFilter, GetsAcrossLevelsNeverMissAKeyTheOracleHolds) {
  testutil::TempPool temp("lsm-filter-oracle");
  constexpr uint64_t kUniverse = 3000;
  std::map<uint64_t, uint64_t> oracle;
  std::mt19937_64 random(11);
  auto check = [&](Table& table, uint64_t batch) {
    std::vector<uint64_t> keys(kUniverse);
    for (uint64_t k = 0; k < kUniverse; ++k) keys[k] = k * 7919;
    std::vector<uint64_t> values(kUniverse);
    std::vector<uint8_t> found(kUniverse);
    ASSERT_TRUE(table.Get(keys, values, found).ok());
    for (uint64_t k = 0; k < kUniverse; ++k) {
      auto it = oracle.find(keys[k]);
      ASSERT_EQ(found[k] != 0, it != oracle.end()) << "key " << keys[k] << " after batch " << batch;
      if (it != oracle.end()) ASSERT_EQ(values[k], it->second) << "key " << keys[k];
    }
  };
  {
    auto db = DB::Open(temp.path(), lsmtest::PoolOptions(uint64_t{64} << 20, 2));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto created = (*db)->CreateTable("o", lsmtest::OrderedOptions(16));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    Table& table = **created;
    for (uint64_t batch = 0; batch < 400; ++batch) {
      const uint64_t n = 1 + random() % 48;
      std::vector<uint64_t> keys(n), values(n);
      for (uint64_t i = 0; i < n; ++i) {
        keys[i] = (random() % kUniverse) * 7919;
        values[i] = batch * 1000 + i;
      }
      if (batch % 3 == 2) {
        ASSERT_TRUE(table.Erase(keys).ok());
        for (uint64_t key : keys) oracle.erase(key);
      } else {
        ASSERT_TRUE(table.Put(keys, values).ok());
        for (uint64_t i = 0; i < n; ++i) oracle[keys[i]] = values[i];
      }
      ASSERT_NO_FATAL_FAILURE(check(table, batch));
    }
  }
  auto db = DB::Open(temp.path(), lsmtest::PoolOptions(uint64_t{64} << 20, 2));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("o");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_NO_FATAL_FAILURE(check(**table, 400));
  db->reset();
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
}

// The words of a pool file from `offset`.
std::vector<uint64_t> ReadWords(const std::string& path, uint64_t offset, uint64_t words) {
  std::vector<uint64_t> out(words);
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(words * 8));
  if (!in) out.clear();
  return out;
}

// A run written as the table's oldest has a filter of every bit set (gets
// do not read it); every other run has its keys' bits, the same as
// AddToFilter builds. Checked after each batch of a table of b = 16 that
// flushes, merges down the levels and compacts; verify accepts both.
TEST(LsmFilter, TheOldestRunsFilterHasEveryBitSetAndTheOthersTheirKeys) {
  testutil::TempPool temp("lsm-filter-oldest");
  std::mt19937_64 random(5);
  uint32_t oldest_runs = 0, newer_runs = 0;
  {
    auto db = DB::Open(temp.path(), lsmtest::PoolOptions(uint64_t{64} << 20, 2));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto created = (*db)->CreateTable("o", lsmtest::OrderedOptions(16));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    Table& table = **created;
    for (uint64_t batch = 0; batch < 120; ++batch) {
      const uint64_t n = 1 + random() % 64;
      std::vector<uint64_t> keys(n), values(n, batch);
      for (uint64_t& key : keys) key = random() % 5000;
      ASSERT_TRUE(table.Put(keys, values).ok());
      if (batch % 50 == 49) ASSERT_TRUE(table.Compact().ok());
      const lsm::LsmRoot root = lsmtest::ReadRoot(temp.path());
      const lsm::Manifest& manifest = lsmtest::Active(root);
      uint32_t oldest = 0;
      for (uint32_t level = 0; level < lsm::kMaxLevels; ++level) {
        if (manifest.levels[level].offset != 0) oldest = level;
      }
      for (uint32_t level = 0; level < lsm::kMaxLevels; ++level) {
        const lsm::RunRef& ref = manifest.levels[level];
        if (ref.offset == 0) continue;
        const uint64_t words = lsm::RunFilterWords(ref.entries);
        const std::vector<uint64_t> run_keys =
            ReadWords(temp.path(), ref.offset + lsm::RunKeysOffset(), ref.entries);
        const std::vector<uint64_t> filter =
            ReadWords(temp.path(), ref.offset + lsm::RunFilterOffset(ref.entries, 8, 8), words);
        ASSERT_EQ(run_keys.size(), ref.entries);
        ASSERT_EQ(filter.size(), words);
        if (level == oldest) {
          ++oldest_runs;
          EXPECT_EQ(filter, std::vector<uint64_t>(words, ~uint64_t{0}))
              << "level " << level << " after batch " << batch;
        } else {
          ++newer_runs;
          EXPECT_EQ(filter, FilterOf(run_keys, 1, 1))
              << "level " << level << " of " << oldest << " after batch " << batch;
        }
      }
      if (HasFailure()) return;
    }
  }
  EXPECT_GE(oldest_runs, 100u);
  EXPECT_GE(newer_runs, 100u);
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
}

}  // namespace
}  // namespace gpkv
