// Damaged LSM bytes give Corruption naming the table and an offset, never a
// crash: a run's data, a run's header, the active manifest, the root and a
// log record; verify reports each and repair drops what is damaged (a
// run's filter, damaged, is rebuilt from the run's keys). The
// damage stays with the table: the pool opens, the table's OpenTable says.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "corruption_check.h"
#include "format/checksum.h"
#include "format/pool_layout.h"
#include "lsm_test_util.h"
#include "recovery/verify.h"
#include "tables/log/slots.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"

namespace gpkv {
namespace {

using lsmtest::OrderedOptions;
using lsmtest::PoolOptions;

// A table with two runs and records in its log.
void BuildTable(const std::string& path) {
  auto db = DB::Open(path, PoolOptions(uint64_t{16} << 20, 1));
  EXPECT_TRUE(db.ok());
  auto table = (*db)->CreateTable("o", OrderedOptions(16));
  EXPECT_TRUE(table.ok());
  for (uint64_t batch = 0; batch < 3; ++batch) {
    std::vector<uint64_t> keys, values;
    for (uint64_t i = 0; i < (batch == 2 ? 4 : 16); ++i) {
      keys.push_back(batch * 100 + i);
      values.push_back(i);
    }
    EXPECT_TRUE((*table)->Put(keys, values).ok());
  }
}

using lsmtest::Active;
using lsmtest::ReadRoot;
using lsmtest::RootOffset;

// What opening table 'o' of the pool at path gives. The pool itself must
// open: damage to a table stays with it.
Status OpenTableStatus(const std::string& path) {
  auto db = DB::Open(path, PoolOptions(uint64_t{16} << 20, 1));
  if (!db.ok()) {
    ADD_FAILURE() << "DB::Open: " << db.status().ToString();
    return db.status();
  }
  return (*db)->OpenTable("o").status();
}

// Opening the table fails with Corruption naming the table and the offset
// `at`; verify reports it; repair then leaves a pool that opens and verifies
// clean.
void ExpectCorruptionAt(const std::string& path, uint64_t at, bool table_survives_repair) {
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectTableCorruptionAt(OpenTableStatus(path), "o", at));
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectVerifyFindsCorruption(path));
  ASSERT_NO_FATAL_FAILURE(testutil::ExpectRepairLeavesNoCorruption(path));
  auto reopened = DB::Open(path, PoolOptions(uint64_t{16} << 20, 1));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->OpenTable("o").ok(), table_survives_repair);
}

TEST(LsmCorruption, AFlippedRunByteIsCorruptionAtTheRunAndRepairDropsTheRun) {
  testutil::TempPool temp("lsm-run-data");
  BuildTable(temp.path());
  const lsm::Manifest manifest = Active(ReadRoot(temp.path()));
  const uint64_t run = manifest.levels[1].offset;
  ASSERT_NE(run, 0u);
  testutil::FlipByte(temp.path(), run + lsm::kRunHeaderSize + 8, 0x10);
  ExpectCorruptionAt(temp.path(), run + lsm::kRunHeaderSize, /*table_survives_repair=*/true);
}

// Every key BuildTable wrote is found, with its value.
void ExpectEveryKeyFound(const std::string& path) {
  auto db = DB::Open(path, PoolOptions(uint64_t{16} << 20, 1));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("o");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> keys, expected;
  for (uint64_t batch = 0; batch < 3; ++batch) {
    for (uint64_t i = 0; i < (batch == 2 ? 4 : 16); ++i) {
      keys.push_back(batch * 100 + i);
      expected.push_back(i);
    }
  }
  std::vector<uint64_t> values(keys.size());
  std::vector<uint8_t> found(keys.size());
  ASSERT_TRUE((*table)->Get(keys, values, found).ok());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(found[i], 1) << "key " << keys[i];
    EXPECT_EQ(values[i], expected[i]) << "key " << keys[i];
  }
}

// The offset of the filter of the run of `level` of the pool's one table.
uint64_t FilterOffset(const std::string& path, uint32_t level) {
  const lsm::RunRef run = Active(ReadRoot(path)).levels[level];
  EXPECT_NE(run.offset, 0u);
  return run.offset + lsm::RunFilterOffset(run.entries, 8, 8);
}

