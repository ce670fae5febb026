// Minimal regression tests for what the corruption tests and the fuzzer found
// (one test per finding; docs/GUARANTEES.md section 6 states the contract).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "corruption_check.h"
#include "format/checksum.h"
#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "pool_map.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::corruption {
namespace {

Options SmallPool() {
  Options options;
  options.create_if_missing = true;
  options.pool_size = 4 << 20;
  options.backend = Backend::kCpu;
  options.cpu_threads = 1;
  return options;
}

// SmallPool() of a pool that exists.
Options ExistingPool() {
  Options options = SmallPool();
  options.create_if_missing = false;
  return options;
}

TableOptions SmallTable() {
  TableOptions options;
  options.expected_keys = 256;
  return options;
}

std::vector<uint64_t> Keys() {
  std::vector<uint64_t> keys;
  for (uint64_t i = 1; i <= 500; ++i) keys.push_back(i * 0x9e3779b97f4a7c15ULL);
  return keys;
}

// Two tables, "first" then "second", each with Keys() (value = ~key).
void MakeTwoTablePool(const std::string& path) {
  auto db = DB::Open(path, SmallPool());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  std::vector<uint64_t> keys = Keys(), values;
  for (uint64_t key : keys) values.push_back(~key);
  for (const char* name : {"first", "second"}) {
    auto table = (*db)->CreateTable(name, SmallTable());
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_TRUE((*table)->Put(keys, values).ok());
  }
}

// Number of Keys() that table `table_id` (found by id: repair renames tables
// it rebuilds) of the pool at path holds with their values; -1 if the pool
// does not open, 0 if the table is gone.
int IntactKeys(const std::string& path, uint64_t table_id) {
  auto db = DB::Open(path, ExistingPool());
  if (!db.ok()) return -1;
  auto tables = (*db)->ListTables();
  if (!tables.ok()) return -1;
  for (const TableInfo& info : *tables) {
    if (info.id != table_id) continue;
    auto table = (*db)->OpenTable(info.name);
    if (!table.ok()) return 0;
    std::vector<uint64_t> keys = Keys(), values(keys.size());
    std::vector<uint8_t> found(keys.size());
    if (!(*table)->Get(keys, values, found).ok()) return 0;
    int intact = 0;
    for (size_t i = 0; i < keys.size(); ++i) intact += found[i] && values[i] == ~keys[i];
    return intact;
  }
  return 0;
}

// Both tables of a MakeTwoTablePool pool hold every key.
void ExpectBothTablesIntact(const std::string& path) {
  EXPECT_EQ(IntactKeys(path, 1), 500);
  EXPECT_EQ(IntactKeys(path, 2), 500);
}

// Each test damages a pool of two tables (MakeTwoTablePool).
class CorruptionRegression : public ::testing::Test {
 protected:
  void SetUp() override { MakeTwoTablePool(temp_.path()); }

  testutil::TempPool temp_{"regression"};
};

uint64_t CurrentSuperblockOffset(const std::string& path) {
  PoolMap map = ReadPoolMap(path);
  return format::kSuperblockOffset[map.current_superblock];
}

// Found by RegionCorruption/superblock_current. Creating "second" wrote a
// new superblock and freed the catalog the older copy points to. With the
// current copy damaged, Pool::Open falls back to the older copy, whose
// catalog extent is free (but still intact): DB::Open then succeeds without
// "second" and its open-time recovery frees all of "second"'s extents as
// unreachable. A damaged superblock silently destroys a table.
TEST_F(CorruptionRegression, DamagedCurrentSuperblockDoesNotSilentlyLoseALaterTable) {
  testutil::FlipByte(temp_.path(), CurrentSuperblockOffset(temp_.path()) + 16, 0x01);

  auto db = DB::Open(temp_.path(), ExistingPool());
  if (db.ok()) {
    auto second = (*db)->OpenTable("second");
    EXPECT_TRUE(second.ok())
        << "DB::Open succeeded on a pool whose current superblock is damaged, without the table "
           "created last (the older superblock's catalog extent is not allocated); it should "
           "refuse with Corruption";
  } else {
    EXPECT_TRUE(db.status().IsCorruption()) << db.status().ToString();
  }
}

// Same damage; repair must keep both tables (their roots are intact and
// listed in the extent table) and leave a pool verify finds clean.
TEST_F(CorruptionRegression, RepairOfADamagedCurrentSuperblockKeepsEveryTable) {
  testutil::FlipByte(temp_.path(), CurrentSuperblockOffset(temp_.path()) + 16, 0x01);
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(temp_.path()));
  ExpectBothTablesIntact(temp_.path());
}

