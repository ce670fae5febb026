// The LSM family's batch calls on small tables: puts, gets, erases across the
// write buffer, flushes and cascades; ordered queries; reopen; compaction;
// the hash tables' Unsupported answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "lsm_test_util.h"

namespace gpkv {
namespace {

using lsmtest::Active;
using lsmtest::Contents;
using lsmtest::Oracle;
using lsmtest::OrderedOptions;
using lsmtest::PoolOptions;
using lsmtest::ReadRoot;

TEST(LsmBasic, PutGetEraseAcrossBufferAndLevels) {
  testutil::TempPool temp("lsm-basic");
  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("o", OrderedOptions(16));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  Oracle oracle;
  for (uint64_t round = 0; round < 50; ++round) {
    std::vector<uint64_t> keys, values;
    for (uint64_t i = 0; i < 1 + round % 7; ++i) {
      keys.push_back((round * 7 + i * 13) % 97);
      values.push_back(round * 1000 + i);
      oracle[keys.back()] = values.back();
    }
    ASSERT_TRUE((*table)->Put(keys, values).ok());
    if (round % 5 == 4) {
      std::vector<uint64_t> erase = {round % 97, (round * 3) % 97};
      std::vector<uint8_t> erased(erase.size());
      ASSERT_TRUE((*table)->Erase(erase, erased).ok());
      for (size_t i = 0; i < erase.size(); ++i) {
        const bool present = oracle.erase(erase[i]) == 1;
        if (i == 1 && erase[1] == erase[0]) {
          EXPECT_EQ(erased[i], 0);
        } else {
          EXPECT_EQ(erased[i], present ? 1 : 0) << "round " << round << " key " << erase[i];
        }
      }
    }
    ASSERT_EQ(Contents(**table), oracle) << "round " << round;
  }
  std::vector<uint64_t> keys(100);
  std::iota(keys.begin(), keys.end(), 0);
  std::vector<uint64_t> values(100);
  std::vector<uint8_t> found(100);
  ASSERT_TRUE((*table)->Get(keys, values, found).ok());
  for (uint64_t k = 0; k < 100; ++k) {
    auto it = oracle.find(k);
    ASSERT_EQ(found[k], it != oracle.end()) << k;
    if (found[k]) EXPECT_EQ(values[k], it->second);
  }
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, oracle.size());
  EXPECT_EQ(stats->family, "lsm");
  EXPECT_GE(*stats->Property("lsm.levels"), 2.0);

  db->reset();
  auto reopened = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto again = (*reopened)->OpenTable("o");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Contents(**again), oracle);
  ASSERT_TRUE((*again)->Compact().ok());
  EXPECT_EQ(Contents(**again), oracle);
  EXPECT_EQ(*(*again)->GetProperty("lsm.dead-entries"), 0.0);
  EXPECT_EQ(*(*again)->GetProperty("lsm.tombstones"), 0.0);
}

TEST(LsmBasic, OrderedQueries) {
  testutil::TempPool temp("lsm-queries");
  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("o", OrderedOptions(16));
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> keys, values;
  for (uint64_t k = 10; k <= 100; k += 10) {
    keys.push_back(k);
    values.push_back(k + 1);
  }
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  std::vector<uint64_t> gone = {50};
  ASSERT_TRUE((*table)->Erase(gone).ok());
  std::vector<uint64_t> lo = {0, 15, 50, 100, 60}, hi = {1000, 45, 50, 100, 20};
  std::vector<uint64_t> counts(lo.size());
  ASSERT_TRUE((*table)->Count(lo, hi, counts).ok());
  EXPECT_EQ(counts, (std::vector<uint64_t>{9, 3, 0, 1, 0}));
  Table::RangeResults results;
  ASSERT_TRUE((*table)->Range(lo, hi, &results).ok());
  ASSERT_EQ(results.offsets, (std::vector<uint64_t>{0, 9, 12, 12, 13, 13}));
  uint64_t key;
  std::memcpy(&key, &results.keys[9 * 8], 8);
  EXPECT_EQ(key, 20u);
  std::vector<uint64_t> probe = {0, 10, 45, 50, 101}, next(5), next_values(5);
  std::vector<uint8_t> found(5);
  ASSERT_TRUE((*table)->Successor(probe, next, next_values, found).ok());
  EXPECT_EQ(next, (std::vector<uint64_t>{10, 10, 60, 60, 0}));
  EXPECT_EQ(found, (std::vector<uint8_t>{1, 1, 1, 1, 0}));
  EXPECT_EQ(next_values[2], 61u);
  ASSERT_TRUE((*table)->Predecessor(probe, next, next_values, found).ok());
  EXPECT_EQ(next, (std::vector<uint64_t>{0, 10, 40, 40, 100}));
  EXPECT_EQ(found, (std::vector<uint8_t>{0, 1, 1, 1, 1}));
}

