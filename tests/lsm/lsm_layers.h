// A write workload that leaves an ordered table (b = batch_entries, M = 1,
// so that every batch of b entries flushes) with runs on levels 0, 1, 2 and
// 4 and the write buffer in front of them, each key's newest entry in a
// known source, older entries of many keys in the levels below, and
// tombstones that hide live entries of older levels. A get then tests the
// filters of levels 0, 1 and 2 (every level's run but the oldest) and
// finds most keys past the first source it searches. Run against a
// std::map by the oracle tests of both backends (RunLayeredOracle), and by
// the cross-backend test (gpu/lsm_cross_backend_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/db.h"
#include "lsm/lsm_test_util.h"
#include "ordered_oracle.h"

namespace gpkv::lsmtest {

// A write batch of the workload: puts of `ids` (erases when `erase`), keys
// and values as the test makes them from ids and the batch's number.
struct LayerBatch {
  bool erase = false;
  std::vector<uint64_t> ids;
};

// Ids [first, first + count).
inline std::vector<uint64_t> IdRange(uint64_t first, uint64_t count) {
  std::vector<uint64_t> ids(count);
  for (uint64_t i = 0; i < count; ++i) ids[i] = first + i;
  return ids;
}

// The batches, in order (b >= 16, a multiple of 8; u = b). Every batch of
// exactly u entries flushes (M = 1), and the cascade fills the levels as a
// binary counter of u:
//   1-16  puts [0, 16u)                            -> level 4 (the oldest)
//   17    puts [0, u)                              -> level 0
//   18    erases [u, 2u)        (live in level 4)  -> level 1 (17 and 18)
//   19    puts [2u, 3u)                            -> level 0
//   20    puts [0, u/2), [16u, 16u + u/2)          -> level 2 (17-20)
//   21    erases [3u, 4u)       (live in level 4)  -> level 0
//   22    puts [0, u/4), [2u, 2u + 3u/4)           -> level 1 (21, 22)
//   23    puts [4u, 5u)                            -> level 0
//   24    puts [u + u/8, u + u/4) (erased by 18)   -> the log (the buffer)
//   25    erases [4u, 4u + u/8) (newest in 23)     -> the log (the buffer)
// Then a get of
//   [0, u/4)              finds batch 22's value in level 1, past the
//                         buffer and level 0 (older values in levels 2, 4);
//   [u/4, u)              finds batches 20 and 17 in level 2 (and 4);
//   [u, 2u) but 24's ids  a tombstone in level 2 (live in level 4);
//   batch 24's ids        the buffer;
//   [2u, 3u)              22 in level 1, 19 in level 2;
//   [3u, 4u)              a tombstone in level 1 (live in level 4);
//   [4u, 4u + u/8)        a tombstone in the buffer (live in level 0);
//   [4u + u/8, 5u)        23 in level 0 (older in level 4);
//   [5u, 16u)             level 4 only, past three filters;
//   [16u, 16u + u/2)      20 in level 2;
//   [16u + u/2, 20u)      nothing.
// The automatic compaction stays off at max_dead_percent >= 20 (the runs'
// dead entries, twice their tombstones, stay under 20% of their entries).
inline std::vector<LayerBatch> LayeredBatches(uint64_t u) {
  std::vector<LayerBatch> batches;
  auto put = [&](std::vector<uint64_t> ids) { batches.push_back({false, std::move(ids)}); };
  auto erase = [&](std::vector<uint64_t> ids) { batches.push_back({true, std::move(ids)}); };
  auto join = [](std::vector<uint64_t> a, const std::vector<uint64_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  for (uint64_t k = 0; k < 16; ++k) put(IdRange(k * u, u));
  put(IdRange(0, u));
  erase(IdRange(u, u));
  put(IdRange(2 * u, u));
  put(join(IdRange(0, u / 2), IdRange(16 * u, u / 2)));
  erase(IdRange(3 * u, u));
  put(join(IdRange(0, u / 4), IdRange(2 * u, 3 * u / 4)));
  put(IdRange(4 * u, u));
  put(IdRange(u + u / 8, u / 8));
  erase(IdRange(4 * u, u / 8));
  return batches;
}

// The ids the checks look up: every id the workload writes and absent ones.
inline std::vector<uint64_t> LayeredLookups(uint64_t u) { return IdRange(0, 20 * u); }

// Expects the runs of the layered workload on levels 0, 1, 2 and 4 (u, 2u,
// 7u/2 and 16u entries) and its last two batches in the write buffer.
inline void ExpectLayeredRuns(Table& table, uint64_t u) {
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  const double entries[] = {1.0 * u, 2.0 * u, 3.5 * u, 0.0, 16.0 * u};
  for (uint32_t level = 0; level < 5; ++level) {
    auto property = stats->Property("lsm.level-" + std::to_string(level) + "-entries");
    ASSERT_TRUE(property.has_value()) << "level " << level;
    EXPECT_EQ(*property, entries[level]) << "level " << level;
  }
  EXPECT_EQ(*stats->Property("lsm.runs"), 4.0);
  EXPECT_GT(*stats->Property("lsm.buffer-entries"), 0.0);
}

// The layered workload on a table of b = u, M = 1 in a fresh pool, the DB
// on `backend` (with `gpu_options` on the GPU): every key of the universe
// got and checked against a std::map after each batch; after a reopen (a
// GPU then builds the levels' filters from the runs it reads) the gets
// again, counts, ranges and neighbours; after a compaction the gets and the
// whole contents.
inline void RunLayeredOracle(Backend backend, uint64_t u, const OrderedGpuOptions& gpu_options) {
  testutil::TempPool temp("lsm-layers-" + std::to_string(static_cast<int>(backend)) + "-" +
                          std::to_string(u));
  Options options = PoolOptions(uint64_t{128} << 20, 2, backend);
  options.ordered_gpu = gpu_options;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions table_options = OrderedOptions(u);
  table_options.ordered.max_dead_percent = 40;
  auto created = (*db)->CreateTable("o", table_options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Table* table = *created;
  Oracle oracle;
  const std::vector<uint64_t> keys = LayeredLookups(u);
  uint64_t round = 0;
  for (const LayerBatch& batch : LayeredBatches(u)) {
    ++round;
    if (batch.erase) {
      ASSERT_NO_FATAL_FAILURE(testutil::EraseBatch(*table, batch.ids, round, oracle));
    } else {
      ASSERT_NO_FATAL_FAILURE(testutil::PutBatch(*table, batch.ids, round, oracle));
    }
    ASSERT_NO_FATAL_FAILURE(testutil::GetBatch(*table, keys, round, oracle));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectLayeredRuns(*table, u));

  db->reset();
  auto reopened = DB::Open(temp.path(), options);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  *db = std::move(*reopened);
  auto opened = (*db)->OpenTable("o");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  table = *opened;
  ASSERT_NO_FATAL_FAILURE(ExpectLayeredRuns(*table, u));
  ++round;
  ASSERT_NO_FATAL_FAILURE(testutil::GetBatch(*table, keys, round, oracle));
  std::vector<uint64_t> highs(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) highs[i] = keys[i] + i % 9;
  ASSERT_NO_FATAL_FAILURE(testutil::CountAndRangeBatch(*table, keys, highs, round, oracle));
  ASSERT_NO_FATAL_FAILURE(testutil::NeighbourBatch(*table, keys, /*successor=*/true,
                                                   /*zero_when_not_found=*/false, oracle));
  ASSERT_NO_FATAL_FAILURE(testutil::NeighbourBatch(*table, keys, /*successor=*/false,
                                                   /*zero_when_not_found=*/false, oracle));

  ASSERT_TRUE(table->Compact().ok());
  ++round;
  ASSERT_NO_FATAL_FAILURE(testutil::GetBatch(*table, keys, round, oracle));
  EXPECT_EQ(Contents(*table), oracle);
}

}  // namespace gpkv::lsmtest