TEST(LsmCorruption, AFlippedFilterBitIsCorruptionAtTheFilterAndRepairRebuildsIt) {
  testutil::TempPool temp("lsm-run-filter");
  BuildTable(temp.path());
  const lsm::RunRef run = Active(ReadRoot(temp.path())).levels[1];
  const uint64_t filter = FilterOffset(temp.path(), 1);
  testutil::FlipByte(temp.path(), filter + 5, 0x20);
  // The open checks the filter's checksum, stored after its words.
  ExpectCorruptionAt(temp.path(), filter + lsm::RunFilterWords(run.entries) * 8,
                     /*table_survives_repair=*/true);
  ExpectEveryKeyFound(temp.path());
}

// A filter emptied with its checksum made to match passes the open's checks
// but would hide the run's keys from gets: verify finds that a key of the
// run is missing from it (naming the filter block), repair rebuilds it.
TEST(LsmCorruption, AFilterThatMissesAKeyOfItsRunIsFoundByVerifyAndRebuiltByRepair) {
  testutil::TempPool temp("lsm-run-filter-keys");
  BuildTable(temp.path());
  const lsm::LsmRoot root = ReadRoot(temp.path());
  const lsm::RunRef run = Active(root).levels[1];
  const uint64_t filter = FilterOffset(temp.path(), 1);
  const uint64_t words = lsm::RunFilterWords(run.entries);
  const std::vector<uint64_t> zeros(words, 0);
  for (uint64_t word = 0; word < zeros.size(); ++word) {
    testutil::WriteBytes<uint64_t>(temp.path(), filter + word * 8, 0);
  }
  testutil::WriteBytes<uint64_t>(temp.path(), filter + words * 8,
                                 lsm::RunFilterChecksum(root.table_id, zeros.data(), words));
  ASSERT_TRUE(OpenTableStatus(temp.path()).ok());
  auto verified = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(verified.ok());
  ASSERT_TRUE(verified->HasCorruption());
  const recovery::Finding& finding = verified->findings[0];
  EXPECT_NE(finding.message.find("table 'o'"), std::string::npos) << finding.message;
  EXPECT_NE(finding.message.find("filter misses the key"), std::string::npos) << finding.message;
  EXPECT_GE(finding.offset, filter);
  EXPECT_LT(finding.offset, filter + words * 8);
  auto repaired = recovery::RepairPool(temp.path(), nullptr);
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  auto after = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->findings.empty()) << after->findings[0].message;
  ExpectEveryKeyFound(temp.path());
}

TEST(LsmCorruption, ARunHeaderWithAHugeEntryCountIsCorruption) {
  testutil::TempPool temp("lsm-run-header");
  BuildTable(temp.path());
  const lsm::Manifest manifest = Active(ReadRoot(temp.path()));
  const uint64_t run = manifest.levels[1].offset;
  testutil::WriteBytes<uint64_t>(temp.path(), run + 16, uint64_t{1} << 60);
  ExpectCorruptionAt(temp.path(), run + offsetof(lsm::RunHeader, checksum),
                     /*table_survives_repair=*/true);
}

TEST(LsmCorruption, ADamagedManifestIsCorruptionAtTheManifest) {
  testutil::TempPool temp("lsm-manifest");
  BuildTable(temp.path());
  const uint64_t root = RootOffset(temp.path());
  const lsm::LsmRoot copy = ReadRoot(temp.path());
  const uint32_t index = log::ActiveIndex(copy.active_manifest);
  const uint64_t manifest =
      root + offsetof(lsm::LsmRoot, manifests) + index * sizeof(lsm::Manifest);
  // A run offset far outside the pool.
  testutil::WriteBytes<uint64_t>(temp.path(), manifest + offsetof(lsm::Manifest, levels) + 16,
                                 uint64_t{1} << 50);
  ExpectCorruptionAt(temp.path(), manifest + offsetof(lsm::Manifest, checksum),
                     /*table_survives_repair=*/false);
}

TEST(LsmCorruption, AManifestRunOutsideThePoolWithAValidChecksumIsCorruption) {
  testutil::TempPool temp("lsm-manifest-range");
  BuildTable(temp.path());
  const uint64_t root = RootOffset(temp.path());
  lsm::LsmRoot copy = ReadRoot(temp.path());
  const uint32_t index = log::ActiveIndex(copy.active_manifest);
  lsm::Manifest& manifest = copy.manifests[index];
  manifest.levels[1].offset = uint64_t{1} << 50;
  manifest.checksum = format::Checksum64(&manifest, offsetof(lsm::Manifest, checksum));
  const uint64_t at = root + offsetof(lsm::LsmRoot, manifests) + index * sizeof(lsm::Manifest);
  testutil::WriteBytes(temp.path(), at, manifest);
  ExpectCorruptionAt(temp.path(), at + offsetof(lsm::Manifest, levels) + sizeof(lsm::RunRef),
                     /*table_survives_repair=*/false);
}

