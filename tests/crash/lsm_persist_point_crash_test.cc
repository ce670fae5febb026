// Crash an ordered (LSM) table at every persist point of a small workload.
//
// As persist_point_crash_test.cc does for the hash table: a child process
// opens a copy of a prepared pool, runs a fixed list of steps (put and erase
// batches that go to the write buffer's log, fill it and flush it, cascade
// down three levels, trigger the automatic compaction, and an explicit
// Compact) and stops itself at persist point k, as a process kill and as a
// power failure. After each step it acknowledges the step through a pipe.
// The parent reopens the pool (recovery: log replay, the sweep of orphaned
// runs) and checks whole-batch atomicity: the table holds exactly the state
// after the acknowledged steps, or exactly the state after the step in
// flight; never a mix. Verify finds nothing, and no extent is left that the
// table does not reference.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "power_failure.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv {
namespace {

constexpr char kTable[] = "ordered";

struct Step {
  enum Kind { kPut, kErase, kCompact } kind;
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;
};

// b = 16: batches of 5 go to the log, the fourth fills the buffer and flushes
// it; batches of 20 flush at once; erases of many live keys push the dead
// share past the automatic compaction's bound. With M = 4 (a log of two
// halves of < 64 entries) the steps cross every state of a checkpoint
// behind the batches: a full half starts one (the erase of 0..5, the erase
// of 200..229, the put of 500..529), its manifest is published before the
// third batch of the new half (the put of 1, 8, ..), by an explicit Compact
// while it is pending, and by a batch too large for a half (70 pairs,
// flushed at once); a crash between start and publish leaves records in both
// halves, which the reopen replays and checkpoints.
std::vector<Step> Workload() {
  std::vector<Step> steps;
  uint64_t version = 1;
  auto put = [&](uint64_t first, uint64_t count, uint64_t stride) {
    Step step{Step::kPut, {}, {}};
    for (uint64_t i = 0; i < count; ++i) {
      step.keys.push_back(first + i * stride);
      step.values.push_back((version << 32) | i);
    }
    step.keys.push_back(first);  // a repeat: the last occurrence wins
    step.values.push_back((version << 32) | 999);
    ++version;
    steps.push_back(step);
  };
  auto erase = [&](uint64_t first, uint64_t count, uint64_t stride) {
    Step step{Step::kErase, {}, {}};
    for (uint64_t i = 0; i < count; ++i) step.keys.push_back(first + i * stride);
    steps.push_back(step);
  };
  for (uint64_t b = 0; b < 4; ++b) put(b * 10, 5, 1);
  put(100, 20, 3);
  put(0, 20, 2);
  erase(0, 6, 1);
  put(200, 30, 1);
  put(1, 4, 7);
  erase(100, 20, 3);
  erase(200, 30, 1);
  steps.push_back({Step::kCompact, {}, {}});
  put(5, 3, 1);
  put(400, 40, 1);
  put(500, 30, 1);
  put(300, 70, 1);
  return steps;
}

using Model = std::map<uint64_t, uint64_t>;

void Apply(const Step& step, Model& model) {
  for (size_t i = 0; i < step.keys.size(); ++i) {
    if (step.kind == Step::kPut) model[step.keys[i]] = step.values[i];
    if (step.kind == Step::kErase) model.erase(step.keys[i]);
  }
}

Options OpenOptions() {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = 1;
  return options;
}

enum class CrashKind { kProcessKill, kPowerFailure };

[[noreturn]] void RunChild(const std::string& path, int ack_fd, std::optional<uint64_t> crash_at,
                           CrashKind kind, int count_fd) {
  static testutil::PowerFailureSimulator* simulator = nullptr;
  if (!crash_at) {
    pm::TEST_CountPersistPoints();
  } else if (kind == CrashKind::kProcessKill) {
    pm::TEST_CrashAtPersistPoint(*crash_at);
  } else {
    simulator = new testutil::PowerFailureSimulator(*crash_at, /*seed=*/*crash_at * 7919 + 3);
    simulator->Install();
  }
  auto db = DB::Open(path, OpenOptions());
  if (!db.ok()) _exit(10);
  auto table = (*db)->OpenTable(kTable);
  if (!table.ok()) _exit(11);
  std::vector<Step> steps = Workload();
  for (uint32_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    Status status = step.kind == Step::kPut     ? (*table)->Put(step.keys, step.values)
                    : step.kind == Step::kErase ? (*table)->Erase(step.keys)
                                                : (*table)->Compact();
    if (!status.ok()) _exit(12);
    if (write(ack_fd, &s, sizeof(s)) != sizeof(s)) _exit(13);
  }
  if (count_fd >= 0) {
    uint64_t count = pm::TEST_PersistPointCount();
    if (write(count_fd, &count, sizeof(count)) != sizeof(count)) _exit(14);
  }
  _exit(0);
}

struct ChildResult {
  int exit_code = -1;
  int acknowledged = 0;
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
  uint32_t index;
  while (read(ack[0], &index, sizeof(index)) == sizeof(index)) result.acknowledged = index + 1;
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

void CheckAfterCrash(const std::string& path, int acknowledged, uint64_t k) {
  std::vector<Step> steps = Workload();
  Model before;
  for (int s = 0; s < acknowledged; ++s) Apply(steps[s], before);
  Model after = before;
  if (acknowledged < static_cast<int>(steps.size())) Apply(steps[acknowledged], after);
  {
    auto db = DB::Open(path, OpenOptions());
    ASSERT_TRUE(db.ok()) << "crash at " << k << ": " << db.status().ToString();
    auto table = (*db)->OpenTable(kTable);
    ASSERT_TRUE(table.ok());
    Model found;
    ASSERT_TRUE((*table)
                    ->Scan([&](const uint8_t* key, const uint8_t* value) {
                      uint64_t k, v;
                      std::memcpy(&k, key, 8);
                      std::memcpy(&v, value, 8);
                      found[k] = v;
                      return true;
                    })
                    .ok());
    ASSERT_TRUE(found == before || found == after)
        << "crash at persist point " << k << " after " << acknowledged
        << " acknowledged steps: the table holds " << found.size() << " pairs, neither the "
        << before.size() << " before the step in flight nor the " << after.size() << " after it";
    ASSERT_EQ((*table)->Stats()->keys, found.size());
  }
  auto report = recovery::VerifyPool(path, nullptr);
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->findings.empty())
      << "crash at " << k << ": verify after recovery: " << report->findings[0].message;
}

// The parameter: M, the batches of b the log holds (1: every batch of b
// flushes; 4: batches of 20 go to the log too, and a flush merges several
// records' runs).
class LsmCrashAtEveryPersistPoint : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    Options options = OpenOptions();
    options.create_if_missing = true;
    options.pool_size = 4 << 20;
    auto db = DB::Open(base_.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.kind = TableKind::kOrdered;
    table_options.ordered.batch_entries = 16;
    table_options.ordered.log_batches = GetParam();
    ASSERT_TRUE((*db)->CreateTable(kTable, table_options).ok());
  }