// Offset (in the extent table) of the entry of the first allocated extent of
// `kind`.
uint64_t EntryOfKind(const std::string& path, uint32_t kind) {
  PoolMap map = ReadPoolMap(path);
  for (uint64_t entry : map.allocated_entries) {
    if (map.At<format::ExtentEntry>(entry).kind == kind) return entry;
  }
  return 0;
}

// Found by RegionCorruption/extent_placement: one damaged extent table entry
// makes ExtentAllocator::Load fail, so pm::Pool::Open fails and RepairPool
// refuses the pool, although its contract refuses only an unreadable header
// or two unreadable superblocks. Every table is intact.
TEST_F(CorruptionRegression, RepairSalvagesAPoolWithOneInvalidExtentState) {
  uint64_t entry = EntryOfKind(temp_.path(), format::kExtentKindBucketLevel);
  ASSERT_NE(entry, 0u);
  testutil::FlipByte(temp_.path(), entry + offsetof(format::ExtentEntry, state), 0x01);
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(temp_.path()));
  ExpectBothTablesIntact(temp_.path());
}

// Found by RegionCorruption/extent_placement: an entry whose offset moved by
// one bit (into free heap) loads (it overlaps nothing), but the level it described is now
// "referenced but not allocated"; repair then drops the whole table instead
// of marking the level allocated again: 500 intact keys lost.
TEST_F(CorruptionRegression, RepairKeepsATableWhoseLevelEntryOffsetMoved) {
  PoolMap map = ReadPoolMap(temp_.path());
  // A level entry and an offset bit whose flip moves the extent into free
  // heap (so that the extent table still loads).
  uint64_t moved = 0;
  int moved_bit = 0;
  for (uint64_t entry : map.allocated_entries) {
    auto extent = map.At<format::ExtentEntry>(entry);
    if (extent.kind != format::kExtentKindBucketLevel) continue;
    for (int bit = 12; bit < 22 && moved == 0; ++bit) {
      uint64_t begin = extent.offset ^ (uint64_t{1} << bit), end = begin + extent.length;
      bool clear = begin >= map.header.heap_offset && end <= map.bytes.size();
      for (const format::ExtentEntry& other : map.extents) {
        if (other.offset != extent.offset && begin < other.offset + other.length &&
            other.offset < end) {
          clear = false;
        }
      }
      if (clear) {
        moved = entry;
        moved_bit = bit;
      }
    }
    if (moved != 0) break;
  }
  ASSERT_NE(moved, 0u) << "no level extent can move into free heap in this pool";
  testutil::FlipByte(temp_.path(), moved + moved_bit / 8,
                     static_cast<uint8_t>(1u << (moved_bit % 8)));
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectVerifyFindsCorruption(temp_.path()));
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(temp_.path()));
  EXPECT_EQ(IntactKeys(temp_.path(), 1) + IntactKeys(temp_.path(), 2), 1000)
      << "repair dropped a table whose bytes are all intact";
}

// Found by FuzzCorpus.SeededMutationsOfTheSeedsViolateNothing (a cut input
// zeroes the end of the extent table): the current catalog's extent entry
// reads free. Neither DB::Open nor ReadCatalog checks that the catalog extent
// is allocated, so the pool opens and the allocator may hand the catalog's
// bytes to the next extent: creating a table then destroys the catalog.
TEST_F(CorruptionRegression, AFreeCatalogExtentIsNotHandedOutAgain) {
  uint64_t entry = EntryOfKind(temp_.path(), format::kExtentKindCatalog);
  ASSERT_NE(entry, 0u);
  testutil::WriteBytes<uint64_t>(temp_.path(), entry + offsetof(format::ExtentEntry, state),
                                 format::kExtentFree);
  {
    auto db = DB::Open(temp_.path(), ExistingPool());
    if (!db.ok()) {
      EXPECT_TRUE(db.status().IsCorruption()) << db.status().ToString();
      return;  // refusing is fine
    }
    auto third = (*db)->CreateTable("third", SmallTable());
    if (third.ok()) {
      std::vector<uint64_t> keys = Keys(), values(keys.size(), 7);
      EXPECT_TRUE((*third)->Put(keys, values).ok());
    } else {
      EXPECT_TRUE(third.status().IsCorruption())
          << "CreateTable on a pool whose catalog extent reads free: " << third.status().ToString();
    }
  }
  EXPECT_EQ(IntactKeys(temp_.path(), 1), 500) << "the pool opened, then lost table 'first'";
  EXPECT_EQ(IntactKeys(temp_.path(), 2), 500) << "the pool opened, then lost table 'second'";
}

