// Damage stays with its table: a pool of three tables with one table's root
// corrupt opens, that table's OpenTable is Corruption naming it and its
// offset, the other two read completely and take writes, and repair drops
// only the damaged one.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "corruption_check.h"
#include "gpkv/db.h"
#include "pool_map.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::corruption {
namespace {

const char* const kTables[] = {"a", "b", "c"};

Options PoolOptions() {
  Options options;
  options.pool_size = 16 << 20;
  options.backend = Backend::kCpu;
  options.cpu_threads = 1;
  return options;
}

// Table i holds keys 1..kKeys with value key * (i + 2).
constexpr uint64_t kKeys = 300;

void MakeThreeTablePool(const std::string& path) {
  Options options = PoolOptions();
  options.create_if_missing = true;
  auto db = DB::Open(path, options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (uint64_t i = 0; i < 3; ++i) {
    TableOptions table_options;
    table_options.expected_keys = 1024;
    auto table = (*db)->CreateTable(kTables[i], table_options);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    std::vector<uint64_t> keys, values;
    for (uint64_t key = 1; key <= kKeys; ++key) {
      keys.push_back(key);
      values.push_back(key * (i + 2));
    }
    ASSERT_TRUE((*table)->Put(keys, values).ok());
  }
  ASSERT_TRUE((*db)->Close().ok());
}

// Flips a bit of the checksum of table `name`'s root; returns the
// checksum's offset.
uint64_t DamageRoot(const std::string& path, const std::string& name) {
  PoolMap map = ReadPoolMap(path);
  for (const TableMap& table : map.tables) {
    if (table.name != name) continue;
    const uint64_t checksum = table.root + offsetof(gphash::GphashRoot, checksum);
    testutil::FlipByte(path, checksum, 0x01);
    return checksum;
  }
  ADD_FAILURE() << "no table " << name;
  return 0;
}

// Every pair of `table` as its Scan sees them.
std::map<uint64_t, uint64_t> ScanAll(Table& table) {
  std::map<uint64_t, uint64_t> pairs;
  Status scanned = table.Scan([&pairs](const uint8_t* key, const uint8_t* value) {
    uint64_t k = 0, v = 0;
    std::memcpy(&k, key, 8);
    std::memcpy(&v, value, 8);
    pairs[k] = v;
    return true;
  });
  EXPECT_TRUE(scanned.ok()) << scanned.ToString();
  return pairs;
}

void ExpectComplete(Table& table, uint64_t index) {
  std::map<uint64_t, uint64_t> pairs = ScanAll(table);
  ASSERT_EQ(pairs.size(), kKeys) << table.name();
  for (const auto& [key, value] : pairs) EXPECT_EQ(value, key * (index + 2)) << table.name();
}

TEST(TableDamage, OneDamagedTableLeavesTheOthersUsable) {
  testutil::TempPool temp("damage");
  MakeThreeTablePool(temp.path());
  ASSERT_FALSE(HasFatalFailure());
  const uint64_t checksum = DamageRoot(temp.path(), "b");
  ASSERT_NE(checksum, 0u);

  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_NO_FATAL_FAILURE(
      testutil::ExpectTableCorruptionAt((*db)->OpenTable("b").status(), "b", checksum));
  auto listed = (*db)->ListTables();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 3u);

  for (uint64_t index : {0u, 2u}) {
    auto table = (*db)->OpenTable(kTables[index]);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ExpectComplete(**table, index);
  }
  // The intact tables take writes, and keep them across a reopen.
  auto a = (*db)->OpenTable("a");
  ASSERT_TRUE(a.ok());
  std::vector<uint64_t> key = {kKeys + 1}, value = {(kKeys + 1) * 2};
  ASSERT_TRUE((*a)->Put(key, value).ok());
  ASSERT_TRUE((*db)->Close().ok());
  db->reset();

  db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_TRUE((*db)->OpenTable("b").status().IsCorruption());
  a = (*db)->OpenTable("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(ScanAll(**a).size(), kKeys + 1);
}

TEST(TableDamage, RepairDropsOnlyTheDamagedTable) {
  testutil::TempPool temp("damage-repair");
  MakeThreeTablePool(temp.path());
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_NE(DamageRoot(temp.path(), "b"), 0u);

  recovery::Report repaired;
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(temp.path(), &repaired));
  EXPECT_EQ(repaired.tables_dropped, 1u);

  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_TRUE((*db)->OpenTable("b").status().IsNotFound());
  for (uint64_t index : {0u, 2u}) {
    auto table = (*db)->OpenTable(kTables[index]);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ExpectComplete(**table, index);
  }
}

// Dropping the damaged table unlinks it without reading its bytes; the
// next open frees its extents.
TEST(TableDamage, ADamagedTableCanBeDropped) {
  testutil::TempPool temp("damage-drop");
  MakeThreeTablePool(temp.path());
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_NE(DamageRoot(temp.path(), "b"), 0u);
  uint64_t used_damaged = 0;
  {
    auto db = DB::Open(temp.path(), PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto info = (*db)->Info();
    ASSERT_TRUE(info.ok());
    used_damaged = info->used_bytes;
    ASSERT_TRUE((*db)->DropTable("b").ok());
    EXPECT_TRUE((*db)->OpenTable("b").status().IsNotFound());
  }
  auto db = DB::Open(temp.path(), PoolOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto info = (*db)->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_LT(info->used_bytes, used_damaged);
  for (uint64_t index : {0u, 2u}) {
    auto table = (*db)->OpenTable(kTables[index]);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ExpectComplete(**table, index);
  }
  db->reset();
  auto verified = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(verified.ok());
  EXPECT_FALSE(verified->HasCorruption());
}

}  // namespace
}  // namespace gpkv::corruption
