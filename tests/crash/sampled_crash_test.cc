// Crash injection sampled over a large workload (the exhaustive test,
// persist_point_crash_test.cc, covers every point of a small one).
//
// The workload (crash_workload.h): 20,000 operations in batches of 256 on a
// table with inline values and one with 100-byte value cells, both resized
// several times, with updates, erases, reinserts and create / drop of scratch
// tables. A counting run finds its persist points; then, for crash points
// drawn at random (seeded), a child runs the workload from a copy of the
// prepared pool and stops at that point, as a power failure (unpersisted words
// dropped at random) or as a process kill. The parent reopens the pool and
// checks it (crash_workload.h: CheckAfterCrash). A third test crashes the
// recovery of a crashed pool at a random persist point of the reopen, then
// reopens and checks again.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "crash_child.h"
#include "crash_workload.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::crashtest {
namespace {

constexpr uint64_t kPoolSize = 8 << 20;

struct Totals {
  uint64_t states = 0;  // crash states checked
  uint64_t completed = 0;
  uint64_t lost_writes = 0;
  uint64_t half_applied = 0;
  uint64_t phantom_pairs = 0;
  uint64_t failing_verify = 0;
  uint64_t failed_states = 0;
  std::vector<std::string> first_errors;

  void Add(const CheckResult& result, const std::string& where) {
    ++states;
    lost_writes += result.lost_writes;
    half_applied += result.half_applied;
    phantom_pairs += result.phantom_pairs;
    if (result.verify_failed) ++failing_verify;
    if (!result.ok()) {
      ++failed_states;
      if (first_errors.size() < 5) first_errors.push_back(where + ": " + result.first_error);
    }
  }

  void Print(const char* label, const std::string& extra) const {
    std::printf(
        "[crash totals] %s: %llu crash states checked%s, %llu acknowledged writes lost, %llu "
        "in-flight ops half-applied, %llu phantom pairs, %llu pools failing verify, %llu states "
        "failing a check\n",
        label, static_cast<unsigned long long>(states), extra.c_str(),
        static_cast<unsigned long long>(lost_writes), static_cast<unsigned long long>(half_applied),
        static_cast<unsigned long long>(phantom_pairs),
        static_cast<unsigned long long>(failing_verify),
        static_cast<unsigned long long>(failed_states));
    std::fflush(stdout);
  }

  void ExpectClean() const {
    for (const std::string& error : first_errors) ADD_FAILURE() << error;
    EXPECT_EQ(failed_states, 0u);
  }
};

class SampledCrash : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // No OpenMP team in the parent: libgomp's thread pool does not survive
    // fork (the children run one worker per batch, inline).
    omp_set_num_threads(1);
    base_ = new testutil::TempPool("sampled-base");
    WorkloadParams params;
    params.seed = CrashSeed(20240611);
    steps_ = new std::vector<Step>(BuildWorkload(params));
    Options options = ChildOptions();
    options.create_if_missing = true;
    options.pool_size = kPoolSize;
    {
      auto db = DB::Open(base_->path(), options);
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      for (const auto& [name, table_options] : InitialTables()) {
        ASSERT_TRUE((*db)->CreateTable(name, table_options).ok());
      }
    }
    // The counting run: persist points of the whole workload.
    testutil::TempPool work("sampled-count");
    std::filesystem::copy_file(base_->path(), work.path());
    ChildPlan plan;
    plan.path = work.path();
    plan.steps = steps_;
    counting_ = new ChildOutcome(RunInChild(plan));
    ASSERT_TRUE(counting_->completed()) << "counting run exit " << counting_->exit_code;
    ASSERT_EQ(counting_->acknowledged, steps_->size());
    CheckResult full = CheckAfterCrash(work.path(), *steps_, steps_->size(), ChildOptions());
    ASSERT_TRUE(full.ok()) << "after the whole workload without a crash: " << full.first_error;
    std::printf("workload: %zu steps, %llu persist points (open %llu)\n", steps_->size(),
                static_cast<unsigned long long>(counting_->total_points),
                static_cast<unsigned long long>(counting_->points_after_open));
  }

  static void TearDownTestSuite() {
    delete counting_;
    delete steps_;
    delete base_;
    counting_ = nullptr;
    steps_ = nullptr;
    base_ = nullptr;
  }

  void SetUp() override {
    if (counting_ == nullptr || !counting_->completed()) GTEST_SKIP() << "no counting run";
  }

  void FreshCopy() {
    std::filesystem::copy_file(base_->path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }

  // One crash of the workload at persist point `point`; returns the outcome.
  ChildOutcome CrashWorkload(CrashMode mode, uint64_t point, uint64_t seed) {
    FreshCopy();
    ChildPlan plan;
    plan.path = work_.path();
    plan.mode = mode;
    plan.crash_at = point;
    plan.seed = seed;
    plan.steps = steps_;
    return RunInChild(plan);
  }

  void RunSampled(CrashMode mode, uint64_t samples, const char* label) {
    std::mt19937_64 random(CrashSeed(20240611) ^ static_cast<uint64_t>(mode));
    Totals totals;
    Stopwatch watch;
    const uint64_t points = counting_->total_points;
    for (uint64_t i = 0; i < samples; ++i) {
      uint64_t point = random() % points;
      uint64_t seed = random();
      ChildOutcome outcome = CrashWorkload(mode, point, seed);
      ASSERT_TRUE(outcome.crashed() || outcome.completed())
          << label << " at persist point " << point << ": child exit " << outcome.exit_code;
      if (outcome.completed()) ++totals.completed;
      totals.Add(CheckAfterCrash(work_.path(), *steps_, outcome.acknowledged, ChildOptions()),
                 std::string(label) + " at persist point " + std::to_string(point) + " (seed " +
                     std::to_string(seed) + ", " + std::to_string(outcome.acknowledged) +
                     " steps acknowledged)");
      if (totals.failed_states >= 5) break;
    }
    char extra[160];
    std::snprintf(extra, sizeof(extra), " (sampled from %llu persist points of %zu steps, %.0f s)",
                  static_cast<unsigned long long>(points), steps_->size(), watch.seconds());
    totals.Print(label, extra);
    totals.ExpectClean();
  }

  static testutil::TempPool* base_;
  static std::vector<Step>* steps_;
  static ChildOutcome* counting_;
  testutil::TempPool work_{"sampled-work"};
};

