// Process kills at random times: a child runs long batches (thousands of
// operations, two worker threads per batch) and is sent SIGKILL; the parent
// reopens the pool and checks every acknowledged batch and that each
// operation of the batch in flight is applied or absent (crash_workload.h:
// CheckAfterCrash).
//
// Kills are placed in the child's work, not in the parent's clock, so that
// the machine's load changes neither where they land nor how many runs finish
// before their kill (on a loaded 2-core machine one run of the same workload
// takes 0.01 s, the next 0.7 s): a reference run without a kill records the
// persist points where each step ends and each resize starts and finishes
// (the child watches the publish of a table's LevelSet). A kill is planned at
// a persist point drawn from those and a delay of a few points' time; the
// child arms a kernel timer at that point (ChildPlan::KillTimer), which sends
// it SIGKILL at whatever instruction any of its threads is at. The first test
// draws the point over the whole run; the second over the points inside
// resizes, and requires that half the kills find the pool resizing (a
// LevelSet with the resizing flag, read before the reopen finishes the
// resize); a third draws it over a run on logged hash tables (their
// batches log records, their index in memory). All run until they have
// their kills (runs that finish first are
// checked too, and counted as crash states); the verdict is the check of
// every run's pool.
#include <gtest/gtest.h>
#include <omp.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "crash_child.h"
#include "crash_workload.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::crashtest {
namespace {

constexpr uint64_t kPoolSize = 16 << 20;
constexpr int kWorkers = 2;

struct KillTotals {
  uint64_t kills = 0, completed = 0, during_resize = 0, failed = 0;
  uint64_t lost_writes = 0, half_applied = 0, failing_verify = 0;
};

class SigkillCrash : public ::testing::Test {
 protected:
  // The parent runs no OpenMP team (verify would use every core): libgomp's
  // thread pool does not survive fork, and the children run teams of two.
  void SetUp() override { omp_set_num_threads(1); }

