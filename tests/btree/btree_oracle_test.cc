// The volatile ordered table (B-tree family) on the CPU backend against a
// std::map oracle: over a million mixed operations in batches with repeated
// keys (the last put of a key wins, the first erase reports), every read
// call (Get, Count, Range, Successor, Predecessor, Scan), snapshots taken
// and released among them; every key size with values of several sizes; and
// concurrent writer and reader threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "btree/btree_test_util.h"

namespace gpkv::btreetest {
namespace {

TEST(GPKV_BTREE_SUITE(BtreeOracle), MixedBatchesMatchAStdMap) {
  OpenTable open("oracle", VolatileOrdered(), /*threads=*/2);
  Table& table = *open.table;
  std::mt19937_64 random(42);
  Oracle oracle;
  constexpr uint64_t kKeySpace = 1 << 15;
  std::vector<std::unique_ptr<Snapshot>> snapshots;
  uint64_t operations = 0;
  for (uint64_t round = 1; operations < 1200000; ++round) {
    const int kind = static_cast<int>(random() % 100);
    const size_t n = random() % 4 == 0 ? 1 + random() % 4000 : 1 + random() % 200;
    std::vector<uint64_t> keys(n);
    for (size_t i = 0; i < n; ++i) {
      keys[i] = i > 0 && random() % 8 == 0 ? keys[random() % i] : random() % kKeySpace;
    }
    // A few inputs at the ends of the key space.
    if (random() % 16 == 0) keys[0] = random() % 2 == 0 ? 0 : ~uint64_t{0};
    operations += n;
    if (kind < 35) {
      ASSERT_NO_FATAL_FAILURE(testutil::PutBatch(table, keys, round, oracle));
    } else if (kind < 50) {
      ASSERT_NO_FATAL_FAILURE(testutil::EraseBatch(table, keys, round, oracle));
    } else if (kind < 65) {
      ASSERT_NO_FATAL_FAILURE(testutil::GetBatch(table, keys, round, oracle));
    } else if (kind < 78) {
      std::vector<uint64_t> lo(n), hi(n);
      for (size_t i = 0; i < n; ++i) {
        lo[i] = keys[i];
        hi[i] = random() % 8 == 0 ? keys[i] - 1 : keys[i] + random() % 64;
        if (i == 0 && random() % 4 == 0) hi[i] = ~uint64_t{0};  // to the end
      }
      ASSERT_NO_FATAL_FAILURE(testutil::CountAndRangeBatch(table, lo, hi, round, oracle));
    } else if (kind < 94) {
      ASSERT_NO_FATAL_FAILURE(testutil::NeighbourBatch(table, keys, /*successor=*/kind < 86,
                                                       /*zero_when_not_found=*/true, oracle));
    } else if (kind < 98) {
      // Snapshots come and go: the current contents stay the oracle's.
      if (snapshots.size() < 4 && random() % 2 == 0) {
        auto snapshot = table.TakeSnapshot();
        ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
        snapshots.push_back(std::move(*snapshot));
      } else if (!snapshots.empty()) {
        snapshots.erase(snapshots.begin() + static_cast<long>(random() % snapshots.size()));
      }
    } else {
      Oracle scanned;
      ASSERT_TRUE(table
                      .Scan([&](const uint8_t* key, const uint8_t* value) {
                        uint64_t k, v;
                        std::memcpy(&k, key, 8);
                        std::memcpy(&v, value, 8);
                        EXPECT_TRUE(scanned.empty() || k > scanned.rbegin()->first);
                        scanned[k] = v;
                        return true;
                      })
                      .ok());
      ASSERT_EQ(scanned, oracle) << "round " << round;
    }
  }
  EXPECT_EQ(Property(table, "btree.snapshots"), static_cast<double>(snapshots.size()));
  snapshots.clear();
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, oracle.size());
  EXPECT_EQ(stats->Property("btree.versions"), static_cast<double>(oracle.size()));
  EXPECT_EQ(stats->Property("btree.tombstones"), 0.0);
}

// Keys of key_size bytes ordered as little-endian integers whose last word
// is the most significant: the oracle's key is the words, last first.
std::vector<uint64_t> OracleKey(const uint8_t* key, uint32_t key_size) {
  std::vector<uint64_t> words(key_size / 8);
  for (size_t w = 0; w < words.size(); ++w) {
    std::memcpy(&words[words.size() - 1 - w], key + w * 8, 8);
  }
  return words;
}

TEST(GPKV_BTREE_SUITE(BtreeOracle), EveryKeySizeOrdersByTheLastWordFirst) {
  for (uint32_t key_size : {8u, 16u, 32u}) {
    for (uint32_t value_size : {1u, 8u, 13u, 128u}) {
      SCOPED_TRACE("key " + std::to_string(key_size) + " value " + std::to_string(value_size));
      OpenTable open("sizes-" + std::to_string(key_size) + "-" + std::to_string(value_size),
                     VolatileOrdered(key_size, value_size));
      Table& table = *open.table;
      std::map<std::vector<uint64_t>, std::vector<uint8_t>> oracle;
      std::mt19937_64 random(key_size * 1000 + value_size);
      // Each word from a small range, so that keys share words and every
      // word decides some comparisons.
      auto random_key = [&](uint8_t* out) {
        for (uint32_t w = 0; w < key_size / 8; ++w) {
          const uint64_t word = random() % 6;
          std::memcpy(out + w * 8, &word, 8);
        }
      };
      std::vector<std::unique_ptr<Snapshot>> snapshots;
      for (int round = 0; round < 60; ++round) {
        const size_t n = 1 + random() % 100;
        std::vector<uint8_t> keys(n * key_size), values(n * value_size);
        for (size_t i = 0; i < n; ++i) random_key(&keys[i * key_size]);
        testutil::SplitMix64Fill(round, values.data(), static_cast<uint32_t>(values.size()));
        if (random() % 3 != 0) {
          ASSERT_TRUE(table.Put(keys, values).ok());
          for (size_t i = 0; i < n; ++i) {
            oracle[OracleKey(&keys[i * key_size], key_size)] =
                std::vector<uint8_t>(&values[i * value_size], &values[(i + 1) * value_size]);
          }
        } else {
          std::vector<uint8_t> erased(n);
          ASSERT_TRUE(table.Erase(keys, erased).ok());
          for (size_t i = 0; i < n; ++i) {
            ASSERT_EQ(erased[i], oracle.erase(OracleKey(&keys[i * key_size], key_size)));
          }
        }
        if (round % 10 == 0) {
          auto snapshot = table.TakeSnapshot();
          ASSERT_TRUE(snapshot.ok());
          snapshots.push_back(std::move(*snapshot));
        }
        // Whole-table range and successors of random keys.
        std::vector<uint8_t> lo(key_size, 0), hi(key_size, 0xff);
        Table::RangeResults results;
        ASSERT_TRUE(table.Range(lo, hi, &results).ok());
        ASSERT_EQ(results.offsets[1], oracle.size());
        size_t j = 0;
        for (const auto& [key, value] : oracle) {
          ASSERT_EQ(OracleKey(&results.keys[j * key_size], key_size), key);
          ASSERT_EQ(std::vector<uint8_t>(&results.values[j * value_size],
                                         &results.values[(j + 1) * value_size]),
                    value);
          ++j;
        }
        std::vector<uint8_t> probe(key_size), next(key_size), value(value_size), found(1);
        random_key(probe.data());
        ASSERT_TRUE(table.Successor(probe, next, value, found).ok());
        auto it = oracle.lower_bound(OracleKey(probe.data(), key_size));
        ASSERT_EQ(found[0], it != oracle.end());
        if (found[0]) {
          EXPECT_EQ(OracleKey(next.data(), key_size), it->first);
          EXPECT_EQ(value, it->second);
        }
      }
    }
  }
}

// Writers on disjoint key ranges and readers at once: every acknowledged
// write is there at the end, and a reader sees each key's old or new value
// (a value names its key), never a mix.
TEST(GPKV_BTREE_SUITE(BtreeOracle), ConcurrentWritersAndReadersLoseNothing) {
  OpenTable open("concurrent", VolatileOrdered(), /*threads=*/2);
  Table& table = *open.table;
  constexpr int kWriters = 3;
  constexpr uint64_t kKeysPerWriter = 4000;
  std::vector<Oracle> oracles(kWriters);
  std::atomic<bool> writing{true};
  std::atomic<uint64_t> bad_reads{0};
  std::vector<std::thread> threads;
  for (int writer = 0; writer < kWriters; ++writer) {
    threads.emplace_back([&, writer] {
      std::mt19937_64 random(writer);
      const uint64_t base = writer * kKeysPerWriter;
      for (int round = 1; round <= 300; ++round) {
        const size_t n = 1 + random() % 64;
        std::vector<uint64_t> keys(n), values(n);
        for (size_t i = 0; i < n; ++i) {
          keys[i] = base + random() % kKeysPerWriter;
          values[i] = keys[i] << 16 | static_cast<uint64_t>(round);
        }
        if (round % 4 == 0) {
          std::vector<uint8_t> erased(n);
          ASSERT_TRUE(table.Erase(keys, erased).ok());
          for (size_t i = 0; i < n; ++i) ASSERT_EQ(erased[i], oracles[writer].erase(keys[i]));
        } else {
          ASSERT_TRUE(table.Put(keys, values).ok());
          for (size_t i = 0; i < n; ++i) oracles[writer][keys[i]] = values[i];
        }
      }
    });
  }
  for (int reader = 0; reader < 2; ++reader) {
    threads.emplace_back([&, reader] {
      std::mt19937_64 random(100 + reader);
      while (writing.load()) {
        std::vector<uint64_t> lo(8), hi(8);
        for (size_t i = 0; i < lo.size(); ++i) {
          lo[i] = random() % (kWriters * kKeysPerWriter);
          hi[i] = lo[i] + random() % 100;
        }
        Table::RangeResults results;
        ASSERT_TRUE(table.Range(lo, hi, &results).ok());
        for (size_t i = 0; i < lo.size(); ++i) {
          for (const auto& [key, value] : RangePairs(results, i)) {
            if (value >> 16 != key || key < lo[i] || key > hi[i]) bad_reads.fetch_add(1);
          }
        }
      }
    });
  }
  for (int writer = 0; writer < kWriters; ++writer) threads[writer].join();
  writing.store(false);
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(bad_reads.load(), 0u);
  Oracle all;
  for (const Oracle& oracle : oracles) all.insert(oracle.begin(), oracle.end());
  std::vector<uint64_t> lo{0}, hi{~uint64_t{0}};
  Table::RangeResults results;
  ASSERT_TRUE(table.Range(lo, hi, &results).ok());
  const auto pairs = RangePairs(results, 0);
  const std::vector<std::pair<uint64_t, uint64_t>> expected(all.begin(), all.end());
  EXPECT_EQ(pairs, expected);
}

}  // namespace
}  // namespace gpkv::btreetest
