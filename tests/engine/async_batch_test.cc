// BatchOptions::async on tables that run every batch to completion (the CPU
// backend of every family) and the engine's check that an async batch names
// a stream.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/db.h"
#include "test_util.h"

namespace gpkv {
namespace {

using testutil::TableOf;

Options CpuOptions() { return testutil::DbOptions(uint64_t{64} << 20, /*threads=*/2); }

// A stream handle the CPU backend never dereferences (it has nothing to
// order after): any non-null value names "a stream".
void* const kSomeStream = reinterpret_cast<void*>(uintptr_t{0x1000});

class AsyncBatchOnCpu : public ::testing::TestWithParam<std::pair<TableKind, Durability>> {};

TEST_P(AsyncBatchOnCpu, RunsToCompletionBeforeReturningAndSynchronizeFindsNothing) {
  testutil::TempPool temp("async-cpu");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("t", TableOf(GetParam().first, GetParam().second));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  BatchOptions queued;
  queued.async = true;
  queued.stream = kSomeStream;
  // More keys than the table expects: a hash table grows within the call.
  const size_t count = 5000;
  std::vector<uint64_t> keys(count), values(count);
  for (size_t i = 0; i < count; ++i) {
    keys[i] = i * 7 + 1;
    values[i] = i + 100;
  }
  ASSERT_TRUE((*table)->Put(keys, values, queued).ok());
  // Complete on return: a get without the wait sees every pair.
  std::vector<uint64_t> read(count, 0);
  std::vector<uint8_t> found(count, 0);
  ASSERT_TRUE((*table)->Get(keys, read, found, queued).ok());
  EXPECT_EQ(read, values);
  EXPECT_EQ(found, std::vector<uint8_t>(count, 1));
  EXPECT_TRUE((*table)->Synchronize(kSomeStream).ok());
  std::vector<uint64_t> erase_keys(keys.begin(), keys.begin() + count / 2);
  std::vector<uint8_t> erased(erase_keys.size(), 0);
  ASSERT_TRUE((*table)->Erase(erase_keys, erased, queued).ok());
  EXPECT_EQ(erased, std::vector<uint8_t>(erase_keys.size(), 1));
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->keys, count - erase_keys.size());
  EXPECT_TRUE((*table)->Synchronize(kSomeStream).ok());
  EXPECT_TRUE((*table)->Synchronize(nullptr).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Families, AsyncBatchOnCpu,
    ::testing::Values(std::make_pair(TableKind::kHash, Durability::kPersistent),
                      std::make_pair(TableKind::kHash, Durability::kVolatile),
                      std::make_pair(TableKind::kOrdered, Durability::kPersistent),
                      std::make_pair(TableKind::kOrdered, Durability::kVolatile)));

TEST(AsyncBatch, WritesOfAnAsyncBatchOnTheCpuAreDurableOnReturn) {
  testutil::TempPool temp("async-durable");
  std::vector<uint64_t> keys = {1, 2, 3}, values = {10, 20, 30};
  {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->CreateTable("t", TableOptions{});
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    BatchOptions queued;
    queued.async = true;
    queued.stream = kSomeStream;
    ASSERT_TRUE((*table)->Put(keys, values, queued).ok());
  }
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("t");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> read(3, 0);
  ASSERT_TRUE((*table)->Get(keys, read, {}).ok());
  EXPECT_EQ(read, values);
}

TEST(AsyncBatch, AnAsyncBatchWithoutAStreamIsInvalidArgumentOnEveryTable) {
  testutil::TempPool temp("async-no-stream");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  BatchOptions no_stream;
  no_stream.async = true;
  std::vector<uint64_t> keys = {1}, values = {2}, read(1);
  std::vector<uint8_t> flags(1);
  int index = 0;
  for (auto [kind, durability] : {std::make_pair(TableKind::kHash, Durability::kPersistent),
                                  std::make_pair(TableKind::kHash, Durability::kVolatile),
                                  std::make_pair(TableKind::kOrdered, Durability::kPersistent),
                                  std::make_pair(TableKind::kOrdered, Durability::kVolatile)}) {
    auto table = (*db)->CreateTable("t" + std::to_string(index++), TableOf(kind, durability));
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    Status put = (*table)->Put(keys, values, no_stream);
    EXPECT_EQ(put.code(), Code::kInvalidArgument) << put.ToString();
    EXPECT_NE(put.message().find("needs a stream"), std::string::npos) << put.ToString();
    EXPECT_EQ((*table)->Get(keys, read, flags, no_stream).code(), Code::kInvalidArgument);
    EXPECT_EQ((*table)->Erase(keys, flags, no_stream).code(), Code::kInvalidArgument);
    // Nothing was written.
    ASSERT_TRUE((*table)->Get(keys, read, flags).ok());
    EXPECT_EQ(flags[0], 0);
  }
}

TEST(AsyncBatch, SynchronizeOnAClosedTableIsInvalidArgument) {
  testutil::TempPool temp("async-closed");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("t", TableOptions{});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_TRUE((*db)->Close().ok());
  EXPECT_EQ((*table)->Synchronize(kSomeStream).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace gpkv