TEST(LsmBasic, WideKeysOrderByTheirLastWord) {
  testutil::TempPool temp("lsm-wide");
  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("w", OrderedOptions(16, 3, 16));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  // (low, high) words: order is by high first.
  std::vector<uint64_t> keys = {5, 1, 1, 2, 9, 0};
  std::vector<uint8_t> values = {1, 1, 1, 2, 2, 2, 3, 3, 3};
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  std::vector<uint64_t> probe = {6, 0, 0, 1}, next(4);
  std::vector<uint8_t> next_values(6), found(2);
  ASSERT_TRUE((*table)->Successor(probe, next, next_values, found).ok());
  EXPECT_EQ(next, (std::vector<uint64_t>{9, 0, 5, 1}));
  EXPECT_EQ(next_values, (std::vector<uint8_t>{3, 3, 3, 1, 1, 1}));
  EXPECT_EQ(found, (std::vector<uint8_t>{1, 1}));
}

TEST(LsmBasic, HashTablesAnswerOrderedCallsWithUnsupported) {
  testutil::TempPool temp("lsm-hash");
  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("h", TableOptions{});
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> keys = {1}, out(1), counts(1);
  std::vector<uint8_t> found(1);
  Status count = (*table)->Count(keys, keys, counts);
  EXPECT_TRUE(count.IsUnsupported());
  EXPECT_NE(count.message().find("table 'h' is a hash table"), std::string::npos)
      << count.ToString();
  Table::RangeResults results;
  EXPECT_TRUE((*table)->Range(keys, keys, &results).IsUnsupported());
  EXPECT_TRUE((*table)->Successor(keys, out, out, found).IsUnsupported());
  EXPECT_TRUE((*table)->Predecessor(keys, out, out, found).IsUnsupported());
  EXPECT_TRUE((*table)->Compact().IsUnsupported());
  Table::DeviceRangeResults device;
  EXPECT_TRUE((*table)->RangeOnDevice(keys, keys, &device).IsUnsupported());
}

// Range results in GPU memory need the GPU backend: the CPU backend says
// Unsupported and leaves the results untouched.
TEST(LsmBasic, RangeOnDeviceIsUnsupportedOnTheCpuBackend) {
  testutil::TempPool temp("lsm-device-range");
  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("o", OrderedOptions(16));
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> keys = {1, 2, 3}, values = {4, 5, 6};
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  Table::DeviceRangeResults device;
  Status status = (*table)->RangeOnDevice(keys, keys, &device);
  EXPECT_TRUE(status.IsUnsupported()) << status.ToString();
  EXPECT_NE(status.message().find("table 'o'"), std::string::npos) << status.ToString();
  EXPECT_EQ(device.storage, nullptr);
  EXPECT_EQ(device.pairs, 0u);
}