  // log_batches: 0, the workload's initial tables written in place; M >= 1,
  // logged (TableOptions::hash_log, b = 256).
  void Prepare(const WorkloadParams& params, uint64_t expected_keys, uint32_t log_batches = 0) {
    steps_ = BuildWorkload(params);
    // The parent never runs batches with more than one worker: libgomp's
    // thread pool does not survive fork, and the children use it.
    Options options = ChildOptions(1);
    options.create_if_missing = true;
    options.pool_size = kPoolSize;
    auto db = DB::Open(base_.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    for (auto [name, table_options] : InitialTables()) {
      table_options.expected_keys = expected_keys;
      table_options.hash_log.log_batches = log_batches;
      table_options.hash_log.batch_entries = 256;
      ASSERT_TRUE((*db)->CreateTable(name, table_options).ok());
    }
  }

  void FreshCopy() {
    std::filesystem::copy_file(base_.path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }

  ChildPlan Plan() {
    ChildPlan plan;
    plan.path = work_.path();
    plan.steps = &steps_;
    plan.cpu_threads = kWorkers;
    plan.report_resizes = true;
    return plan;
  }

  // A child and the records it sends.
  struct Run {
    pid_t pid = -1;
    int fd = -1;
    int64_t started_ns = detail::SteadyNanos();
    size_t acknowledged = 0;

    // Reads one record (and its time: seconds since the fork, by the child's
    // clock); false at the end of the stream.
    bool Next(detail::Record* record, double* seconds) {
      if (read(fd, record, sizeof(*record)) != sizeof(*record)) return false;
      *seconds = 1e-9 * static_cast<double>(record->sent_ns - started_ns);
      if (record->type == detail::kAcknowledged) acknowledged = record->step + 1;
      return true;
    }
    // Reads what is left and reaps the child; returns its exit code.
    int Finish() {
      detail::Record record;
      double seconds;
      while (Next(&record, &seconds)) {
      }
      close(fd);
      int status = 0;
      waitpid(pid, &status, 0);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  };

  // The reference run (no kill), in persist points counted from the open:
  // where the open and the run end and where each resize starts and
  // finishes; and how long the steps took.
  struct Timeline {
    uint64_t opened = 0;                                 // points of the open (recovery)
    uint64_t end = 0;                                    // points of the whole run
    std::vector<std::pair<uint64_t, uint64_t>> resizes;  // first point inside, point after
    double seconds = 0;                                  // from the open to the end
  };

  Timeline Calibrate() {
    FreshCopy();
    Timeline timeline;
    Run run;
    run.pid = StartChild(Plan(), &run.fd);
    EXPECT_GT(run.pid, 0);
    detail::Record record;
    double seconds, opened_at = 0;
    while (run.Next(&record, &seconds)) {
      // A resize record is sent at the persist point (counted) that
      // publishes the LevelSet, before its stores are durable: point
      // record.points - 1 publishes, so a kill after it finds the new flag.
      if (record.type == detail::kOpened) {
        timeline.opened = record.points;
        opened_at = seconds;
      }
      if (record.type == detail::kEnd) {
        timeline.end = record.points;
        timeline.seconds = seconds - opened_at;
      }
      if (record.type == detail::kResizeStarted) {
        timeline.resizes.push_back({record.points - 1, record.points - 1});
      }
      if (record.type == detail::kResizeFinished && !timeline.resizes.empty()) {
        timeline.resizes.back().second = record.points - 1;
      }
    }
    EXPECT_EQ(run.Finish(), 0) << "calibration run";
    EXPECT_EQ(run.acknowledged, steps_.size());
    EXPECT_GT(timeline.end, timeline.opened + 64);
    return timeline;
  }

  // A persist point drawn uniformly over the run's steps, or (aim_at_resizes)
  // over the points inside its resizes, and a delay after it drawn over the
  // time of a few points: the kill lands between points, anywhere.
  ChildPlan::KillTimer PlanKill(const Timeline& timeline, bool aim_at_resizes,
                                std::mt19937_64& random) {
    ChildPlan::KillTimer kill;
    kill.armed = true;
    // The last points of a run may not come in another run (two workers per
    // batch make the count vary a little): leave them out.
    uint64_t last = timeline.end - 16;
    kill.at_point = timeline.opened + random() % (last - timeline.opened);
    uint64_t inside = 0;
    for (const auto& [first, after] : timeline.resizes) inside += after - first;
    if (aim_at_resizes && inside > 0) {
      uint64_t at = random() % inside;
      for (const auto& [first, after] : timeline.resizes) {
        if (at < after - first) {
          kill.at_point = std::min(first + at, last);
          break;
        }
        at -= after - first;
      }
    }
    double per_point = timeline.seconds / static_cast<double>(timeline.end - timeline.opened);
    kill.delay = std::uniform_real_distribution<double>(0.0, 4 * per_point)(random);
    return kill;
  }

  // Kills children until `min_kills` runs were killed and (aim_at_resizes)
  // `min_during_resize` of the kills found a table resizing; every run, killed
  // or finished first, is a crash state checked. Kills are placed in the
  // child's work, so these counts do not depend on the machine's load; the
  // cap on runs only catches a placement that misses.
  KillTotals KillRepeatedly(uint64_t min_kills, uint64_t min_during_resize, uint64_t seed,
                            bool aim_at_resizes, const char* label) {
    KillTotals totals;
    Timeline timeline = Calibrate();
    if (HasFailure()) return totals;
    std::mt19937_64 random(seed);
    Stopwatch watch;
    std::vector<std::string> errors;
    const uint64_t max_runs = 2 * (min_kills + min_during_resize) + 20;
    uint64_t runs = 0;
    for (;
         runs < max_runs && (totals.kills < min_kills || totals.during_resize < min_during_resize);
         ++runs) {
      FreshCopy();
      ChildPlan plan = Plan();
      plan.kill = PlanKill(timeline, aim_at_resizes, random);
      Run run;
      run.pid = StartChild(plan, &run.fd);
      EXPECT_GT(run.pid, 0);
      if (run.pid <= 0) break;
      int exit_code = run.Finish();
      if (exit_code == 0) {
        ++totals.completed;
      } else if (exit_code == 128 + SIGKILL) {
        ++totals.kills;
      } else {
        ADD_FAILURE() << label << ": child exit " << exit_code;
        break;
      }
      auto crashed = recovery::VerifyPool(work_.path(), nullptr);
      EXPECT_TRUE(crashed.ok()) << crashed.status().ToString();
      if (crashed.ok()) {
        if (std::any_of(crashed->tables.begin(), crashed->tables.end(),
                        [](const recovery::TableReport& t) { return t.resizing; })) {
          ++totals.during_resize;
        }
        if (crashed->HasCorruption()) {
          errors.push_back("verify of the killed pool (before recovery) finds corruption: " +
                           crashed->findings[0].message);
        }
      }
      CheckResult result = CheckAfterCrash(work_.path(), steps_, run.acknowledged, ChildOptions(1));
      totals.lost_writes += result.lost_writes;
      totals.half_applied += result.half_applied;
      if (result.verify_failed) ++totals.failing_verify;
      if (!result.ok()) {
        ++totals.failed;
        char where[200];
        std::snprintf(where, sizeof(where),
                      "run %llu, %.2f us after persist point %llu, %zu steps "
                      "acknowledged: ",
                      static_cast<unsigned long long>(runs), 1e6 * plan.kill.delay,
                      static_cast<unsigned long long>(plan.kill.at_point), run.acknowledged);
        errors.push_back(where + result.first_error);
        if (totals.failed >= 5) break;
      }
    }
    uint64_t inside = 0;
    for (const auto& [first, after] : timeline.resizes) inside += after - first;
    std::printf(
        "[crash totals] %s: %llu crash states checked (%llu SIGKILLs at random times in a run of "
        "%llu persist points, %.3f s, with %zu resizes over %llu points; %llu kills during a "
        "resize; %llu runs finished first), %llu acknowledged writes lost, %llu in-flight ops "
        "half-applied, %llu pools failing verify (%.0f s)\n",
        label, static_cast<unsigned long long>(totals.kills + totals.completed),
        static_cast<unsigned long long>(totals.kills),
        static_cast<unsigned long long>(timeline.end - timeline.opened), timeline.seconds,
        timeline.resizes.size(), static_cast<unsigned long long>(inside),
        static_cast<unsigned long long>(totals.during_resize),
        static_cast<unsigned long long>(totals.completed),
        static_cast<unsigned long long>(totals.lost_writes),
        static_cast<unsigned long long>(totals.half_applied),
        static_cast<unsigned long long>(totals.failing_verify), watch.seconds());
    std::fflush(stdout);
    for (size_t i = 0; i < errors.size() && i < 5; ++i) ADD_FAILURE() << errors[i];
    EXPECT_EQ(totals.failed, 0u);
    if (totals.failed == 0) {
      EXPECT_GE(totals.kills, min_kills)
          << runs << " runs, " << totals.completed
          << " finished before their kill: the kill times do not follow the child";
      EXPECT_GE(totals.during_resize, min_during_resize)
          << runs << " runs: too few kills landed during a resize for this test to say anything "
          << "about them";
    }
    return totals;
  }

  testutil::TempPool base_{"sigkill-base"};
  testutil::TempPool work_{"sigkill-work"};
  std::vector<Step> steps_;
};

TEST_F(SigkillCrash, RandomKillsDuringLongBatchesLoseNoAcknowledgedBatch) {
  WorkloadParams params;
  params.total_ops = 60000;
  params.batch = 4096;
  params.seed = CrashSeed(77);
  Prepare(params, /*expected_keys=*/128);
  ASSERT_FALSE(HasFatalFailure());
  KillRepeatedly(Scaled(200), /*min_during_resize=*/0, params.seed, /*aim_at_resizes=*/false,
                 "sigkill during long batches");
}

TEST_F(SigkillCrash, RandomKillsDuringLoggedBatchesLoseNoAcknowledgedBatch) {
  // The workload's two tables logged (M = 4 batches of 256): batches of 1024
  // appended to the log, checkpoints when it is full, batches larger than
  // the log of the value-cell table written as its image.
  WorkloadParams params;
  params.total_ops = 30000;
  params.batch = 1024;
  params.seed = CrashSeed(79);
  Prepare(params, /*expected_keys=*/128, /*log_batches=*/4);
  ASSERT_FALSE(HasFatalFailure());
  KillRepeatedly(Scaled(60), /*min_during_resize=*/0, params.seed, /*aim_at_resizes=*/false,
                 "sigkill during logged batches");
}

TEST_F(SigkillCrash, RandomKillsDuringResizeLoseNoAcknowledgedBatch) {
  // Few, large put batches into tables made for 32 keys: each table doubles
  // about ten times, and a third of the run's persist points are inside a
  // resize.
  WorkloadParams params;
  params.total_ops = 40000;
  params.batch = 10000;
  params.seed = CrashSeed(78);
  Prepare(params, /*expected_keys=*/32);
  ASSERT_FALSE(HasFatalFailure());
  const uint64_t kills = Scaled(200);
  KillRepeatedly(kills, /*min_during_resize=*/kills / 2, params.seed, /*aim_at_resizes=*/true,
                 "sigkill during resize");
}

}  // namespace
}  // namespace gpkv::crashtest
