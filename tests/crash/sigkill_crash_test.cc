// Process kills at random times: a child runs long batches (thousands of
// operations, two worker threads per batch) and is sent SIGKILL; the parent
// reopens the pool and checks every acknowledged batch and that each
// operation of the batch in flight is applied or absent (crash_workload.h:
// CheckAfterCrash).
//
// Kill times follow the child's own progress, so that the machine's load
// changes neither where the kills land nor how many runs finish before their
// kill: a reference run without a kill records when each step ends and when
// each resize starts and finishes (the child stamps each record with the
// time it sent it, and watches the publish of a table's LevelSet for
// resizes). A kill is planned in that timeline as a record and a delay after
// it. The child itself arms a kernel timer that sends it SIGKILL when it
// sends that record, with the delay scaled by how long it took to get there
// against the reference run (ChildPlan::KillTimer): a loaded machine slows
// the child and the timer alike, and the parent's wake-ups, late by more
// than a resize lasts on a loaded machine, are out of the path. The first
// test picks a step at random and kills at a random moment of it; the second
// picks a moment at random of the time spent resizing and requires that a
// quarter of the kills find the pool resizing (a LevelSet with the resizing
// flag, read before the reopen finishes the resize). Both run until they
// have their kills (runs that finish first are checked too, and counted as
// crash states); the verdict is the check of every run's pool.
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

  // A child and the records it sends, each with the time the child sent it
  // (seconds since the fork).
  struct Run {
    pid_t pid = -1;
    int fd = -1;
    int64_t started_ns = detail::SteadyNanos();
    size_t acknowledged = 0;
    double kill_scale = 0;  // from the kKillArmed record; 0 when the child never armed it

    // Reads one record; false at the end of the stream.
    bool Next(detail::Record* record, double* seconds) {
      if (read(fd, record, sizeof(*record)) != sizeof(*record)) return false;
      *seconds = 1e-9 * static_cast<double>(record->sent_ns - started_ns);
      if (record->type == detail::kAcknowledged) acknowledged = record->step + 1;
      if (record->type == detail::kKillArmed)
        kill_scale = 1e-3 * static_cast<double>(record->points);
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

  // When things happen in the reference run (no kill): the end of each step
  // and each resize, in seconds since the fork.
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

  // A kill planned in the reference run's time (ChildPlan::KillTimer): a
  // random moment of a random step, or (aim_at_resizes) of the time spent
  // resizing.
  ChildPlan::KillTimer PlanKill(const Timeline& timeline, bool aim_at_resizes,
                                std::mt19937_64& random) {
    auto uniform = [&](double span) {
      return std::uniform_real_distribution<double>(0.0, std::max(span, 1e-6))(random);
    };
    auto kill = [](uint32_t type, uint64_t count, double at, double delay) {
      ChildPlan::KillTimer timer;
      timer.armed = true;
      timer.after_type = type;
      timer.after_count = count;
      timer.reference_at = at;
      timer.delay = delay;
      return timer;
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
          return kill(detail::kResizeStarted, r + 1, timeline.resizes[r].first,
                      std::min(at, length));
        }
        at -= length;
      }
    }
    size_t step = random() % timeline.step_end.size();
    double begin = step == 0 ? timeline.opened : timeline.step_end[step - 1];
    double delay = uniform(timeline.step_end[step] - begin);
    if (step == 0) return kill(detail::kOpened, 1, begin, delay);
    return kill(detail::kAcknowledged, step, begin, delay);
  }

  // Kills children until `min_kills` runs were killed and (aim_at_resizes)
  // `min_during_resize` of the kills found a table resizing; every run, killed
  // or finished first, is a crash state checked. Since kill times follow the
  // child's progress, these counts do not depend on the machine's load; the
  // cap on runs only catches a timing that does not.
  KillTotals KillRepeatedly(uint64_t min_kills, uint64_t min_during_resize, uint64_t seed,
                            bool aim_at_resizes, const char* label) {
    KillTotals totals;
    Timeline timeline = Calibrate();
    if (HasFailure()) return totals;
    std::mt19937_64 random(seed);
    Stopwatch watch;
    std::vector<std::string> errors;
    std::vector<double> scales;
    const uint64_t max_runs = 2 * (min_kills + min_during_resize) + 20;
    uint64_t runs = 0;
    for (;
         runs < max_runs && (totals.kills < min_kills || totals.during_resize < min_during_resize);
         ++runs) {
      FreshCopy();
      ChildPlan plan = Plan();
      plan.kill = PlanKill(timeline, aim_at_resizes, random);
      Run run;
      plan.kill.started_ns = run.started_ns;
      run.pid = StartChild(plan, &run.fd);
      EXPECT_GT(run.pid, 0);
      if (run.pid <= 0) break;
      int exit_code = run.Finish();
      if (run.kill_scale > 0) scales.push_back(run.kill_scale);
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
                      "run %llu, %.4f s (x%.2f for the pace) after record %llu of type %u, "
                      "%zu steps acknowledged: ",
                      static_cast<unsigned long long>(runs), plan.kill.delay, run.kill_scale,
                      static_cast<unsigned long long>(plan.kill.after_count), plan.kill.after_type,
                      run.acknowledged);
        errors.push_back(where + result.first_error);
        if (totals.failed >= 5) break;
      }
    }
    double run_seconds = timeline.step_end.empty() ? 0 : timeline.step_end.back();
    std::sort(scales.begin(), scales.end());
    double median_scale = scales.empty() ? 1.0 : scales[scales.size() / 2];
    std::printf(
        "[crash totals] %s: %llu crash states checked (%llu SIGKILLs at random times in a run of "
        "%.3f s with %zu resizes, %llu of them during a resize; %llu runs finished first; kill "
        "delays scaled x%.2f for the child's pace (median)), %llu acknowledged writes lost, %llu "
        "in-flight ops half-applied, %llu pools failing verify (%.0f s)\n",
        label, static_cast<unsigned long long>(totals.kills + totals.completed),
        static_cast<unsigned long long>(totals.kills), run_seconds, timeline.resizes.size(),
        static_cast<unsigned long long>(totals.during_resize),
        static_cast<unsigned long long>(totals.completed), median_scale,
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

TEST_F(SigkillCrash, RandomKillsDuringResizeLoseNoAcknowledgedBatch) {
  // Few, large put batches into tables made for 32 keys: most of the run is
  // resizing (each table doubles about ten times).
  WorkloadParams params;
  params.total_ops = 40000;
  params.batch = 10000;
  params.seed = CrashSeed(78);
  Prepare(params, /*expected_keys=*/32);
  ASSERT_FALSE(HasFatalFailure());
  const uint64_t kills = Scaled(200);
  KillRepeatedly(kills, /*min_during_resize=*/kills / 4, params.seed, /*aim_at_resizes=*/true,
                 "sigkill during resize");
}

}  // namespace
}  // namespace gpkv::crashtest
