// Process kills at random times: a child runs long batches (thousands of
// operations, two worker threads per batch) and is sent SIGKILL; the parent
// reopens the pool and checks every acknowledged batch and that each
// operation of the batch in flight is applied or absent (crash_workload.h:
// CheckAfterCrash).
//
// Kill times are relative to what the child reports, so that load on the
// machine does not make the runs end before the kill: a calibration run
// records when each step ends and when each resize starts and finishes (the
// child watches the publish of a table's LevelSet). The first test picks a
// step at random and kills at a random moment of it; the second picks a
// resize at random and kills at a random moment of it, and requires that many
// kills (a fifth; timing on a loaded machine is not exact) find the pool resizing (a LevelSet with
// the resizing flag, read before the reopen finishes the resize).
#include <gtest/gtest.h>
#include <omp.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "crash_child.h"
#include "crash_workload.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::crashtest {
namespace {

constexpr uint64_t kPoolSize = 64 << 20;
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

  void Prepare(const WorkloadParams& params, uint64_t expected_keys) {
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

  // A child whose records are read with the time they arrive.
  struct Run {
    pid_t pid = -1;
    int fd = -1;
    Stopwatch clock;
    size_t acknowledged = 0;
    uint64_t resizes_started = 0;
    bool ended = false;

    // Reads one record; false at the end of the stream.
    bool Next(detail::Record* record, double* seconds) {
      if (read(fd, record, sizeof(*record)) != sizeof(*record)) return false;
      *seconds = clock.seconds();
      if (record->type == detail::kAcknowledged) acknowledged = record->step + 1;
      if (record->type == detail::kResizeStarted) ++resizes_started;
      if (record->type == detail::kEnd) ended = true;
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

  // When things happen in a run without a kill: the end of each step and
  // each resize, in seconds since the fork.
  struct Timeline {
    double opened = 0;
    std::vector<double> step_end;
    std::vector<std::pair<double, double>> resizes;  // start, finish
  };

  Timeline Calibrate() {
    FreshCopy();
    Timeline timeline;
    Run run;
    run.pid = StartChild(Plan(), &run.fd);
    EXPECT_GT(run.pid, 0);
    detail::Record record;
    double seconds;
    while (run.Next(&record, &seconds)) {
      if (record.type == detail::kOpened) timeline.opened = seconds;
      if (record.type == detail::kAcknowledged) timeline.step_end.push_back(seconds);
      if (record.type == detail::kResizeStarted) timeline.resizes.push_back({seconds, seconds});
      if (record.type == detail::kResizeFinished && !timeline.resizes.empty()) {
        timeline.resizes.back().second = seconds;
      }
    }
    EXPECT_EQ(run.Finish(), 0) << "calibration run";
    EXPECT_EQ(run.acknowledged, steps_.size());
    return timeline;
  }

  // Where a kill goes: after the record `trigger_type` has been seen
  // `trigger_count` times, wait `delay` seconds.
  struct KillPlan {
    uint32_t trigger_type;
    uint64_t trigger_count;
    double delay;
  };

  KillPlan PlanKill(const Timeline& timeline, bool aim_at_resizes, std::mt19937_64& random) {
    auto uniform = [&](double span) {
      return std::uniform_real_distribution<double>(0.0, std::max(span, 1e-6))(random);
    };
    if (aim_at_resizes && !timeline.resizes.empty()) {
      // A moment drawn uniformly over the time spent resizing: the resize it
      // falls in, weighted by its duration, then the offset into it.
      double total = 0;
      for (const auto& window : timeline.resizes) total += window.second - window.first;
      double at = uniform(total);
      for (size_t r = 0; r < timeline.resizes.size(); ++r) {
        double length = timeline.resizes[r].second - timeline.resizes[r].first;
        if (at <= length || r + 1 == timeline.resizes.size()) {
          // The wake-up and the signal take time too: aim a little early.
          return KillPlan{detail::kResizeStarted, r + 1, 0.8 * std::min(at, length)};
        }
        at -= length;
      }
    }
    size_t step = random() % timeline.step_end.size();
    double begin = step == 0 ? timeline.opened : timeline.step_end[step - 1];
    if (step == 0) return KillPlan{detail::kOpened, 1, uniform(timeline.step_end[0] - begin)};
    return KillPlan{detail::kAcknowledged, step, uniform(timeline.step_end[step] - begin)};
  }

  KillTotals KillRepeatedly(uint64_t iterations, uint64_t seed, bool aim_at_resizes,
                            const char* label) {
    KillTotals totals;
    Timeline timeline = Calibrate();
    if (HasFailure()) return totals;
    std::mt19937_64 random(seed);
    Stopwatch watch;
    std::vector<std::string> errors;
    for (uint64_t i = 0; i < iterations; ++i) {
      FreshCopy();
      KillPlan kill_plan = PlanKill(timeline, aim_at_resizes, random);
      Run run;
      run.pid = StartChild(Plan(), &run.fd);
      EXPECT_GT(run.pid, 0);
      if (run.pid <= 0) break;
      detail::Record record;
      double seconds;
      uint64_t seen = 0;
      while (seen < kill_plan.trigger_count && run.Next(&record, &seconds)) {
        if (record.type == kill_plan.trigger_type) ++seen;
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(kill_plan.delay));
      kill(run.pid, SIGKILL);
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
        char where[160];
        std::snprintf(where, sizeof(where),
                      "kill %llu, %.4f s after a record of type %u, %zu "
                      "steps acknowledged: ",
                      static_cast<unsigned long long>(i), kill_plan.delay, kill_plan.trigger_type,
                      run.acknowledged);
        errors.push_back(where + result.first_error);
        if (totals.failed >= 5) break;
      }
    }
    double run_seconds = timeline.step_end.empty() ? 0 : timeline.step_end.back();
    std::printf(
        "[crash totals] %s: %llu crash states checked (%llu SIGKILLs at random times in a run of "
        "%.2f s with %zu resizes, %llu of them during a resize; %llu runs finished first), %llu "
        "acknowledged writes lost, %llu in-flight ops half-applied, %llu pools failing verify "
        "(%.0f s)\n",
        label, static_cast<unsigned long long>(totals.kills + totals.completed),
        static_cast<unsigned long long>(totals.kills), run_seconds, timeline.resizes.size(),
        static_cast<unsigned long long>(totals.during_resize),
        static_cast<unsigned long long>(totals.completed),
        static_cast<unsigned long long>(totals.lost_writes),
        static_cast<unsigned long long>(totals.half_applied),
        static_cast<unsigned long long>(totals.failing_verify), watch.seconds());
    std::fflush(stdout);
    for (size_t i = 0; i < errors.size() && i < 5; ++i) ADD_FAILURE() << errors[i];
    EXPECT_EQ(totals.failed, 0u);
    EXPECT_GT(totals.kills, iterations / 2) << "most runs should have been killed";
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
  KillRepeatedly(Scaled(200), params.seed, /*aim_at_resizes=*/false, "sigkill during long batches");
}

TEST_F(SigkillCrash, RandomKillsDuringResizeLoseNoAcknowledgedBatch) {
  // Few, large put batches into tables made for 32 keys: most of the run is
  // resizing (each table doubles about ten times).
  WorkloadParams params;
  params.total_ops = 40000;
  params.batch = 10000;
  params.seed = CrashSeed(78);
  Prepare(params, /*expected_keys=*/32);
  ASSERT_FALSE(HasFatalFailure());
  uint64_t iterations = Scaled(200);
  KillTotals totals =
      KillRepeatedly(iterations, params.seed, /*aim_at_resizes=*/true, "sigkill during resize");
  EXPECT_GE(totals.during_resize, iterations / 5)
      << "too few kills landed during a resize for this test to say anything about them";
}

}  // namespace
}  // namespace gpkv::crashtest