TEST(LsmCorruption, ADamagedLogRecordIsCorruptionAndRepairCutsTheLog) {
  testutil::TempPool temp("lsm-log");
  BuildTable(temp.path());
  const lsm::LsmRoot copy = ReadRoot(temp.path());
  ASSERT_GT(log::WordBytes(copy.log_word), 0u);
  testutil::FlipByte(temp.path(), copy.log_offset + log::kRecordHeaderSize + 3, 0x01);
  ExpectCorruptionAt(temp.path(), copy.log_offset, /*table_survives_repair=*/true);
}

TEST(LsmCorruption, LogBatchesOutOfRangeIsCorruptionAtTheRoot) {
  testutil::TempPool temp("lsm-log-batches");
  BuildTable(temp.path());
  lsm::LsmRoot root = ReadRoot(temp.path());
  root.log_batches = lsm::kMaxLogBatches + 1;
  root.checksum = format::Checksum64(&root, offsetof(lsm::LsmRoot, checksum));
  testutil::WriteBytes(temp.path(), RootOffset(temp.path()), root);
  testutil::ExpectCorruptionAtOffset(OpenTableStatus(temp.path()), RootOffset(temp.path()) + 28);
}

// The root's flags and the manifest's log half are checked: an unknown flag
// and a half that the log does not have are Corruption at their fields.
TEST(LsmCorruption, UnknownRootFlagsAndAMissingLogHalfAreCorruption) {
  for (int field = 0; field < 2; ++field) {
    testutil::TempPool temp("lsm-root-flags");
    BuildTable(temp.path());  // M = 1: a log of one half
    const uint64_t root_offset = RootOffset(temp.path());
    lsm::LsmRoot root = ReadRoot(temp.path());
    uint64_t at = root_offset + offsetof(lsm::LsmRoot, flags);
    if (field == 0) {
      root.flags = 2;
      root.checksum = format::Checksum64(&root, offsetof(lsm::LsmRoot, checksum));
    } else {
      const uint32_t index = log::ActiveIndex(root.active_manifest);
      lsm::Manifest& manifest = root.manifests[index];
      manifest.log_half = 1;
      manifest.checksum = format::Checksum64(&manifest, offsetof(lsm::Manifest, checksum));
      at = root_offset + offsetof(lsm::LsmRoot, manifests) + index * sizeof(lsm::Manifest) +
           offsetof(lsm::Manifest, log_half);
    }
    testutil::WriteBytes(temp.path(), root_offset, root);
    ASSERT_NO_FATAL_FAILURE(testutil::ExpectCorruptionAtOffset(OpenTableStatus(temp.path()), at));
  }
}

