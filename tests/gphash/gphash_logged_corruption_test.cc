// Damaged bytes of a logged hash table give Corruption naming the table and
// an offset, never a crash: a log record (in the checkpoint's half, or in
// either half while a checkpoint is pending), the image, random damage to
// root, image and log. Verify reports each; repair cuts the log before a
// damaged record (the records before it stay) and drops a damaged image (the
// log's records stay), and the pool then verifies clean.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "corruption_check.h"
#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "recovery/verify.h"
#include "tables/gphash/logged/layout.h"
#include "tables/log/slots.h"
#include "test_util.h"

namespace gpkv {
namespace {

namespace logged = gphash::logged;

Options PoolOptions() { return testutil::DbOptions(uint64_t{16} << 20, 1); }

// Puts keys first .. first + count - 1, values key * 3.
Status PutRange(Table& table, uint64_t first, uint64_t count) {
  std::vector<uint64_t> keys, values;
  for (uint64_t key = first; key < first + count; ++key) {
    keys.push_back(key);
    values.push_back(key * 3);
  }
  return table.Put(keys, values);
}

// b = 16, M = 2: log halves of 4 KiB. Batches of 100 puts (1624-byte
// records): the third finds half 0 full, so the image holds keys 0..199 and
// half 1 two records, keys 200..299 and 300..309 (the close publishes the
// checkpoint if the fourth batch did not).
TableOptions TableShape() {
  TableOptions options;
  options.expected_keys = 512;
  options.hash_log.batch_entries = 16;
  options.hash_log.log_batches = 2;
  return options;
}

void BuildTable(const std::string& path) {
  auto db = DB::Open(path, PoolOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("h", TableShape());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  for (uint64_t first : {0, 100, 200, 300}) {
    ASSERT_TRUE(PutRange(**table, first, first == 300 ? 10 : 100).ok());
  }
}

// The same table caught with its first checkpoint pending: a process puts
// keys 0..99 and 100..199 (half 0) and 200..299 (the checkpoint starts,
// half 1) and ends without closing. The active checkpoint is the empty one.
void BuildPendingTable(const std::string& path) {
  {
    auto db = DB::Open(path, PoolOptions());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->CreateTable("h", TableShape()).ok());
  }
  const pid_t child = fork();
  if (child == 0) {
    auto db = DB::Open(path, PoolOptions());
    if (!db.ok()) _exit(10);
    auto table = (*db)->OpenTable("h");
    if (!table.ok()) _exit(11);
    for (uint64_t first : {0, 100, 200}) {
      if (!PutRange(**table, first, 100).ok()) _exit(12);
    }
    _exit(0);  // no close: the checkpoint stays pending
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
}

// The root of the pool's one table, from the current superblock's catalog.
logged::LoggedRoot ReadRoot(const std::string& path, uint64_t* root_offset) {
  auto a = testutil::ReadBytes<format::Superblock>(path, format::kSuperblockOffset[0]);
  auto b = testutil::ReadBytes<format::Superblock>(path, format::kSuperblockOffset[1]);
  const format::Superblock& current = a.generation > b.generation ? a : b;
  auto entry = testutil::ReadBytes<format::CatalogEntry>(
      path, current.catalog_offset + sizeof(format::CatalogHeader));
  *root_offset = entry.root_offset;
  return testutil::ReadBytes<logged::LoggedRoot>(path, entry.root_offset);
}

const logged::Checkpoint& Active(const logged::LoggedRoot& root) {
  return root.checkpoints[log::ActiveIndex(root.active_checkpoint)];
}

std::set<uint64_t> Keys(const std::string& path) {
  auto db = DB::Open(path, PoolOptions());
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("h");
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  std::set<uint64_t> keys;
  EXPECT_TRUE((*table)
                  ->Scan([&](const uint8_t* key, const uint8_t* value) {
                    uint64_t id, v;
                    std::memcpy(&id, key, 8);
                    std::memcpy(&v, value, 8);
                    EXPECT_EQ(v, id * 3);
                    keys.insert(id);
                    return true;
                  })
                  .ok());
  return keys;
}

std::set<uint64_t> Range(uint64_t first, uint64_t last) {
  std::set<uint64_t> keys;
  for (uint64_t key = first; key < last; ++key) keys.insert(key);
  return keys;
}

// Opening the table is Corruption naming the table and offset `at`; verify
// reports it; repair leaves a pool that verifies clean.
void ExpectCorruptionAtThenRepair(const std::string& path, uint64_t at) {
  {
    auto db = DB::Open(path, PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_NO_FATAL_FAILURE(
        testutil::ExpectTableCorruptionAt((*db)->OpenTable("h").status(), "h", at));
  }
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectVerifyFindsCorruption(path));
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(path));
}

// Damages the log record at `record` (a word of its entries): opening is
// Corruption naming it, repair cuts the log there, and the table then holds
// `keys`.
void DamageRecordThenRepair(const std::string& path, uint64_t record,
                            const std::set<uint64_t>& keys) {
  testutil::FlipByte(path, record + 24 + 8);
  ExpectCorruptionAtThenRepair(path, record);
  EXPECT_EQ(Keys(path), keys);
}

TEST(GphashLoggedCorruption, ADamagedLogRecordIsCorruptionAndRepairCutsTheLog) {
  testutil::TempPool pool("gphash-logged-record");
  BuildTable(pool.path());
  uint64_t root_offset = 0;
  const logged::LoggedRoot root = ReadRoot(pool.path(), &root_offset);
  ASSERT_EQ(Active(root).image_entries, 200u);
  ASSERT_EQ(Active(root).log_half, 1u);
  DamageRecordThenRepair(pool.path(), root.log_offset + root.log_capacity + 24 + 100 * 16,
                         Range(0, 300));
}

TEST(GphashLoggedCorruption, ADamagedRecordOfTheFirstHalfOfAPendingCheckpointCutsBothHalves) {
  testutil::TempPool pool("gphash-logged-pending-first");
  BuildPendingTable(pool.path());
  uint64_t root_offset = 0;
  const logged::LoggedRoot root = ReadRoot(pool.path(), &root_offset);
  ASSERT_EQ(Active(root).image_offset, 0u);
  ASSERT_EQ(Active(root).log_half, 0u);
  // Half 0's first record stays; its second and half 1's record go.
  DamageRecordThenRepair(pool.path(), root.log_offset + 24 + 100 * 16, Range(0, 100));
}

TEST(GphashLoggedCorruption, ADamagedRecordOfTheSecondHalfOfAPendingCheckpointCutsThatHalf) {
  testutil::TempPool pool("gphash-logged-pending-second");
  BuildPendingTable(pool.path());
  uint64_t root_offset = 0;
  const logged::LoggedRoot root = ReadRoot(pool.path(), &root_offset);
  DamageRecordThenRepair(pool.path(), root.log_offset + root.log_capacity, Range(0, 200));
}

TEST(GphashLoggedCorruption, ADamagedImageIsCorruptionAndRepairDropsIt) {
  testutil::TempPool pool("gphash-logged-image");
  BuildTable(pool.path());
  uint64_t root_offset = 0;
  const logged::LoggedRoot root = ReadRoot(pool.path(), &root_offset);
  const uint64_t image = Active(root).image_offset;
  ASSERT_NE(image, 0u);
  testutil::FlipByte(pool.path(), image + logged::kImageHeaderSize + 8);
  ExpectCorruptionAtThenRepair(pool.path(), image + logged::kImageHeaderSize);
  EXPECT_EQ(Keys(pool.path()), Range(200, 310));
}

TEST(GphashLoggedCorruption, APoolWithARootOfTheOneHalfLogFormatIsRefusedByName) {
  testutil::TempPool pool("gphash-logged-one-half");
  BuildTable(pool.path());
  uint64_t root_offset = 0;
  ReadRoot(pool.path(), &root_offset);
  testutil::WriteBytes(pool.path(), root_offset, logged::kOneHalfRootMagic);
  // The pool is refused as a whole (its extents cannot be named), before
  // anything is written.
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(db.status().IsUnsupported()) << db.status().ToString();
  EXPECT_NE(db.status().message().find("one-half log format"), std::string::npos)
      << db.status().ToString();
  EXPECT_NE(db.status().message().find("GPKVHLGR"), std::string::npos) << db.status().ToString();
  EXPECT_NE(db.status().message().find("table 'h'"), std::string::npos) << db.status().ToString();
}

TEST(GphashLoggedCorruption, RandomDamageNeverCrashes) {
  testutil::TempPool pool("gphash-logged-random");
  testutil::TempPool base("gphash-logged-random-base");
  BuildTable(base.path());
  uint64_t root_offset = 0;
  const logged::LoggedRoot root = ReadRoot(base.path(), &root_offset);
  const uint64_t regions[][2] = {{root_offset, 512},
                                 {root.log_offset + root.log_capacity, 24 + 110 * 16 + 24},
                                 {Active(root).image_offset, 64 + 200 * 16}};
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 24; ++trial) {
    std::filesystem::copy_file(base.path(), pool.path(),
                               std::filesystem::copy_options::overwrite_existing);
    const auto& region = regions[trial % 3];
    for (int flip = 0; flip < 3; ++flip) {
      testutil::FlipByte(pool.path(), region[0] + random() % region[1],
                         static_cast<uint8_t>(1 + random() % 255));
    }
    auto db = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->OpenTable("h");
    if (!table.ok()) {
      EXPECT_TRUE(table.status().IsCorruption()) << table.status().ToString();
    }
    db->reset();
    auto verified = recovery::VerifyPool(pool.path(), nullptr);
    EXPECT_TRUE(verified.ok());
  }
}

}  // namespace
}  // namespace gpkv