testutil::TempPool* SampledCrash::base_ = nullptr;
std::vector<Step>* SampledCrash::steps_ = nullptr;
ChildOutcome* SampledCrash::counting_ = nullptr;

TEST_F(SampledCrash, PowerFailureAtRandomPersistPointsLosesNoAcknowledgedWrite) {
  RunSampled(CrashMode::kPowerFailure, Scaled(4500), "sampled power failure");
}

TEST_F(SampledCrash, ProcessKillAtRandomPersistPointsLosesNoAcknowledgedWrite) {
  RunSampled(CrashMode::kProcessKill, Scaled(3200), "sampled process kill");
}

// Crash once, then crash the reopen (recovery) at one of its persist points,
// then reopen and check against the first crash's acknowledged steps.
TEST_F(SampledCrash, CrashDuringRecoveryThenRecoverAgain) {
  std::mt19937_64 random(CrashSeed(20240611) ^ 0xdc);
  testutil::TempPool count_copy("sampled-recovery-count");
  Totals totals;
  Stopwatch watch;
  uint64_t recoveries_with_work = 0, recovery_points = 0, resizing_at_crash = 0;
  const uint64_t samples = Scaled(1000);
  for (uint64_t i = 0; i < samples; ++i) {
    CrashMode first_mode = (i % 2 == 0) ? CrashMode::kPowerFailure : CrashMode::kProcessKill;
    uint64_t point = random() % counting_->total_points;
    uint64_t seed = random();
    ChildOutcome first = CrashWorkload(first_mode, point, seed);
    ASSERT_TRUE(first.crashed() || first.completed()) << "child exit " << first.exit_code;
    if (!first.crashed()) continue;
    auto before = recovery::VerifyPool(work_.path(), nullptr);
    ASSERT_TRUE(before.ok()) << before.status().ToString();
    for (const recovery::TableReport& table : before->tables) {
      if (table.resizing) {
        ++resizing_at_crash;
        break;
      }
    }
    // How many persist points does recovering this pool take?
    std::filesystem::copy_file(work_.path(), count_copy.path(),
                               std::filesystem::copy_options::overwrite_existing);
    ChildPlan count_plan;
    count_plan.path = count_copy.path();
    ChildOutcome counted = RunInChild(count_plan);
    ASSERT_TRUE(counted.completed()) << "recovery after the first crash: exit " << counted.exit_code
                                     << " (first crash at " << point << ")";
    std::string where = "first crash at persist point " + std::to_string(point) + " (seed " +
                        std::to_string(seed) + ")";
    if (counted.points_after_open > 0) {
      ++recoveries_with_work;
      recovery_points += counted.points_after_open;
      ChildPlan second;
      second.path = work_.path();
      second.mode = (i % 4 < 2) ? CrashMode::kPowerFailure : CrashMode::kProcessKill;
      second.crash_at = random() % counted.points_after_open;
      second.seed = random();
      ChildOutcome crashed_recovery = RunInChild(second);
      ASSERT_TRUE(crashed_recovery.crashed()) << where << ", recovery crash at " << second.crash_at
                                              << ": exit " << crashed_recovery.exit_code;
      where += ", recovery crashed at its persist point " + std::to_string(second.crash_at) +
               " of " + std::to_string(counted.points_after_open);
    }
    totals.Add(CheckAfterCrash(work_.path(), *steps_, first.acknowledged, ChildOptions()), where);
    if (totals.failed_states >= 5) break;
  }
  char extra[200];
  std::snprintf(extra, sizeof(extra),
                " (%llu recoveries crashed at a random point of %llu on average; %llu first "
                "crashes during a resize; %.0f s)",
                static_cast<unsigned long long>(recoveries_with_work),
                static_cast<unsigned long long>(
                    recoveries_with_work ? recovery_points / recoveries_with_work : 0),
                static_cast<unsigned long long>(resizing_at_crash), watch.seconds());
  totals.Print("crash during recovery", extra);
  totals.ExpectClean();
  EXPECT_GT(recoveries_with_work, 0u) << "no recovery had work to crash in";
}