// Same damage: a repair that returns OK must leave a pool verify finds clean
// (it leaves the catalog extent "referenced but not allocated").
TEST_F(CorruptionRegression, RepairReallocatesAFreeCatalogExtent) {
  uint64_t entry = EntryOfKind(temp_.path(), format::kExtentKindCatalog);
  ASSERT_NE(entry, 0u);
  testutil::WriteBytes<uint64_t>(temp_.path(), entry + offsetof(format::ExtentEntry, state),
                                 format::kExtentFree);
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(temp_.path()));
  ExpectBothTablesIntact(temp_.path());
}

// Rewrites catalog entry `index` of the pool at path with `edit` applied and
// the catalog's checksum recomputed: damage the checksum cannot see.
template <typename Edit>
void EditCatalogEntry(const std::string& path, size_t index, Edit edit) {
  PoolMap map = ReadPoolMap(path);
  ASSERT_NE(map.catalog, 0u);
  auto header = map.At<format::CatalogHeader>(map.catalog);
  ASSERT_LT(index, header.entry_count);
  std::vector<uint8_t> bytes(map.bytes.begin() + static_cast<long>(map.catalog),
                             map.bytes.begin() + static_cast<long>(map.catalog + map.catalog_used));
  format::CatalogEntry entry;
  uint8_t* at = bytes.data() + sizeof(format::CatalogHeader) + index * sizeof(entry);
  std::memcpy(&entry, at, sizeof(entry));
  edit(entry);
  std::memcpy(at, &entry, sizeof(entry));
  header.checksum = format::Checksum64(bytes.data(), offsetof(format::CatalogHeader, checksum)) ^
                    format::Checksum64(bytes.data() + sizeof(header),
                                       header.entry_count * sizeof(format::CatalogEntry));
  std::memcpy(bytes.data(), &header, sizeof(header));
  std::vector<uint8_t> file = map.bytes;
  std::copy(bytes.begin(), bytes.end(), file.begin() + static_cast<long>(map.catalog));
  WriteFile(path, file);
}

// Found by the pool fuzzer: a catalog entry whose table id differs from the
// one its (intact) root carries. Verify reports it; repair returned OK but
// left it, so verify after the repair still found corruption. The root's id
// is the table's own: repair corrects the catalog entry and keeps every key.
TEST_F(CorruptionRegression, RepairTakesTheRootsTableIdOverTheCatalogs) {
  {
    auto db = DB::Open(temp_.path(), ExistingPool());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->DropTable("first").ok());
  }
  // The catalog now lists "second" (id 2) alone; it says id 1.
  EditCatalogEntry(temp_.path(), 0, [](format::CatalogEntry& entry) {
    ASSERT_STREQ(entry.name, "second");
    entry.table_id = 1;
  });
  ASSERT_FALSE(HasFatalFailure());
  auto before = recovery::VerifyPool(temp_.path(), nullptr);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_TRUE(before->HasCorruption());
  EXPECT_NE(before->findings[0].message.find("root belongs to table id 2, the catalog says 1"),
            std::string::npos)
      << before->findings[0].message;

  recovery::Report repaired;
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(temp_.path(), &repaired));
  EXPECT_EQ(repaired.tables_dropped, 0u);
  EXPECT_EQ(IntactKeys(temp_.path(), 2), 500);
}

// The same finding's other shape: an entry whose root is another listed
// table's. That entry is dropped; the table that owns the root keeps its keys.
TEST_F(CorruptionRegression, RepairDropsAnEntryPointingAtAnotherTablesRoot) {
  PoolMap map = ReadPoolMap(temp_.path());
  auto second = map.At<format::CatalogEntry>(map.catalog + sizeof(format::CatalogHeader) +
                                             sizeof(format::CatalogEntry));
  ASSERT_STREQ(second.name, "second");
  EditCatalogEntry(temp_.path(), 0,
                   [&](format::CatalogEntry& entry) { entry.root_offset = second.root_offset; });
  ASSERT_FALSE(HasFatalFailure());
  recovery::Report repaired;
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(temp_.path(), &repaired));
  EXPECT_EQ(repaired.tables_dropped, 1u);
  EXPECT_EQ(IntactKeys(temp_.path(), 2), 500);
}

}  // namespace
}  // namespace gpkv::corruption
