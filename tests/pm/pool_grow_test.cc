// Growing a closed pool: pm::Pool::Grow and DB::Open with
// Options::grow_if_smaller. The tables keep every pair, the heap gains the
// space, the superblock carries the size, a file shorter than the pool is
// refused, a longer one keeps the pool's size, and a grown pool verifies
// clean.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::pm {
namespace {

constexpr uint64_t kSmall = uint64_t{4} << 20;
constexpr uint64_t kLarge = uint64_t{8} << 20;

uint64_t FileSize(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<uint64_t>(st.st_size);
}

Options DbOptions(uint64_t pool_size) {
  Options options;
  options.create_if_missing = true;
  options.pool_size = pool_size;
  options.backend = Backend::kCpu;
  options.cpu_threads = 2;
  return options;
}

std::vector<uint64_t> Keys(uint64_t count, uint64_t salt) {
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < count; ++i) keys.push_back((i + salt) * 0x9e3779b97f4a7c15ULL + 1);
  return keys;
}

std::vector<uint64_t> ValuesOf(const std::vector<uint64_t>& keys) {
  std::vector<uint64_t> values;
  for (uint64_t key : keys) values.push_back(key ^ 0x5555);
  return values;
}

void ExpectPairs(DB& db, const std::string& table_name, const std::vector<uint64_t>& keys) {
  auto table = db.OpenTable(table_name);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> values(keys.size());
  std::vector<uint8_t> found(keys.size());
  ASSERT_TRUE((*table)->Get(keys, values, found).ok());
  const std::vector<uint64_t> expected = ValuesOf(keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(found[i]) << table_name << ": key " << keys[i] << " lost";
    ASSERT_EQ(values[i], expected[i]) << table_name << ": key " << keys[i];
  }
}

TEST(PoolGrow, GrowThenReopenKeepsEveryTablesPairs) {
  testutil::TempPool temp("grow-pairs");
  const std::vector<uint64_t> keys = Keys(2000, 0);
  {
    auto db = DB::Open(temp.path(), DbOptions(16 << 20));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions hash;
    hash.expected_keys = 4096;
    ASSERT_TRUE((*db)->CreateTable("hash", hash).ok());
    TableOptions ordered;
    ordered.kind = TableKind::kOrdered;
    ordered.ordered.batch_entries = 256;
    ASSERT_TRUE((*db)->CreateTable("ordered", ordered).ok());
    for (const char* name : {"hash", "ordered"}) {
      auto table = (*db)->OpenTable(name);
      ASSERT_TRUE(table.ok());
      ASSERT_TRUE((*table)->Put(keys, ValuesOf(keys)).ok());
    }
  }
  {
    Options options = DbOptions(32 << 20);
    options.grow_if_smaller = true;
    auto db = DB::Open(temp.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->Info()->pool_size, uint64_t{32} << 20);
    ExpectPairs(**db, "hash", keys);
    ExpectPairs(**db, "ordered", keys);
  }
  auto db = DB::Open(temp.path(), DbOptions(1 << 20));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto info = (*db)->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->pool_size, uint64_t{32} << 20);
  EXPECT_EQ(FileSize(temp.path()), uint64_t{32} << 20);
  ExpectPairs(**db, "hash", keys);
  ExpectPairs(**db, "ordered", keys);
}

