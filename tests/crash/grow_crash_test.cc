// Crash at every persist point of a pool's growth.
//
// A prepared pool is full: its hash table holds pairs, and a second table of
// the size the child makes does not fit. A child process opens a copy with
// Options::grow_if_smaller (what `gpkv grow` runs: open-time recovery, the
// file extended, a superblock with the new size), acknowledges the growth
// through a pipe, creates the second table (its extents lie past the old
// end) and puts a batch into it, acknowledging each step. It stops itself at
// persist point k, as a process kill (pm::TEST_CrashAtPersistPoint) and as a
// power failure (testutil::PowerFailureSimulator). The parent then reopens
// the pool and checks that it has the old size or the new one (the new one
// once the growth was acknowledged), that every pair of the prepared table
// is intact, that the second table holds what was acknowledged, that verify
// finds nothing, and that the pool then grows. For every k.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "persist_point_harness.h"
#include "recovery/verify.h"

namespace gpkv {
namespace {

constexpr uint64_t kOldSize = uint64_t{1} << 20;
constexpr uint64_t kNewSize = uint64_t{2} << 20;
constexpr char kFull[] = "full";
constexpr char kMore[] = "more";

// What the child acknowledges, in order: after n acknowledgements, step n
// is the last one done.
enum Step : int { kGrown = 1, kCreated = 2, kPut = 3 };

std::vector<uint64_t> Keys(uint64_t count, uint64_t salt) {
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < count; ++i) keys.push_back((i + salt) * 0x9e3779b97f4a7c15ULL + 1);
  return keys;
}

std::vector<uint64_t> ValuesOf(const std::vector<uint64_t>& keys) {
  std::vector<uint64_t> values;
  for (uint64_t key : keys) values.push_back(key ^ 0xa5a5);
  return values;
}

const std::vector<uint64_t>& FullKeys() {
  static const std::vector<uint64_t> keys = Keys(200, 0);
  return keys;
}
const std::vector<uint64_t>& MoreKeys() {
  static const std::vector<uint64_t> keys = Keys(24, 1 << 20);
  return keys;
}

// A table too large for what the old pool has left.
TableOptions MoreOptions() {
  TableOptions options;
  options.expected_keys = 32768;
  return options;
}

using testutil::ChildResult;
using testutil::CrashKind;

// The CPU backend with one worker thread (testutil::PersistPointOptions).
Options OpenOptions() { return testutil::PersistPointOptions(); }

// Child: grow the pool, create the second table and put into it,
// acknowledging each step.
ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill) {
  return testutil::RunInChild(crash_at, kind, /*seed_salt=*/1, [&](const auto& pipes) {
    Options options = OpenOptions();
    options.pool_size = kNewSize;
    options.grow_if_smaller = true;
    auto db = DB::Open(path, options);
    if (!db.ok()) _exit(10);
    pipes.Acknowledge();  // kGrown
    auto table = (*db)->CreateTable(kMore, MoreOptions());
    if (!table.ok()) _exit(11);
    pipes.Acknowledge();  // kCreated
    if (!(*table)->Put(MoreKeys(), ValuesOf(MoreKeys())).ok()) _exit(12);
    pipes.Acknowledge();  // kPut
    if (!(*db)->Close().ok()) _exit(14);
    pipes.Finish();
  });
}

// Every key of `keys` holds its value, or (unless `all`) is absent.
void ExpectPairs(Table& table, const std::vector<uint64_t>& keys, bool all,
                 const std::string& where) {
  std::vector<uint64_t> values(keys.size());
  std::vector<uint8_t> found(keys.size());
  ASSERT_TRUE(table.Get(keys, values, found).ok()) << where;
  const std::vector<uint64_t> expected = ValuesOf(keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!found[i]) {
      ASSERT_FALSE(all) << where << ": key " << keys[i] << " lost";
      continue;
    }
    ASSERT_EQ(values[i], expected[i]) << where << ": key " << keys[i];
  }
}