// A crash while a checkpoint is in flight leaves records in both log halves
// (M = 4: a pool file copied after the batch that started it). A damaged
// record in the second half is Corruption at that record; repair cuts that
// half before it, and the reopen completes the checkpoint with the first
// half's records.
TEST(LsmCorruption, ADamagedRecordInTheSecondLogHalfIsCorruptionAndRepairCutsThatHalf) {
  testutil::TempPool temp("lsm-two-halves"), crashed("lsm-two-halves-crashed");
  {
    auto db = DB::Open(temp.path(), PoolOptions(uint64_t{16} << 20, 1));
    ASSERT_TRUE(db.ok());
    TableOptions options = OrderedOptions(16);
    options.ordered.log_batches = 4;
    Table* table = *(*db)->CreateTable("o", options);
    for (uint64_t batch = 0; batch < 5; ++batch) {
      std::vector<uint64_t> keys, values;
      for (uint64_t i = 0; i < 16; ++i) {
        keys.push_back(batch * 100 + i);
        values.push_back(i);
      }
      ASSERT_TRUE(table->Put(keys, values).ok());
    }
    std::filesystem::copy_file(temp.path(), crashed.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }
  const lsm::LsmRoot root = ReadRoot(crashed.path());
  ASSERT_EQ(lsm::LogHalves(root.flags), 2u);
  ASSERT_EQ(Active(root).log_half, 0u);
  ASSERT_EQ(log::WordEpoch(root.second_log_word), Active(root).log_epoch + 1);
  const uint64_t half1 = root.log_offset + root.log_capacity / 2;
  // The second record of half 1 (the first holds 16 keys and values).
  const uint64_t second = half1 + log::ColumnarRecordBytes(16, 8, 8, false);
  testutil::FlipByte(crashed.path(), second + log::kRecordHeaderSize + 5, 0x04);
  ExpectCorruptionAt(crashed.path(), second, /*table_survives_repair=*/true);
  auto db = DB::Open(crashed.path(), PoolOptions(uint64_t{16} << 20, 1));
  ASSERT_TRUE(db.ok());
  Table* table = *(*db)->OpenTable("o");
  EXPECT_EQ(table->Stats()->keys, 64u);                      // batches 0..3; batch 4's record cut
  EXPECT_EQ(Active(ReadRoot(crashed.path())).log_half, 1u);  // the checkpoint completed
}

// Pools written before columnar records keep their row records (flags 0,
// WordsChecksum): the log's one record rewritten in that form is replayed.
TEST(LsmCorruption, ARowRecordOfAnOlderPoolIsReplayed) {
  testutil::TempPool temp("lsm-row-record");
  BuildTable(temp.path());  // the log holds one record: keys 200..203, values 0..3
  lsmtest::RewriteLogAsRowRecord(temp.path());
  ASSERT_EQ(
      testutil::ReadBytes<log::RecordHeader>(temp.path(), ReadRoot(temp.path()).log_offset).flags,
      0u);
  auto verified = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(verified.ok());
  EXPECT_FALSE(verified->HasCorruption()) << verified->findings[0].message;
  auto db = DB::Open(temp.path(), PoolOptions(uint64_t{16} << 20, 1));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Table* table = *(*db)->OpenTable("o");
  std::vector<uint64_t> keys = {200, 201, 202, 203, 3}, values(5);
  std::vector<uint8_t> found(5);
  ASSERT_TRUE(table->Get(keys, values, found).ok());
  EXPECT_EQ(values, (std::vector<uint64_t>{0, 1, 2, 3, 3}));
  EXPECT_EQ(found, (std::vector<uint8_t>{1, 1, 1, 1, 1}));
}

TEST(LsmCorruption, RandomDamageToRootManifestAndRunsNeverCrashes) {
  testutil::TempPool temp("lsm-random");
  BuildTable(temp.path());
  const uint64_t root = RootOffset(temp.path());
  const lsm::LsmRoot copy = ReadRoot(temp.path());
  std::vector<uint64_t> regions = {root, root + 64, root + 128, copy.log_offset};
  for (const lsm::RunRef& run : Active(copy).levels) {
    if (run.offset != 0) regions.push_back(run.offset);
  }
  std::vector<uint8_t> pristine(16 << 20);
  {
    FILE* file = std::fopen(temp.path().c_str(), "rb");
    ASSERT_EQ(std::fread(pristine.data(), 1, pristine.size(), file), pristine.size());
    std::fclose(file);
  }
  uint64_t state = 7;
  for (int trial = 0; trial < 200; ++trial) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t at = regions[(state >> 33) % regions.size()] + ((state >> 13) % 512);
    testutil::WriteBytes<uint64_t>(temp.path(), at, state);
    auto db = DB::Open(temp.path(), PoolOptions(uint64_t{16} << 20, 1));
    if (db.ok()) {
      auto table = (*db)->OpenTable("o");
      if (!table.ok()) EXPECT_TRUE(table.status().IsCorruption()) << table.status().ToString();
      if (table.ok()) {
        std::vector<uint64_t> keys = {0, 100, 5}, lo = {0}, hi = {~uint64_t{0}}, counts(1);
        std::vector<uint64_t> values(3);
        std::vector<uint8_t> found(3);
        EXPECT_TRUE((*table)->Get(keys, values, found).ok());
        EXPECT_TRUE((*table)->Count(lo, hi, counts).ok());
      }
    } else {
      EXPECT_TRUE(db.status().IsCorruption()) << db.status().ToString();
    }
    db = Status::OK();
    auto verified = recovery::VerifyPool(temp.path(), nullptr);
    EXPECT_TRUE(verified.ok() || verified.status().IsCorruption());
    FILE* file = std::fopen(temp.path().c_str(), "r+b");
    ASSERT_EQ(std::fwrite(pristine.data(), 1, pristine.size(), file), pristine.size());
    std::fclose(file);
  }
}

}  // namespace
}  // namespace gpkv
