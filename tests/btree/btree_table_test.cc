// The volatile ordered table as the engine and a user meet it: options the
// family refuses, the engine's size checks on every call, the stats and
// properties, an empty table at every open, verify's note, and the backend
// rule (Unsupported on kCuda where the GPU cannot take the table, the CPU
// under kAuto).
#include <gtest/gtest.h>

#include "btree/btree_test_util.h"
#include "engine/backend.h"
#include "recovery/verify.h"
#include "tables/btree/family.h"
#include "tables/btree/table.h"

namespace gpkv::btreetest {
namespace {

TEST(BtreeTable, OptionsOfOtherFamiliesAreRefused) {
  testutil::TempPool temp("btree-options");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok());
  TableOptions geometry = VolatileOrdered();
  geometry.hash.levels = 3;
  EXPECT_TRUE((*db)->CreateTable("a", geometry).status().IsInvalidArgument());
  TableOptions batch = VolatileOrdered();
  batch.ordered.batch_entries = 1024;
  Status status = (*db)->CreateTable("b", batch).status();
  EXPECT_TRUE(status.IsInvalidArgument()) << status.ToString();
  EXPECT_NE(status.message().find("persistent ordered"), std::string::npos) << status.ToString();
  TableOptions logged = VolatileOrdered();
  logged.hash_log.batch_entries = 1024;
  status = (*db)->CreateTable("f", logged).status();
  EXPECT_TRUE(status.IsInvalidArgument()) << status.ToString();
  EXPECT_NE(status.message().find("persistent hash tables only"), std::string::npos);
  EXPECT_TRUE((*db)->CreateTable("c", VolatileOrdered(12, 8)).status().IsInvalidArgument());
  EXPECT_TRUE((*db)->CreateTable("d", VolatileOrdered(8, 129)).status().IsInvalidArgument());
  TableOptions huge = VolatileOrdered();
  huge.expected_keys = (uint64_t{1} << 40) + 1;
  EXPECT_TRUE((*db)->CreateTable("e", huge).status().IsInvalidArgument());
  EXPECT_TRUE((*db)->ListTables()->empty());
}

TEST(BtreeTable, EveryCallChecksItsSizes) {
  OpenTable open("sizes", VolatileOrdered(16, 4));
  Table& table = *open.table;
  std::vector<uint8_t> keys(32), values(8), found(2), bad(7);
  EXPECT_TRUE(table.Put(bad, values).IsInvalidArgument());
  EXPECT_TRUE(table.Put(keys, bad).IsInvalidArgument());
  ASSERT_TRUE(table.Put(keys, values).ok());
  EXPECT_TRUE(table.Get(keys, bad, found).IsInvalidArgument());
  EXPECT_TRUE(table.Get(keys, values, bad).IsInvalidArgument());
  EXPECT_TRUE(table.Erase(keys, bad).IsInvalidArgument());
  std::vector<uint8_t> lo(32), hi(16), counts(16);
  EXPECT_TRUE(table.Count(lo, hi, counts).IsInvalidArgument());
  hi.resize(32);
  EXPECT_TRUE(table.Count(lo, hi, bad).IsInvalidArgument());
  ASSERT_TRUE(table.Count(lo, hi, counts).ok());
  EXPECT_TRUE(table.Range(lo, hi, nullptr).IsInvalidArgument());
  std::vector<uint8_t> next(32);
  EXPECT_TRUE(table.Successor(keys, bad, values, found).IsInvalidArgument());
  EXPECT_TRUE(table.Predecessor(keys, next, bad, found).IsInvalidArgument());
  ASSERT_TRUE(table.Successor(keys, next, values, found).ok());
  Table::DeviceRangeResults device;
  EXPECT_TRUE(table.RangeOnDevice(lo, hi, &device).IsUnsupported());
  // Empty batches are no-ops: the clock does not move.
  ASSERT_TRUE(table.Put(std::vector<uint8_t>{}, std::vector<uint8_t>{}).ok());
  EXPECT_EQ(Property(table, "btree.timestamp"), 1.0);
}

TEST(BtreeTable, StatsNameTheFamilyAndItsProperties) {
  OpenTable open("stats", VolatileOrdered(8, 100));
  Table& table = *open.table;
  std::vector<uint64_t> keys{3, 1, 2};
  std::vector<uint8_t> values(300, 7);
  ASSERT_TRUE(table.Put(keys, values).ok());
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->family, "btree");
  EXPECT_EQ(stats->kind, TableKind::kOrdered);
  EXPECT_EQ(stats->durability, Durability::kVolatile);
  EXPECT_EQ(stats->backend, "cpu");
  EXPECT_EQ(stats->fallback, "");
  EXPECT_EQ(stats->keys, 3u);
  EXPECT_GE(stats->bytes, 300u);
  for (const char* name : {"btree.versions", "btree.tombstones", "btree.snapshots",
                           "btree.reclaimed", "btree.timestamp"}) {
    EXPECT_TRUE(stats->Property(name).has_value()) << name;
  }
  EXPECT_TRUE(table.GetProperty("btree.nothing").status().IsNotFound());
  // Values of more than 8 bytes come back whole, from reused cells too.
  ASSERT_TRUE(table.Erase(std::vector<uint64_t>{1}).ok());
  std::vector<uint8_t> other(100, 9);
  ASSERT_TRUE(table.Put(std::vector<uint64_t>{4}, other).ok());
  std::vector<uint64_t> probe{2, 4, 1};
  std::vector<uint8_t> read(300), found(3);
  ASSERT_TRUE(table.Get(probe, read, found).ok());
  EXPECT_EQ(found, (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(std::vector<uint8_t>(read.begin(), read.begin() + 100), std::vector<uint8_t>(100, 7));
  EXPECT_EQ(std::vector<uint8_t>(read.begin() + 100, read.begin() + 200), other);
  EXPECT_EQ(std::vector<uint8_t>(read.begin() + 200, read.end()), std::vector<uint8_t>(100, 0));
}

TEST(BtreeTable, ATableIsEmptyAtEveryOpenAndVerifyNotesIt) {
  testutil::TempPool temp("btree-reopen");
  {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok());
    auto table = (*db)->CreateTable("t", VolatileOrdered());
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_TRUE((*table)->Put(std::vector<uint64_t>{1, 2}, std::vector<uint64_t>{3, 4}).ok());
    EXPECT_EQ((*table)->Stats()->keys, 2u);
  }
  {
    auto db = DB::Open(temp.path(), CpuOptions());
    ASSERT_TRUE(db.ok());
    auto table = (*db)->OpenTable("t");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_EQ((*table)->options().kind, TableKind::kOrdered);
    EXPECT_EQ((*table)->options().durability, Durability::kVolatile);
    EXPECT_EQ((*table)->Stats()->keys, 0u);
    std::vector<uint64_t> lo{0}, hi{10}, counts(1);
    ASSERT_TRUE((*table)->Count(lo, hi, counts).ok());
    EXPECT_EQ(counts[0], 0u);
  }
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->HasCorruption());
  bool noted = false;
  for (const auto& finding : report->findings) {
    noted |= finding.message.find("table 't': volatile") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

// Asked for kCuda where the GPU cannot take the table (no usable device, or
// a build without CUDA), the family says Unsupported and why; the engine's
// rule then runs the table on the CPU under kAuto and gives a DB that asked
// for kCuda the error. Where there is a device the table opens on it
// (tests/btree/gpu/ runs the family's tests there).
TEST(BtreeTable, WhereTheGpuCannotTakeItKCudaIsUnsupported) {
  auto on_gpu = btree::OpenEmptyTable("pool.gpkv: table 'ordered'", "ordered", VolatileOrdered(),
                                      Backend::kCuda, 1);
  if (on_gpu.ok()) {
    EXPECT_EQ((*on_gpu)->options().kind, TableKind::kOrdered);
  } else {
    ASSERT_TRUE(on_gpu.status().IsUnsupported()) << on_gpu.status().ToString();
    EXPECT_EQ(on_gpu.status().message().rfind("pool.gpkv: table 'ordered': ", 0), 0u)
        << on_gpu.status().ToString();
    EXPECT_TRUE(engine::FallsBackToCpu(Backend::kAuto, on_gpu.status()));
    EXPECT_FALSE(engine::FallsBackToCpu(Backend::kCuda, on_gpu.status()));
  }
  auto on_cpu = btree::OpenEmptyTable("w", "ordered", VolatileOrdered(), Backend::kCpu, 1);
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.status().ToString();
  EXPECT_EQ((*on_cpu)->options().kind, TableKind::kOrdered);
}

}  // namespace
}  // namespace gpkv::btreetest
