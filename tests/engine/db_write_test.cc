// Table::Write on every family on the CPU backend: random mixed batches
// (overwrites and erases of one key inside a batch) checked against
// std::map, across the LSM's log, flushes and levels, and across reopens for
// the persistent families; the engine's checks of ops; a volatile ordered
// table's snapshot sees a mixed batch whole or not at all.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "test_util.h"
#include "write_oracle.h"

namespace gpkv {
namespace {

using Family = testutil::WriteFamily;
using testutil::WriteTableOptions;

Options PoolOptions() { return testutil::DbOptions(uint64_t{64} << 20, /*threads=*/2); }

class DbWrite : public ::testing::TestWithParam<Family> {};

TEST_P(DbWrite, RandomMixedBatchesMatchAMap) {
  const Family family = GetParam();
  for (uint32_t key_size : {8u, 16u}) {
    testutil::TempPool pool(std::string("write-") + family.name + std::to_string(key_size));
    auto opened = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<DB> db = std::move(*opened);
    auto created = db->CreateTable("t", WriteTableOptions(family, key_size));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    Table* table = *created;
    std::mt19937_64 random(11 + key_size);
    testutil::RandomWriteRounds(&db, &table, pool.path(), PoolOptions(),
                                family.durability == Durability::kPersistent, random,
                                std::string(family.name) + " key " + std::to_string(key_size));
    if (HasFatalFailure()) return;
    if (family.kind == TableKind::kOrdered && family.durability == Durability::kPersistent) {
      // The batches went through the log and into the levels.
      EXPECT_GE(*table->GetProperty("lsm.levels"), 1.0);
    }
  }
}

TEST_P(DbWrite, EngineChecksOpsAndSizes) {
  const Family family = GetParam();
  testutil::TempPool pool(std::string("write-checks-") + family.name);
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  Table* table = *(*db)->CreateTable("t", WriteTableOptions(family, 8));
  const std::vector<uint64_t> keys = {1, 2, 3};
  std::vector<uint8_t> values(3 * 16, 7);
  EXPECT_TRUE(table->Write(keys, values, std::vector<uint8_t>{0, 1}).IsInvalidArgument());
  EXPECT_TRUE(table->Write(keys, values, std::vector<uint8_t>{0, 2, 1}).IsInvalidArgument());
  std::vector<uint8_t> short_values(2 * 16);
  EXPECT_TRUE(table->Write(keys, short_values, std::vector<uint8_t>{0, 0, 0}).IsInvalidArgument());
  std::vector<uint8_t> erased(2);
  EXPECT_TRUE(
      table->Write(keys, values, std::vector<uint8_t>{0, 0, 1}, erased).IsInvalidArgument());
  EXPECT_TRUE(table->Write({}, {}, {}).ok());
  // Nothing of the refused batches was applied.
  std::vector<uint8_t> got(3 * 16), found(3);
  ASSERT_TRUE(table->Get(keys, got, found).ok());
  EXPECT_EQ(found, std::vector<uint8_t>(3, 0));
}

INSTANTIATE_TEST_SUITE_P(Families, DbWrite, ::testing::ValuesIn(testutil::kWriteFamilies),
                         testutil::WriteFamilyName);

TEST(DbWrite, ReadOnlyPoolRefusesWrite) {
  testutil::TempPool pool("write-read-only");
  {
    auto db = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        (*db)
            ->CreateTable(
                "t", WriteTableOptions({"lsm", TableKind::kOrdered, Durability::kPersistent}, 8))
            .ok());
  }
  Options options = PoolOptions();
  options.create_if_missing = false;
  options.read_only = true;
  auto db = DB::Open(pool.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Table* table = *(*db)->OpenTable("t");
  const std::vector<uint64_t> keys = {1};
  std::vector<uint8_t> values(16);
  EXPECT_TRUE(table->Write(keys, values, std::vector<uint8_t>{0}).IsInvalidArgument());
}

// A snapshot taken before a mixed batch sees none of it; one taken after
// sees all of it.
TEST(DbWrite, VolatileOrderedSnapshotsSeeAMixedBatchWhole) {
  testutil::TempPool pool("write-snapshot");
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  auto created = (*db)->CreateTable(
      "t", WriteTableOptions({"btree", TableKind::kOrdered, Durability::kVolatile}, 8));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Table* table = *created;
  const std::vector<uint64_t> first = {1, 2, 3};
  std::vector<uint8_t> values(3 * 16, 1);
  ASSERT_TRUE(table->Put(first, values).ok());
  auto before = table->TakeSnapshot();
  ASSERT_TRUE(before.ok());
  // Erase 1, put 4, put then erase 2, erase then put 3.
  const std::vector<uint64_t> keys = {1, 4, 2, 2, 3, 3};
  std::vector<uint8_t> mixed(6 * 16, 2);
  const std::vector<uint8_t> ops = {1, 0, 0, 1, 1, 0};
  std::vector<uint8_t> erased(6);
  ASSERT_TRUE(table->Write(keys, mixed, ops, erased).ok());
  EXPECT_EQ(erased, (std::vector<uint8_t>{1, 0, 0, 1, 1, 0}));
  auto after = table->TakeSnapshot();
  ASSERT_TRUE(after.ok());
  const std::vector<uint64_t> probe = {1, 2, 3, 4};
  std::vector<uint8_t> got(4 * 16), found(4);
  BatchOptions options;
  options.snapshot = before->get();
  ASSERT_TRUE(table->Get(probe, got, found, options).ok());
  EXPECT_EQ(found, (std::vector<uint8_t>{1, 1, 1, 0}));
  options.snapshot = after->get();
  ASSERT_TRUE(table->Get(probe, got, found, options).ok());
  EXPECT_EQ(found, (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_EQ(got[2 * 16], 2);
}

}  // namespace
}  // namespace gpkv