// The check itself must catch what it is there to catch: a lost write, a
// half-applied operation of the step in flight, and a pair no step wrote.
TEST_F(SampledCrash, CheckAfterCrashCatchesLostHalfAppliedAndPhantomPairs) {
  FreshCopy();
  ChildPlan plan;
  plan.path = work_.path();
  plan.steps = steps_;
  ASSERT_TRUE(RunInChild(plan).completed());
  const size_t all = steps_->size();
  ASSERT_TRUE(CheckAfterCrash(work_.path(), *steps_, all, ChildOptions()).ok());
  // The last put step on the inline table, and a key it wrote.
  size_t last_put = all;
  for (size_t i = all; i-- > 0;) {
    if ((*steps_)[i].kind == Step::Kind::kPut && (*steps_)[i].table == kInlineTable) {
      last_put = i;
      break;
    }
  }
  ASSERT_LT(last_put, all);
  uint64_t key = (*steps_)[last_put].keys.back();
  testutil::TempPool saved("sampled-self-test");
  std::filesystem::copy_file(work_.path(), saved.path());
  auto tamper = [&](const std::function<void(Table&)>& change) {
    std::filesystem::copy_file(saved.path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
    auto db = DB::Open(work_.path(), ChildOptions());
    ASSERT_TRUE(db.ok());
    auto table = (*db)->OpenTable(kInlineTable);
    ASSERT_TRUE(table.ok());
    change(**table);
  };
  std::vector<uint64_t> keys = {key}, wrong = {0x0123456789abcdefULL};

  tamper([&](Table& table) { ASSERT_TRUE(table.Erase(keys).ok()); });
  CheckResult lost = CheckAfterCrash(work_.path(), *steps_, all, ChildOptions());
  EXPECT_EQ(lost.lost_writes, 1u) << lost.first_error;

  tamper([&](Table& table) { ASSERT_TRUE(table.Put(keys, wrong).ok()); });
  // As if every step after last_put were in flight or not yet run: the key
  // is written by the step in flight, and holds neither value.
  CheckResult half = CheckAfterCrash(work_.path(), *steps_, last_put, ChildOptions());
  EXPECT_GE(half.half_applied, 1u) << half.first_error;

  std::vector<uint64_t> stranger = {0xfeedfacecafebeefULL};
  tamper([&](Table& table) { ASSERT_TRUE(table.Put(stranger, wrong).ok()); });
  CheckResult phantom = CheckAfterCrash(work_.path(), *steps_, all, ChildOptions());
  EXPECT_EQ(phantom.phantom_pairs, 1u) << phantom.first_error;
  EXPECT_FALSE(phantom.ok());
}

}  // namespace
}  // namespace gpkv::crashtest
