// The LSM family's oracle: more than a million mixed operations checked
// against std::map (put and erase batches of every size, through the write
// buffer, flushes and cascades; gets, counts, ranges, successors and
// predecessors; explicit and automatic compaction; reopens, which replay the
// log). Run on the CPU backend by lsm_oracle_test and on the GPU backend by
// gpu/lsm_gpu_oracle_test.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

#include "lsm/lsm_test_util.h"
#include "ordered_oracle.h"

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
      ASSERT_NO_FATAL_FAILURE(testutil::PutBatch(*table, keys, round, oracle));
    } else if (kind < 55) {
      ASSERT_NO_FATAL_FAILURE(testutil::EraseBatch(*table, keys, round, oracle));
    } else if (kind < 70) {
      ASSERT_NO_FATAL_FAILURE(testutil::GetBatch(*table, keys, round, oracle));
    } else if (kind < 80) {
      std::vector<uint64_t> lo(n), hi(n);
      for (size_t i = 0; i < n; ++i) {
        lo[i] = keys[i];
        hi[i] = random() % 8 == 0 ? keys[i] - 1 : keys[i] + random() % 64;
      }
      ASSERT_NO_FATAL_FAILURE(testutil::CountAndRangeBatch(*table, lo, hi, round, oracle));
    } else if (kind < 95) {
      ASSERT_NO_FATAL_FAILURE(testutil::NeighbourBatch(*table, keys, /*successor=*/kind < 88,
                                                       /*zero_when_not_found=*/false, oracle));
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
