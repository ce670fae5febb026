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
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "power_failure.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv {
namespace {

constexpr uint64_t kOldSize = uint64_t{1} << 20;
constexpr uint64_t kNewSize = uint64_t{2} << 20;
constexpr char kFull[] = "full";
constexpr char kMore[] = "more";

// What the child acknowledges, in order.
enum Step : uint32_t { kGrown = 1, kCreated = 2, kPut = 3 };

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

// The CPU backend with one worker thread: persist points come in a fixed
// order, so point k of the counting run is point k of every crashing run.
Options OpenOptions() {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = 1;
  return options;
}

enum class CrashKind { kProcessKill, kPowerFailure };

[[noreturn]] void RunChild(const std::string& path, int ack_fd, std::optional<uint64_t> crash_at,
                           CrashKind kind, int count_fd) {
  if (!crash_at) {
    pm::TEST_CountPersistPoints();
  } else if (kind == CrashKind::kProcessKill) {
    pm::TEST_CrashAtPersistPoint(*crash_at);
  } else {
    auto* simulator = new testutil::PowerFailureSimulator(*crash_at, *crash_at * 7919 + 1);
    simulator->Install();
  }
  auto acknowledge = [ack_fd](uint32_t step) {
    if (write(ack_fd, &step, sizeof(step)) != sizeof(step)) _exit(13);
  };
  Options options = OpenOptions();
  options.pool_size = kNewSize;
  options.grow_if_smaller = true;
  auto db = DB::Open(path, options);
  if (!db.ok()) _exit(10);
  acknowledge(kGrown);
  auto table = (*db)->CreateTable(kMore, MoreOptions());
  if (!table.ok()) _exit(11);
  acknowledge(kCreated);
  if (!(*table)->Put(MoreKeys(), ValuesOf(MoreKeys())).ok()) _exit(12);
  acknowledge(kPut);
  if (!(*db)->Close().ok()) _exit(14);
  if (count_fd >= 0) {
    uint64_t count = pm::TEST_PersistPointCount();
    if (write(count_fd, &count, sizeof(count)) != sizeof(count)) _exit(15);
  }
  _exit(0);
}

struct ChildResult {
  int exit_code = -1;
  uint32_t acknowledged = 0;  // the last step acknowledged
  uint64_t persist_points = 0;
};

ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill) {
  int ack[2], count[2];
  EXPECT_EQ(pipe(ack), 0);
  EXPECT_EQ(pipe(count), 0);
  pid_t child = fork();
  if (child == 0) {
    close(ack[0]);
    close(count[0]);
    RunChild(path, ack[1], crash_at, kind, count[1]);
  }
  close(ack[1]);
  close(count[1]);
  ChildResult result;
  uint32_t step;
  while (read(ack[0], &step, sizeof(step)) == sizeof(step)) result.acknowledged = step;
  if (read(count[0], &result.persist_points, sizeof(uint64_t)) != sizeof(uint64_t)) {
    result.persist_points = 0;
  }
  close(ack[0]);
  close(count[0]);
  int status = 0;
  waitpid(child, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
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
void CheckAfterCrash(const std::string& path, uint32_t acknowledged, const std::string& where,
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
    auto db = DB::Open(base_.path(), options);
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

  void FreshCopy() {
    std::filesystem::copy_file(base_.path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }

  void RunEveryPoint(CrashKind kind, const char* label) {
    FreshCopy();
    ChildResult full = RunInChild(work_.path(), std::nullopt);
    ASSERT_EQ(full.exit_code, 0);
    ASSERT_EQ(full.acknowledged, kPut);
    ASSERT_GT(full.persist_points, 10u);
    uint64_t size = 0;
    CheckAfterCrash(work_.path(), full.acknowledged, std::string(label) + " without a crash",
                    &size);
    uint64_t crashes = 0;
    uint64_t at_old_size = 0;
    for (uint64_t k = 0; k < full.persist_points; ++k) {
      FreshCopy();
      ChildResult result = RunInChild(work_.path(), k, kind);
      const std::string where = std::string(label) + " at persist point " + std::to_string(k);
      ASSERT_EQ(result.exit_code, pm::kCrashExitCode) << where;
      ++crashes;
      CheckAfterCrash(work_.path(), result.acknowledged, where, &size);
      if (HasFatalFailure()) return;
      if (size == kOldSize) ++at_old_size;
    }
    // The points before the new superblock is durable leave the old size.
    EXPECT_GT(at_old_size, 0u);
    EXPECT_LT(at_old_size, crashes);
    std::printf(
        "[crash totals] grow, %s: %llu crash states checked (every persist point), "
        "0 acknowledged writes lost, 0 pools failing verify\n",
        label, static_cast<unsigned long long>(crashes));
  }

  testutil::TempPool base_{"grow-crash-base"};
  testutil::TempPool work_{"grow-crash-work"};
};

TEST_F(GrowCrashAtEveryPersistPoint, ProcessKillLeavesTheOldOrTheNewSizeAndEveryPair) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_F(GrowCrashAtEveryPersistPoint, PowerFailureLeavesTheOldOrTheNewSizeAndEveryPair) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

}  // namespace
}  // namespace gpkv