// M = 4, b = 16: three batches of b go to the log (published, replayed at
// open, no run written); the fourth fills the buffer, and the flush writes
// one run of 4b entries at level 2 and empties the log.
TEST(LsmBasic, AFullLogHalfStartsACheckpointPublishedBehindTheBatches) {
  testutil::TempPool temp("lsm-log-batches");
  TableOptions options = OrderedOptions(16);
  options.ordered.log_batches = 4;
  Oracle oracle;
  auto put_batch = [&](Table& table, uint64_t batch) {
    std::vector<uint64_t> keys, values;
    for (uint64_t i = 0; i < 16; ++i) {
      keys.push_back(i * 7 + batch);  // overlapping key ranges, distinct keys
      values.push_back(batch * 1000 + i);
      oracle[keys.back()] = values.back();
    }
    ASSERT_TRUE(table.Put(keys, values).ok());
  };
  auto property = [](Table& table, const std::string& name) {
    auto stats = table.Stats();
    EXPECT_TRUE(stats.ok());
    return *stats->Property("lsm." + name);
  };
  {
    auto db = DB::Open(temp.path(), PoolOptions());
    ASSERT_TRUE(db.ok());
    auto table = (*db)->CreateTable("o", options);
    ASSERT_TRUE(table.ok());
    EXPECT_EQ((*table)->options().ordered.log_batches, 4u);
    for (uint64_t batch = 0; batch < 3; ++batch) put_batch(**table, batch);
    EXPECT_EQ(property(**table, "runs"), 0.0);
    EXPECT_EQ(property(**table, "buffer-entries"), 48.0);
    EXPECT_EQ(property(**table, "log-batches"), 4.0);
    // Columnar records of 8-byte keys and values: 24 + 16 * 16 bytes each.
    EXPECT_EQ(property(**table, "log-bytes"), 3.0 * (24 + 16 * 16));
  }
  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  Table* table = *(*db)->OpenTable("o");
  EXPECT_EQ(table->options().ordered.log_batches, 4u);
  EXPECT_EQ(Contents(*table), oracle);
  // The log half holds 3 * b of its M * b: the fourth batch starts a
  // checkpoint (the three batches become a level 2 run) and opens the other
  // half of the log.
  put_batch(*table, 3);
  EXPECT_EQ(property(*table, "runs"), 1.0);
  EXPECT_EQ(property(*table, "level-2-entries"), 48.0);
  EXPECT_EQ(property(*table, "buffer-entries"), 16.0);
  EXPECT_EQ(property(*table, "log-bytes"), 24.0 + 16 * 16);
  EXPECT_EQ(Contents(*table), oracle);
  // Its manifest is published before the third batch of the new half
  // (CheckpointPublishBatch(4) = 3): until then the pool's manifest names
  // no run and the records of both halves are what a crash would replay.
  put_batch(*table, 4);
  EXPECT_EQ(Active(ReadRoot(temp.path())).applied_seq, 0u);
  EXPECT_EQ(Active(ReadRoot(temp.path())).log_half, 0u);
  put_batch(*table, 5);
  const lsm::Manifest published = Active(ReadRoot(temp.path()));
  EXPECT_EQ(published.applied_seq, 3u);
  EXPECT_EQ(published.log_half, 1u);
  EXPECT_EQ(published.levels[2].entries, 48u);
  EXPECT_EQ(Contents(*table), oracle);
}

TEST(LsmBasic, BadSpansAndOptionsAreInvalidArgument) {
  testutil::TempPool temp("lsm-spans");
  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  EXPECT_TRUE((*db)->CreateTable("b", OrderedOptions(100)).status().IsInvalidArgument());
  EXPECT_TRUE((*db)->CreateTable("b", OrderedOptions(8)).status().IsInvalidArgument());
  for (uint32_t log_batches : {0u, 1025u}) {
    TableOptions options = OrderedOptions(16);
    options.ordered.log_batches = log_batches;
    EXPECT_TRUE((*db)->CreateTable("b", options).status().IsInvalidArgument()) << log_batches;
  }
  TableOptions hash_log = OrderedOptions(16);
  hash_log.hash_log.log_batches = 4;  // a hash table's log: refused, not ignored
  Status refused = (*db)->CreateTable("b", hash_log).status();
  EXPECT_TRUE(refused.IsInvalidArgument()) << refused.ToString();
  EXPECT_NE(refused.message().find("persistent hash tables only"), std::string::npos);
  auto table = (*db)->CreateTable("o", OrderedOptions(16));
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> lo = {1, 2}, hi = {3}, counts(2);
  EXPECT_TRUE((*table)->Count(lo, hi, counts).IsInvalidArgument());
  std::vector<uint64_t> short_counts(1);
  EXPECT_TRUE((*table)->Count(lo, lo, short_counts).IsInvalidArgument());
  EXPECT_TRUE((*table)->Range(lo, lo, nullptr).IsInvalidArgument());
  EXPECT_TRUE((*table)->RangeOnDevice(lo, lo, nullptr).IsInvalidArgument());
  Table::DeviceRangeResults device;
  EXPECT_TRUE((*table)->RangeOnDevice(lo, hi, &device).IsInvalidArgument());
}

}  // namespace
}  // namespace gpkv
