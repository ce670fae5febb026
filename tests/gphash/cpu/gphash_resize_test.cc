// Resizes of gphash::cpu::CpuBackend: a resize interrupted at any point after its LevelSet
// (with kLevelSetResizing) is published is finished by the next open, a
// resize whose bottom level cannot be emptied keeps it as one more level, and
// a pool too small for the next level yields PoolFull with acknowledged data
// intact and every operation of the failing batch applied or absent.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "gphash/cpu/gphash_test_util.h"
#include "gphash/full_level_set.h"
#include "gphash/full_top_level.h"
#include "pm/persist_hook.h"
#include "tables/gphash/check.h"
#include "tables/gphash/slot_scan.h"

namespace gpkv::gphash_test {
namespace {

std::vector<uint64_t> Range(uint64_t begin, uint64_t end) {
  std::vector<uint64_t> ids;
  for (uint64_t id = begin; id < end; ++id) ids.push_back(id);
  return ids;
}

std::string FileBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// Persist hook of the child: arms when the active LevelSet word is published
// with a resizing LevelSet, then ends the process `after` persist points later
// (0: at that publish itself).
struct ResizeCrash {
  const gphash::GphashRoot* root;
  uint64_t after;
  bool armed;
  uint64_t seen;
};

void CrashDuringResize(void* context, const void* address, size_t, uint64_t) {
  auto* crash = static_cast<ResizeCrash*>(context);
  if (!crash->armed) {
    if (address != &crash->root->active_levelset) return;
    uint64_t word = crash->root->active_levelset;
    if ((crash->root->levelsets[word & 1].flags & gphash::kLevelSetResizing) == 0) return;
    crash->armed = true;
  }
  if (crash->seen++ == crash->after) _exit(pm::kCrashExitCode);
}

// Runs a put batch of `ids` (version 2) in a child that crashes `after` points
// into the resize it triggers. Returns the child's exit code.
int PutInChildCrashingInResize(TestTable& t, const std::vector<uint64_t>& ids, uint64_t after) {
  std::vector<uint8_t> keys = t.Keys(ids);
  std::vector<uint8_t> values = t.Values(ids, std::vector<uint64_t>(ids.size(), 2));
  t.Close();
  pid_t child = fork();
  if (child == 0) {
    auto pool = pm::Pool::Open(t.path(), false, SyncMode::kBatch);
    if (!pool.ok()) _exit(2);
    auto table = gphash::cpu::CpuBackend::Open(**pool, "t", t.root(), /*threads=*/1, nullptr);
    if (!table.ok()) _exit(3);
    ResizeCrash crash{(*pool)->At<gphash::GphashRoot>(t.root()), after, false, 0};
    pm::TEST_SetPersistHook(&CrashDuringResize, &crash);
    bool ok = (*table)->Put(keys.data(), values.data(), ids.size()).ok();
    pm::TEST_SetPersistHook(nullptr, nullptr);
    _exit(ok ? 0 : 4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class GphashResize : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GphashResize, InterruptedResizeIsFinishedAtOpen) {
  const uint32_t value_size = GetParam();
  TableOptions options = Options(8, value_size);
  options.hash.initial_top_buckets = 16;  // 16 + 8 buckets of 8 slots
  TestTable t("resize-" + std::to_string(value_size), options, uint64_t{16} << 20, 1);
  const std::vector<uint64_t> before = Range(0, 150);
  ASSERT_TRUE(t.Put(before, 1).ok());
  ASSERT_EQ(t.table().Stats().resizes, 0u);
  t.Close();
  const std::vector<uint64_t> batch = Range(1000, 1300);
  testutil::TempPool start("resize-start");
  ASSERT_EQ(std::system(("cp " + t.path() + " " + start.path()).c_str()), 0);

  std::vector<uint64_t> every_id = before;
  every_id.insert(every_id.end(), batch.begin(), batch.end());
  const std::vector<uint8_t> every_key = t.Keys(every_id);
  uint64_t crashed_while_resizing = 0;
  for (uint64_t after = 0;; after = after < 8 ? after + 1 : after * 2) {
    ASSERT_EQ(std::system(("cp " + start.path() + " " + t.path()).c_str()), 0);
    int code = PutInChildCrashingInResize(t, batch, after);
    ASSERT_TRUE(code == 0 || code == pm::kCrashExitCode) << "child exit " << code;

    const std::string crashed_bytes = FileBytes(t.path());
    Answers read_only_answers;
    {  // verify (read-only) sees a recoverable state, never corruption
      auto pool = pm::Pool::Open(t.path(), /*read_only=*/true, SyncMode::kBatch);
      ASSERT_TRUE(pool.ok());
      recovery::Report verify;
      ASSERT_TRUE(gphash::VerifyGphash(**pool, "t", 7, t.root(), verify, nullptr).ok());
      EXPECT_FALSE(verify.HasCorruption()) << "after " << after;
      ASSERT_EQ(verify.tables.size(), 1u);
      if (verify.tables[0].resizing) ++crashed_while_resizing;
      // A read-only open does not finish the resize but answers as if it had.
      auto read_only = gphash::cpu::CpuBackend::Open(**pool, "t", t.root(), 1, nullptr);
      ASSERT_TRUE(read_only.ok()) << read_only.status().ToString();
      EXPECT_EQ((*read_only)->Stats().resizing, verify.tables[0].resizing);
      read_only_answers = AnswersOf(**read_only, every_key);
    }
    EXPECT_TRUE(FileBytes(t.path()) == crashed_bytes) << "after " << after;
    recovery::Report report;
    t.Reopen(&report);
    EXPECT_TRUE(AnswersOf(t.table(), every_key) == read_only_answers) << "after " << after;
    gphash::Stats stats = t.table().Stats();
    EXPECT_FALSE(stats.resizing);
    EXPECT_EQ(stats.levels, 2u);
    EXPECT_GE(stats.top_buckets, 32u);
    for (uint64_t id : before) ASSERT_TRUE(t.Holds(id, 1)) << id << " after " << after;
    uint64_t applied = 0;
    for (uint64_t id : batch) {
      bool present = t.Holds(id, 2);
      ASSERT_TRUE(present || !t.Get({id})[0].has_value());
      applied += present;
    }
    if (code == 0) EXPECT_EQ(applied, batch.size());
    gphash::SlotScanResult scan = gphash::VerifyGphashSlots(t.pool(), t.View(), 1, nullptr);
    EXPECT_EQ(scan.corrupt + scan.reserved + scan.duplicates, 0u);
    EXPECT_EQ(scan.keys, before.size() + applied);
    EXPECT_EQ(stats.keys, scan.keys);
    // The table works on: the rest of the batch goes in.
    ASSERT_TRUE(t.Put(batch, 2).ok());
    for (uint64_t id : batch) ASSERT_TRUE(t.Holds(id, 2));
    t.Close();
    if (code == 0) break;
  }
  EXPECT_GT(crashed_while_resizing, 5u);
}

INSTANTIATE_TEST_SUITE_P(ValueSizes, GphashResize, ::testing::Values(8u, 40u));

// Regression (CI: ConcurrentHistory.HotKeysUnderHeavyContentionKeepTheirHistory
// lost keys): a put batch that erased a racing insert's losing copy in the
// bottom level, then resized for a deferred insert, reclaimed that slot after
// the resize had freed the bottom level, storing an EMPTY word into the freed
// extent (and, once the extent was reused by a new level, over a live slot).
// The batch must hand its tombstones to the limbo before the resize drains it.
TEST(GphashResizeReclaim, TombstoneOfABatchIsReclaimedBeforeItsLevelIsFreed) {
  TestTable t("resize-tombstone", Options(8, 8, 2, 2, 8, /*expected_keys=*/64), uint64_t{64} << 20,
              /*threads=*/1);
  const uint64_t hot = 1;
  ASSERT_TRUE(t.Put({hot}, 1).ok());
  std::vector<uint8_t> key = t.Keys({hot});
  gphash::GphashView view = t.View();
  std::vector<SlotAt> copies = FindKey(t.pool(), view, key.data());
  ASSERT_EQ(copies.size(), 1u);
  const uint32_t bottom = static_cast<uint32_t>(view.levels.size() - 1);
  ASSERT_LT(copies[0].level, bottom) << "the first copy should sit above the bottom level";

  // A racing insert's leftover: a second, losing copy in the bottom level.
  std::optional<SlotAt> loser =
      FreeCandidate(t.pool(), view, key.data(), static_cast<int>(bottom), bottom, ~0ULL);
  ASSERT_TRUE(loser.has_value());
  std::memcpy(t.pool().At<uint8_t>(loser->key_offset), key.data(), 8);
  std::memcpy(t.pool().At<uint8_t>(loser->value_offset),
              t.pool().At<uint8_t>(copies[0].value_offset), 8);
  const format::KeyHash hash = format::HashKey(key.data(), 8, view.geo.hash_seed);
  *t.pool().At<uint64_t>(loser->word_offset) =
      gphash::PublishWord(gphash::ReserveWord(0), gphash::FingerprintOfHash(hash));
  ASSERT_EQ(FindKey(t.pool(), view, key.data()).size(), 2u);

  // One batch: the update of `hot` first (it erases the loser), then enough
  // new keys to defer some and resize, which frees the old bottom level.
  std::vector<uint64_t> ids = {hot};
  for (uint64_t id = 1000; id < 3000; ++id) ids.push_back(id);
  ASSERT_TRUE(t.Put(ids, 2).ok());
  ASSERT_GT(t.table().Stats().resizes, 0u);
  EXPECT_EQ(t.table().TEST_StrayReclaims(), 0u);
  for (uint64_t id : ids) ASSERT_TRUE(t.Holds(id, 2)) << id;
  t.Reopen();
  for (uint64_t id : ids) ASSERT_TRUE(t.Holds(id, 2)) << id;
  EXPECT_EQ(t.table().Stats().keys, ids.size());
}

TEST(GphashResizeLimits, PoolFullKeepsAcknowledgedDataAndEachOperationAppliedOrAbsent) {
  for (uint32_t value_size : {8u, 100u}) {
    TableOptions options = Options(8, value_size);
    options.hash.initial_top_buckets = 16;
    TestTable t("resize-full-" + std::to_string(value_size), options, uint64_t{4} << 20, 2);
    std::vector<uint64_t> acknowledged;
    Status status;
    uint64_t next = 0;
    while (status.ok()) {
      std::vector<uint64_t> ids = Range(next, next + 1000);
      next += 1000;
      status = t.Put(ids, 1);
      if (status.ok()) acknowledged.insert(acknowledged.end(), ids.begin(), ids.end());
    }
    ASSERT_TRUE(status.IsPoolFull()) << status.ToString();
    EXPECT_NE(status.message().find(t.path()), std::string::npos) << status.message();
    ASSERT_FALSE(acknowledged.empty());
    for (uint64_t id : acknowledged) ASSERT_TRUE(t.Holds(id, 1)) << id;
    uint64_t partial = 0;
    for (uint64_t id = next - 1000; id < next; ++id) {
      bool present = t.Holds(id, 1);
      ASSERT_TRUE(present || !t.Get({id})[0].has_value());
      partial += present;
    }
    EXPECT_EQ(t.table().Stats().keys, acknowledged.size() + partial);
    // Erases still work and free room: then updates (which need a fresh value
    // cell when values are out of place) work too, and the table reopens clean.
    t.Erase(std::vector<uint64_t>(acknowledged.begin() + 100, acknowledged.begin() + 200));
    ASSERT_TRUE(
        t.Put(std::vector<uint64_t>(acknowledged.begin(), acknowledged.begin() + 100), 2).ok());
    recovery::Report report;
    t.Reopen(&report);
    EXPECT_FALSE(report.HasCorruption());
    EXPECT_EQ(report.slots_cleared, 0u);
    EXPECT_EQ(t.table().Stats().keys, acknowledged.size() + partial - 100);
    EXPECT_TRUE(t.Holds(acknowledged[0], 2));
    EXPECT_FALSE(t.Get({acknowledged[150]})[0].has_value());
  }
}

// A LevelSet of kMaxLevels levels cannot grow: the put that needs a resize is
// PoolFull naming the table's root (as on the GPU backend:
// tests/gphash/gpu/gphash_cross_backend_test.cc), everything acknowledged
// stays, and the table reopens clean.
TEST(GphashResizeLimits, AFullLevelSetIsPoolFullNamingTheRoot) {
  TableOptions options = Options(8, 8);
  options.hash.initial_top_buckets = 256;
  TestTable t("resize-full-levelset", options, uint64_t{16} << 20, 2);
  t.CloseTableOnly();
  FillLevelSet(t.pool(), /*table_id=*/7, t.root());
  t.OpenTable(nullptr);
  ASSERT_EQ(t.table().Stats().levels, gphash::kMaxLevels);
  std::vector<uint64_t> acknowledged;
  Status status;
  for (uint64_t next = 0; status.ok() && next < 100000; next += 64) {
    std::vector<uint64_t> ids = Range(next, next + 64);
    status = t.Put(ids, 1);
    if (status.ok()) acknowledged.insert(acknowledged.end(), ids.begin(), ids.end());
  }
  ASSERT_TRUE(status.IsPoolFull()) << status.ToString();
  EXPECT_NE(status.message().find(t.path() + ": table 't' root (offset "), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("cannot grow past 8 levels"), std::string::npos)
      << status.message();
  ASSERT_FALSE(acknowledged.empty());
  for (uint64_t id : acknowledged) ASSERT_TRUE(t.Holds(id, 1)) << id;
  recovery::Report report;
  t.Reopen(&report);
  EXPECT_FALSE(report.HasCorruption());
  for (uint64_t id : acknowledged) ASSERT_TRUE(t.Holds(id, 1)) << id;
}

// A resize whose bottom level cannot be emptied (every slot of the level above
// is taken) publishes a finished LevelSet that keeps the bottom: one more
// level, every key readable, and the table goes on growing, before and after
// a reopen.
TEST(GphashResizeKeptBottom, ABottomLevelThatCannotBeEmptiedStaysAsOneMoreLevel) {
  TableOptions options = Options(8, 8, /*levels=*/1, /*locations=*/1, /*slots=*/8);
  options.hash.initial_top_buckets = 16;
  TestTable t("resize-kept-bottom", options, uint64_t{16} << 20, 2);
  const std::vector<uint64_t> bottom = Range(0, 24);
  ASSERT_TRUE(t.Put(bottom, 1).ok());
  ASSERT_EQ(t.table().Stats().levels, 1u);
  ASSERT_EQ(t.table().Stats().resizes, 0u);
  t.CloseTableOnly();
  std::vector<uint64_t> fillers;
  InterruptResizeWithFullTop(
      t.pool(), /*table_id=*/7, t.root(), /*first_filler=*/1000000,
      [&](uint64_t id, uint8_t* out) { MakeKey(id, t.K(), out); },
      [&](uint64_t id, uint8_t* out) { MakeValue(id, 1, t.V(), out); }, &fillers);
  ASSERT_EQ(fillers.size(), 32u * 8u);

  // The open finishes the resize: no bottom key finds room above.
  recovery::Report report;
  t.Reopen(&report);
  EXPECT_FALSE(report.HasCorruption());
  gphash::Stats stats = t.table().Stats();
  EXPECT_FALSE(stats.resizing);
  EXPECT_EQ(stats.levels, 2u);
  EXPECT_EQ(stats.top_buckets, 32u);
  EXPECT_EQ(stats.resizes, 1u);
  EXPECT_EQ(stats.keys, bottom.size() + fillers.size());
  gphash::GphashView view = t.View();
  ASSERT_EQ(view.levels.size(), 2u);
  EXPECT_EQ(view.levels[1].bucket_count, 16u);
  EXPECT_FALSE(view.resizing);
  for (uint64_t id : bottom) ASSERT_TRUE(t.Holds(id, 1)) << id;
  for (uint64_t id : fillers) ASSERT_TRUE(t.Holds(id, 1)) << id;

  // The table goes on: new keys make it grow again past the kept level.
  const std::vector<uint64_t> more = Range(100, 700);
  ASSERT_TRUE(t.Put(more, 2).ok());
  EXPECT_GT(t.table().Stats().resizes, 1u);
  auto check_all = [&]() {
    for (uint64_t id : bottom) ASSERT_TRUE(t.Holds(id, 1)) << id;
    for (uint64_t id : fillers) ASSERT_TRUE(t.Holds(id, 1)) << id;
    for (uint64_t id : more) ASSERT_TRUE(t.Holds(id, 2)) << id;
    const uint64_t keys = bottom.size() + fillers.size() + more.size();
    EXPECT_EQ(t.table().Stats().keys, keys);
    gphash::SlotScanResult scan = gphash::VerifyGphashSlots(t.pool(), t.View(), 1, nullptr);
    EXPECT_EQ(scan.corrupt + scan.reserved + scan.duplicates, 0u);
    EXPECT_EQ(scan.keys, keys);
  };
  check_all();
  t.Reopen(&report);
  EXPECT_FALSE(report.HasCorruption());
  check_all();
}

}  // namespace
}  // namespace gpkv::gphash_test
