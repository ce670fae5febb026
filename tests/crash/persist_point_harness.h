// What the persist-point crash tests share: a child process that runs a
// workload on a pool and stops itself at persist point k, as a process kill
// (pm::TEST_CrashAtPersistPoint: every store so far is in the file) or as a
// power failure (testutil::PowerFailureSimulator: stores not yet persisted
// are each kept or dropped), acknowledging each step through a pipe; and the
// parent's loop that runs it on a fresh copy of a prepared pool for every k
// and checks the pool after each crash.
//
// The workloads run on the CPU backend with one worker thread: persist
// points then come in a fixed order, so point k of the counting run is point
// k of every crashing run.
//
// A test supplies what its family does differently: its prepared pool
// (CreatePoolWithTable or its own), its workload (RunStepsInChild or its own
// RunInChild body) and its check of a crashed pool; CheckEveryPersistPoint
// runs the rest.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "gpkv/db.h"
#include "gpkv/options.h"
#include "pm/persist_hook.h"
#include "power_failure.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::testutil {

enum class CrashKind { kProcessKill, kPowerFailure };

// The CPU backend with one worker thread (see above).
inline Options PersistPointOptions() {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = 1;
  return options;
}

// What the parent learns of one child run.
struct ChildResult {
  int exit_code = -1;
  // How many steps the child acknowledged before it stopped.
  int acknowledged = 0;
  // The persist points of the whole workload (a run with no crash only).
  uint64_t persist_points = 0;
};

// The child's ends of its two pipes to the parent.
class ChildPipes {
 public:
  ChildPipes(int ack_fd, int count_fd) : ack_fd_(ack_fd), count_fd_(count_fd) {}

  // Tells the parent that one more step returned OK.
  void Acknowledge() const {
    const uint32_t step = 1;
    if (write(ack_fd_, &step, sizeof(step)) != sizeof(step)) _exit(20);
  }

  // Tells the parent how many persist points the run had and ends the child
  // (exit code 0) with the DB as it is: nothing closes it after the count.
  [[noreturn]] void Finish() const {
    const uint64_t points = pm::TEST_PersistPointCount();
    if (write(count_fd_, &points, sizeof(points)) != sizeof(points)) _exit(21);
    _exit(0);
  }

 private:
  const int ack_fd_;
  const int count_fd_;
};

