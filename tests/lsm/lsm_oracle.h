// The LSM family's oracle: more than a million mixed operations checked
// against std::map (put and erase batches of every size, through the write
// buffer, flushes and cascades; gets, counts, ranges, successors and
// predecessors; explicit and automatic compaction; reopens, which replay the
// log). Run on the CPU backend by lsm_oracle_test and on the GPU backend by
// gpu/lsm_gpu_oracle_test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

#include "lsm/lsm_test_util.h"

namespace gpkv::lsmtest {

// Runs the oracle on a table of b = batch_entries and M = log_batches in a
// fresh pool, the DB on `backend` with `threads` worker threads.
inline void RunOracle(Backend backend, int threads, uint64_t batch_entries,
                      uint32_t log_batches = 1) {
  testutil::TempPool temp("lsm-oracle-" + std::to_string(static_cast<int>(backend)) + "-" +
                          std::to_string(threads) + "-" + std::to_string(batch_entries) + "-" +
                          std::to_string(log_batches));
  Options options = PoolOptions(uint64_t{256} << 20, threads, backend);
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions table_options = OrderedOptions(batch_entries);
  table_options.ordered.max_dead_percent = 60;
  table_options.ordered.log_batches = log_batches;
  ASSERT_TRUE((*db)->CreateTable("o", table_options).ok());
  Table* table = *(*db)->OpenTable("o");

  std::mt19937_64 random(1234 + threads);
  Oracle oracle;
  constexpr uint64_t kKeySpace = 1 << 17;
  auto random_key = [&] { return random() % kKeySpace; };
  uint64_t operations = 0;
  uint64_t round = 0;
  while (operations < 1200000) {
    ++round;
    const int kind = static_cast<int>(random() % 100);
    const size_t n = random() % 4 == 0 ? 1 + random() % 4000 : 1 + random() % 200;
    std::vector<uint64_t> keys(n);
    for (uint64_t& key : keys) key = random_key();
    operations += n;
    if (kind < 40) {
      std::vector<uint64_t> values(n);
      for (size_t i = 0; i < n; ++i) {
        values[i] = (round << 20) | i;
        oracle[keys[i]] = values[i];
      }
      ASSERT_TRUE(table->Put(keys, values).ok());
    } else if (kind < 55) {
      std::vector<uint8_t> erased(n);
      ASSERT_TRUE(table->Erase(keys, erased).ok());
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(erased[i], oracle.erase(keys[i])) << "round " << round << " op " << i;
      }
    } else if (kind < 70) {
      std::vector<uint64_t> values(n);
      std::vector<uint8_t> found(n);
      ASSERT_TRUE(table->Get(keys, values, found).ok());
      for (size_t i = 0; i < n; ++i) {
        auto it = oracle.find(keys[i]);
        ASSERT_EQ(found[i], it != oracle.end()) << "round " << round << " key " << keys[i];
        ASSERT_EQ(values[i], found[i] ? it->second : 0);
      }
    } else if (kind < 80) {
      std::vector<uint64_t> lo(n), hi(n), counts(n);
      for (size_t i = 0; i < n; ++i) {
        lo[i] = keys[i];
        hi[i] = random() % 8 == 0 ? keys[i] - 1 : keys[i] + random() % 64;
      }
      ASSERT_TRUE(table->Count(lo, hi, counts).ok());
      Table::RangeResults results;
      ASSERT_TRUE(table->Range(lo, hi, &results).ok());
      ASSERT_EQ(results.offsets.size(), n + 1);
      for (size_t i = 0; i < n; ++i) {
        std::vector<std::pair<uint64_t, uint64_t>> expected;
        if (lo[i] <= hi[i]) {
          for (auto it = oracle.lower_bound(lo[i]); it != oracle.end() && it->first <= hi[i];
               ++it) {
            expected.push_back(*it);
          }
        }
        ASSERT_EQ(counts[i], expected.size()) << "round " << round << " count " << i;
        ASSERT_EQ(results.offsets[i + 1] - results.offsets[i], expected.size());
        for (size_t j = 0; j < expected.size(); ++j) {
          uint64_t key, value;
          std::memcpy(&key, &results.keys[(results.offsets[i] + j) * 8], 8);
          std::memcpy(&value, &results.values[(results.offsets[i] + j) * 8], 8);
          ASSERT_EQ(key, expected[j].first);
          ASSERT_EQ(value, expected[j].second);
        }
      }
    } else if (kind < 95) {
      std::vector<uint64_t> next(n), values(n);
      std::vector<uint8_t> found(n);
      const bool successor = kind < 88;
      ASSERT_TRUE(successor ? table->Successor(keys, next, values, found).ok()
                            : table->Predecessor(keys, next, values, found).ok());
      for (size_t i = 0; i < n; ++i) {
        auto it = oracle.lower_bound(keys[i]);
        if (!successor) {
          it = oracle.upper_bound(keys[i]);
          it = it == oracle.begin() ? oracle.end() : std::prev(it);
        }
        ASSERT_EQ(found[i], it != oracle.end()) << (successor ? "successor" : "predecessor");
        if (found[i]) {
          ASSERT_EQ(next[i], it->first);
          ASSERT_EQ(values[i], it->second);
        }
      }
    } else if (kind < 97) {
      ASSERT_TRUE(table->Compact().ok());
    } else {
      db->reset();
      auto reopened = DB::Open(temp.path(), options);
      ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
      *db = std::move(*reopened);
      table = *(*db)->OpenTable("o");
    }
  }
  EXPECT_EQ(Contents(*table), oracle);
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, oracle.size());
  // The cascade went deep (with b = 256; 2^17 keys fill two levels of 2^16).
  EXPECT_GE(*stats->Property("lsm.levels"), batch_entries == 256 ? 5.0 : 2.0);
  EXPECT_GE(*stats->Property("lsm.compactions"), 1.0);
}

}  // namespace gpkv::lsmtest