// Checks the pool after a crash; *size receives the size it opened at.
void CheckAfterCrash(const std::string& path, int acknowledged, const std::string& where,
                     uint64_t* size) {
  {
    auto db = DB::Open(path, OpenOptions());
    ASSERT_TRUE(db.ok()) << where << ": " << db.status().ToString();
    auto info = (*db)->Info();
    ASSERT_TRUE(info.ok());
    *size = info->pool_size;
    if (acknowledged >= kGrown) {
      ASSERT_EQ(info->pool_size, kNewSize) << where << ": the growth was acknowledged";
    } else {
      ASSERT_TRUE(info->pool_size == kOldSize || info->pool_size == kNewSize)
          << where << ": pool size " << info->pool_size;
    }
    auto full = (*db)->OpenTable(kFull);
    ASSERT_TRUE(full.ok()) << where << ": " << full.status().ToString();
    ExpectPairs(**full, FullKeys(), /*all=*/true, where);
    auto more = (*db)->OpenTable(kMore);
    if (acknowledged >= kCreated) {
      ASSERT_TRUE(more.ok()) << where << ": " << more.status().ToString();
    }
    if (more.ok()) {
      ASSERT_EQ(info->pool_size, kNewSize) << where << ": the new table needs the new space";
      ExpectPairs(**more, MoreKeys(), /*all=*/acknowledged >= kPut, where);
    } else {
      ASSERT_TRUE(more.status().IsNotFound()) << where << ": " << more.status().ToString();
    }
  }
  auto report = recovery::VerifyPool(path, nullptr);
  ASSERT_TRUE(report.ok()) << where << ": " << report.status().ToString();
  ASSERT_TRUE(report->findings.empty()) << where << ": verify: " << report->findings[0].message;
  // The pool grows after any crash.
  Options options = OpenOptions();
  options.pool_size = kNewSize;
  options.grow_if_smaller = true;
  auto db = DB::Open(path, options);
  ASSERT_TRUE(db.ok()) << where << ": " << db.status().ToString();
  ASSERT_EQ((*db)->Info()->pool_size, kNewSize) << where;
}

class GrowCrashAtEveryPersistPoint : public ::testing::Test {
 protected:
  void SetUp() override {
    Options options = OpenOptions();
    options.create_if_missing = true;
    options.pool_size = kOldSize;
    auto db = DB::Open(pools_.base(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.expected_keys = 512;
    auto table = (*db)->CreateTable(kFull, table_options);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_TRUE((*table)->Put(FullKeys(), ValuesOf(FullKeys())).ok());
    // The second table does not fit before the growth.
    auto more = (*db)->CreateTable(kMore, MoreOptions());
    ASSERT_TRUE(more.status().IsPoolFull()) << more.status().ToString();
  }

  void RunEveryPoint(CrashKind kind, const char* label) {
    uint64_t crashes = 0;
    // Crash states at the old size (the run without a crash has grown: its
    // check asserts the new size).
    uint64_t at_old_size = 0;
    testutil::CheckEveryPersistPoint(
        pools_, kind, label, kPut, 10, RunInChild,
        [&](const std::string& path, int acknowledged, const std::string& where) {
          uint64_t size = 0;
          CheckAfterCrash(path, acknowledged, where, &size);
          if (size == kOldSize) ++at_old_size;
        },
        [] {}, &crashes);
    if (HasFatalFailure()) return;
    // The points before the new superblock is durable leave the old size.
    EXPECT_GT(at_old_size, 0u);
    EXPECT_LT(at_old_size, crashes);
    testutil::PrintCrashTotals(std::string("grow, ") + label, crashes, testutil::kNothingLost);
  }

  testutil::PoolCopies pools_{"grow-crash"};
};

TEST_F(GrowCrashAtEveryPersistPoint, ProcessKillLeavesTheOldOrTheNewSizeAndEveryPair) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_F(GrowCrashAtEveryPersistPoint, PowerFailureLeavesTheOldOrTheNewSizeAndEveryPair) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

}  // namespace
}  // namespace gpkv