TEST(PoolGrow, TheHeapGainsTheSpace) {
  testutil::TempPool temp("grow-heap");
  std::vector<uint64_t> extents;
  {
    auto pool = Pool::Create(temp.path(), kSmall, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    Result<uint64_t> extent = Status::OK();
    while ((extent = (*pool)->allocator().Allocate(64 << 10, format::kExtentKindOther, 0)).ok()) {
      extents.push_back(*extent);
    }
    ASSERT_TRUE(extent.status().IsPoolFull()) << extent.status().ToString();
    const uint64_t heap_before = (*pool)->allocator().heap_bytes();

    ASSERT_TRUE((*pool)->Grow(kLarge).ok());
    EXPECT_EQ((*pool)->size(), kLarge);
    EXPECT_EQ((*pool)->allocator().heap_bytes(), heap_before + (kLarge - kSmall));
    auto beyond = (*pool)->allocator().Allocate(64 << 10, format::kExtentKindOther, 0);
    ASSERT_TRUE(beyond.ok()) << beyond.status().ToString();
    // No 64 KiB were left below the old end: the extent reaches past it.
    EXPECT_GT(*beyond + (64 << 10), kSmall);
    // The new bytes are usable: write the last page of the pool.
    uint64_t* last = (*pool)->At<uint64_t>(kLarge - 8);
    (*pool)->Publish(last, 42);
    extents.push_back(*beyond);
  }
  // The extents past the old end are valid after a reopen.
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  EXPECT_EQ((*pool)->size(), kLarge);
  for (uint64_t offset : extents) EXPECT_TRUE((*pool)->allocator().IsAllocated(offset, 64 << 10));
}

TEST(PoolGrow, TheSuperblockCarriesTheSizeAndTheHeaderStays) {
  testutil::TempPool temp("grow-superblock");
  format::PoolHeader header_before;
  {
    auto pool = Pool::Create(temp.path(), kSmall, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    header_before = (*pool)->header();
    EXPECT_EQ((*pool)->superblock().pool_size, 0u);
    ASSERT_TRUE((*pool)->Grow(kLarge).ok());
    EXPECT_EQ((*pool)->superblock().generation, 2u);
  }
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  EXPECT_EQ((*pool)->superblock().pool_size, kLarge);
  EXPECT_EQ((*pool)->header().pool_size, kSmall);
  EXPECT_EQ(std::memcmp(&(*pool)->header(), &header_before, sizeof(header_before)), 0);
  EXPECT_EQ(FileSize(temp.path()), kLarge);
  // The size survives later superblock writes (they copy the current one).
  ASSERT_TRUE((*pool)->WriteSuperblock((*pool)->superblock()).ok());
  EXPECT_EQ((*pool)->superblock().pool_size, kLarge);
}

TEST(PoolGrow, AFileTruncatedBelowTheGrownSizeIsRefusedNamingThePool) {
  testutil::TempPool temp("grow-truncated");
  {
    auto pool = Pool::Create(temp.path(), kSmall, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    ASSERT_TRUE((*pool)->Grow(kLarge).ok());
  }
  ASSERT_EQ(::truncate(temp.path().c_str(), kLarge - (1 << 20)), 0);
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.status().IsCorruption()) << pool.status().ToString();
  const std::string message = pool.status().message();
  EXPECT_NE(message.find(temp.path()), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  EXPECT_NE(message.find("superblock"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(kLarge)), std::string::npos) << message;
}

// What a crash between extending the file and publishing the superblock
// leaves: a longer file, the old size. The tail is not part of the pool.
TEST(PoolGrow, ALongerFileKeepsThePoolsSizeUntilItGrows) {
  testutil::TempPool temp("grow-longer");
  ASSERT_TRUE(Pool::Create(temp.path(), kSmall, SyncMode::kBatch).ok());
  ASSERT_EQ(::truncate(temp.path().c_str(), kLarge), 0);
  {
    auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    EXPECT_EQ((*pool)->size(), kSmall);
    EXPECT_EQ((*pool)->allocator().heap_bytes(), kSmall - (*pool)->header().heap_offset);
    ASSERT_TRUE((*pool)->Grow(kSmall + (2 << 20)).ok());
    EXPECT_EQ((*pool)->size(), kSmall + (2 << 20));
  }
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  EXPECT_EQ((*pool)->size(), kSmall + (2 << 20));
  EXPECT_EQ(FileSize(temp.path()), kLarge);
}

TEST(PoolGrow, APoolNeverShrinks) {
  testutil::TempPool temp("grow-shrink");
  {
    auto pool = Pool::Create(temp.path(), kLarge, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    Status status = (*pool)->Grow(kSmall);
    EXPECT_TRUE(status.IsInvalidArgument()) << status.ToString();
    EXPECT_NE(status.message().find(temp.path()), std::string::npos) << status.ToString();
    EXPECT_TRUE((*pool)->Grow(kLarge).ok());
    EXPECT_EQ((*pool)->superblock().generation, 1u);  // its own size: nothing written
  }
  Options options = DbOptions(kSmall);
  options.grow_if_smaller = true;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ((*db)->Info()->pool_size, kLarge);
  ASSERT_TRUE((*db)->Close().ok());
  EXPECT_EQ(FileSize(temp.path()), kLarge);
}

TEST(PoolGrow, WithoutTheFlagAnOpenNeverGrows) {
  testutil::TempPool temp("grow-noflag");
  ASSERT_TRUE(DB::Open(temp.path(), DbOptions(kSmall)).ok());
  auto db = DB::Open(temp.path(), DbOptions(kLarge));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ((*db)->Info()->pool_size, kSmall);
  ASSERT_TRUE((*db)->Close().ok());
  EXPECT_EQ(FileSize(temp.path()), kSmall);
}

TEST(PoolGrow, AReadOnlyOpenThatWouldGrowIsInvalidArgument) {
  testutil::TempPool temp("grow-read-only");
  ASSERT_TRUE(DB::Open(temp.path(), DbOptions(kSmall)).ok());
  Options options = DbOptions(kLarge);
  options.grow_if_smaller = true;
  options.read_only = true;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.status().IsInvalidArgument()) << db.status().ToString();
  EXPECT_NE(db.status().message().find("read-only"), std::string::npos);
  EXPECT_EQ(FileSize(temp.path()), kSmall);
}

TEST(PoolGrow, AGrownPoolVerifiesClean) {
  testutil::TempPool temp("grow-verify");
  const std::vector<uint64_t> keys = Keys(500, 7);
  {
    auto db = DB::Open(temp.path(), DbOptions(kSmall));
    ASSERT_TRUE(db.ok());
    TableOptions hash;
    hash.expected_keys = 1024;
    ASSERT_TRUE((*db)->CreateTable("t", hash).ok());
    ASSERT_TRUE((*(*db)->OpenTable("t"))->Put(keys, ValuesOf(keys)).ok());
  }
  Options options = DbOptions(kLarge);
  options.grow_if_smaller = true;
  {
    auto db = DB::Open(temp.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    // A table made after the growth may sit past the old end.
    TableOptions hash;
    hash.expected_keys = 16384;
    ASSERT_TRUE((*db)->CreateTable("big", hash).ok());
    ASSERT_TRUE((*(*db)->OpenTable("big"))->Put(keys, ValuesOf(keys)).ok());
  }
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
  auto db = DB::Open(temp.path(), DbOptions(kSmall));
  ASSERT_TRUE(db.ok());
  ExpectPairs(**db, "t", keys);
  ExpectPairs(**db, "big", keys);
}

}  // namespace
}  // namespace gpkv::pm