// Runs workload(pipes) in a forked child. The child counts its persist
// points when crash_at is empty, else stops itself at persist point
// *crash_at as `kind` (a power failure keeps or drops each word that was not
// durable by a random choice seeded with *crash_at * 7919 + seed_salt). The
// workload calls pipes.Acknowledge() after each step that returned OK,
// _exit()s with a code of its own (10..19) when a step fails, and ends with
// pipes.Finish().
template <typename Workload>
ChildResult RunInChild(std::optional<uint64_t> crash_at, CrashKind kind, uint64_t seed_salt,
                       const Workload& workload) {
  int ack[2], count[2];
  EXPECT_EQ(pipe(ack), 0);
  EXPECT_EQ(pipe(count), 0);
  pid_t child = fork();
  if (child == 0) {
    close(ack[0]);
    close(count[0]);
    if (!crash_at) {
      pm::TEST_CountPersistPoints();
    } else if (kind == CrashKind::kProcessKill) {
      pm::TEST_CrashAtPersistPoint(*crash_at);
    } else {
      auto* simulator = new PowerFailureSimulator(*crash_at, *crash_at * 7919 + seed_salt);
      simulator->Install();
    }
    const ChildPipes pipes(ack[1], count[1]);
    workload(pipes);
    pipes.Finish();
  }
  close(ack[1]);
  close(count[1]);
  ChildResult result;
  uint32_t step;
  while (read(ack[0], &step, sizeof(step)) == sizeof(step)) ++result.acknowledged;
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

// A child's workload over the table `table_name` of the pool at `path`:
// opens the DB (`options`) and the table, runs apply(table, step) for each
// of `steps`, acknowledging each that returns OK, and finishes. Exits 10
// when the DB does not open, 11 when the table does not, 12 when a step
// fails.
template <typename Steps, typename Apply>
[[noreturn]] void RunSteps(const ChildPipes& pipes, const std::string& path, const Options& options,
                           const char* table_name, const Steps& steps, const Apply& apply) {
  auto db = DB::Open(path, options);
  if (!db.ok()) _exit(10);
  auto table = (*db)->OpenTable(table_name);
  if (!table.ok()) _exit(11);
  for (const auto& step : steps) {
    if (!apply(**table, step).ok()) _exit(12);
    pipes.Acknowledge();
  }
  pipes.Finish();
}

// RunSteps in a forked child (RunInChild) over the table `table_name` of the
// pool at `path`, opened with PersistPointOptions().
template <typename Steps, typename Apply>
ChildResult RunStepsInChild(const std::string& path, const char* table_name,
                            std::optional<uint64_t> crash_at, CrashKind kind, uint64_t seed_salt,
                            const Steps& steps, const Apply& apply) {
  return RunInChild(crash_at, kind, seed_salt, [&](const ChildPipes& pipes) {
    RunSteps(pipes, path, PersistPointOptions(), table_name, steps, apply);
  });
}

// Creates the pool at `path` (`pool_size` bytes, PersistPointOptions()) with
// the one table `table_name`.
inline void CreatePoolWithTable(const std::string& path, uint64_t pool_size, const char* table_name,
                                const TableOptions& table_options) {
  Options options = PersistPointOptions();
  options.create_if_missing = true;
  options.pool_size = pool_size;
  auto db = DB::Open(path, options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->CreateTable(table_name, table_options).ok());
}

// Verify finds nothing in the pool at `path`, reopened after a crash
// (`where` names it).
inline void ExpectVerifyCleanAfterCrash(const std::string& path, const std::string& where) {
  auto report = recovery::VerifyPool(path, nullptr);
  ASSERT_TRUE(report.ok()) << where;
  ASSERT_TRUE(report->findings.empty())
      << where << ": verify after recovery: " << report->findings[0].message;
}

// A prepared pool (base) and the copy a crash run works on (work).
class PoolCopies {
 public:
  explicit PoolCopies(const std::string& tag) : base_(tag + "-base"), work_(tag + "-work") {}

  const std::string& base() const { return base_.path(); }
  const std::string& work() const { return work_.path(); }

  // The work copy made again from the prepared pool.
  void FreshCopy() const {
    std::filesystem::copy_file(base_.path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }

 private:
  TempPool base_;
  TempPool work_;
};

// For every persist point k below `points`: a fresh copy, the child run
// run_child(k) (a ChildResult), which must stop at k, then
// check(result.acknowledged, k, where) on the copy, where `where` is
// "<label> at persist point <k>". *crashes counts the crash states checked.
// Returns at the first fatal failure (the caller checks HasFatalFailure()).
template <typename RunChild, typename Check>
void CrashAtEveryPoint(const PoolCopies& pools, uint64_t points, const std::string& label,
                       const RunChild& run_child, const Check& check, uint64_t* crashes) {
  *crashes = 0;
  for (uint64_t k = 0; k < points; ++k) {
    pools.FreshCopy();
    const ChildResult result = run_child(k);
    const std::string where = label + " at persist point " + std::to_string(k);
    ASSERT_EQ(result.exit_code, pm::kCrashExitCode) << where;
    ++*crashes;
    check(result.acknowledged, k, where);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The persist-point test of one crash kind, `label` ("process kill"). The
// workload runs in a child on a fresh copy of the prepared pool,
// run_child(path, crash_at, kind) (a ChildResult): first to the end
// (crash_at empty), where it must exit 0 having acknowledged `steps` steps
// over more than `min_points` persist points; then, for every persist point
// k of that run, stopping at k. After each run check(path, acknowledged,
// where) checks the copy, where `where` is "<label> without a crash" or
// "<label> at persist point <k>"; after the first, after_full() too.
// *crashes counts the crash states checked. Returns at the first fatal
// failure (the caller checks HasFatalFailure()).
template <typename RunChild, typename Check, typename AfterFull>
void CheckEveryPersistPoint(const PoolCopies& pools, CrashKind kind, const std::string& label,
                            int steps, uint64_t min_points, const RunChild& run_child,
                            const Check& check, const AfterFull& after_full, uint64_t* crashes) {
  *crashes = 0;
  pools.FreshCopy();
  const ChildResult full = run_child(pools.work(), std::optional<uint64_t>(), kind);
  ASSERT_EQ(full.exit_code, 0) << label;
  ASSERT_EQ(full.acknowledged, steps) << label;
  ASSERT_GT(full.persist_points, min_points) << label;
  check(pools.work(), full.acknowledged, label + " without a crash");
  if (::testing::Test::HasFatalFailure()) return;
  after_full();
  if (::testing::Test::HasFatalFailure()) return;
  CrashAtEveryPoint(
      pools, full.persist_points, label,
      [&](uint64_t k) { return run_child(pools.work(), std::optional<uint64_t>(k), kind); },
      [&](int acknowledged, uint64_t, const std::string& where) {
        check(pools.work(), acknowledged, where);
      },
      crashes);
}

// The name of a test instance by M, the batches of b a table's log holds:
// "M1", "M4".
inline std::string LogBatchesName(const ::testing::TestParamInfo<uint32_t>& info) {
  return "M" + std::to_string(info.param);
}

// What a passing persist-point test states in its totals line: every table
// keeps its acknowledged writes and verifies clean; a logged table also
// holds no part of a batch without the rest.
constexpr char kNothingLost[] = "0 acknowledged writes lost, 0 pools failing verify";
constexpr char kNothingLostNoHalfBatch[] =
    "0 acknowledged writes lost, 0 half batches, 0 pools failing verify";

// The line scripts/crash-totals.sh sums: "[crash totals] <what>: <crashes>
// crash states checked (every persist point), <claims>".
inline void PrintCrashTotals(const std::string& what, uint64_t crashes, const char* claims) {
  std::printf("[crash totals] %s: %llu crash states checked (every persist point), %s\n",
              what.c_str(), static_cast<unsigned long long>(crashes), claims);
}

}  // namespace gpkv::testutil