  void FreshCopy() {
    std::filesystem::copy_file(base_.path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }

  void RunEveryPoint(CrashKind kind, const char* label) {
    FreshCopy();
    ChildResult full = RunInChild(work_.path(), std::nullopt);
    ASSERT_EQ(full.exit_code, 0);
    const int steps = static_cast<int>(Workload().size());
    ASSERT_EQ(full.acknowledged, steps);
    // Fewer with M = 4: its batches of 20 are log appends, not flushes.
    ASSERT_GT(full.persist_points, GetParam() == 1 ? 50u : 30u);
    CheckAfterCrash(work_.path(), full.acknowledged, full.persist_points);
    {
      auto db = DB::Open(work_.path(), OpenOptions());
      ASSERT_TRUE(db.ok());
      Table* table = *(*db)->OpenTable(kTable);
      auto compactions = table->GetProperty("lsm.compactions");
      ASSERT_TRUE(compactions.ok());
      if (GetParam() == 1) {
        ASSERT_GE(*compactions, 2.0) << "the workload must compact on its own and when asked";
      } else {
        // With M = 4 the erases reach the levels in a flush with no older
        // level below it, which drops their tombstones: no automatic
        // compaction, the explicit one only; the buffer flushed twice.
        ASSERT_GE(*compactions, 1.0);
        ASSERT_GE(*table->GetProperty("lsm.runs"), 1.0);
      }
    }
    uint64_t crashes = 0;
    for (uint64_t k = 0; k < full.persist_points; ++k) {
      FreshCopy();
      ChildResult result = RunInChild(work_.path(), k, kind);
      ASSERT_EQ(result.exit_code, pm::kCrashExitCode) << label << " at persist point " << k;
      ++crashes;
      CheckAfterCrash(work_.path(), result.acknowledged, k);
      if (HasFatalFailure()) return;
    }
    std::printf(
        "[crash totals] lsm %s, M = %u: %llu crash states checked (every persist point), "
        "0 acknowledged writes lost, 0 half batches, 0 pools failing verify\n",
        label, GetParam(), static_cast<unsigned long long>(crashes));
  }

  testutil::TempPool base_{"lsm-crash-base"};
  testutil::TempPool work_{"lsm-crash-work"};
};

TEST_P(LsmCrashAtEveryPersistPoint, ProcessKillLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_P(LsmCrashAtEveryPersistPoint, PowerFailureLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

INSTANTIATE_TEST_SUITE_P(LogBatches, LsmCrashAtEveryPersistPoint, ::testing::Values(1u, 4u),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return "M" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace gpkv
