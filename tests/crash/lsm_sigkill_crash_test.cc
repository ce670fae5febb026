// SIGKILL of an ordered (LSM) table's writer in the middle of cascades and
// compactions: a child runs a seeded workload on two worker threads (small
// put batches that go to the log, batches that flush the write buffer and
// merge down up to seven levels, erase batches that push the dead share past
// the automatic compaction's bound, explicit Compact calls) and the kernel
// sends it SIGKILL; the parent reopens the pool and checks that every
// acknowledged step is there and that the step in flight is there whole or
// not at all (Scan equals the model before it or after it, never a mix);
// Get, Count and Stats agree with the Scan; verify finds no corruption
// before the reopen and nothing at all after it.
//
// Kills are placed in the child's work, not by the parent's clock, as in
// sigkill_crash_test.cc: reference runs (the fastest of three, so a reference
// slowed by other work on the machine does not push kills past their step)
// record each step's persist points and duration and whether it flushed or
// compacted. A kill picks a step, arms a kernel timer at the step's last
// persist point before it starts (ChildPlan::KillTimer's machinery), and
// fires a random fraction of the step's reference duration later. Under load
// the step runs slower and the kill lands earlier inside it. The first test
// draws steps by duration over the whole run (log appends, flushes,
// cascades); the second only compactions; the third runs the first's draw on
// a table whose log has two halves (M = 4), so kills land in checkpoints
// started, in flight and published. All require that a quarter of the kills
// land inside their step (about three quarters do). Verdicts are the checks
// of every killed pool.
#include <gtest/gtest.h>
#include <omp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "crash_child.h"
#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::crashtest {
namespace {

constexpr char kTable[] = "ordered";
constexpr uint32_t kValueSize = 16;
constexpr uint64_t kBatchEntries = 1024;  // b: level i holds 1024 * 2^i entries
constexpr uint64_t kPoolSize = 64 << 20;
constexpr int kWorkers = 2;

struct LsmStep {
  enum Kind : uint8_t { kPut, kErase, kCompact } kind = kPut;
  std::vector<uint64_t> keys;
  std::vector<uint8_t> values;  // kPut: keys.size() * kValueSize
};

using Model = std::map<uint64_t, std::string>;

void Apply(const LsmStep& step, Model& model) {
  for (size_t i = 0; i < step.keys.size(); ++i) {
    if (step.kind == LsmStep::kPut) {
      model[step.keys[i]] =
          std::string(reinterpret_cast<const char*>(&step.values[i * kValueSize]), kValueSize);
    } else if (step.kind == LsmStep::kErase) {
      model.erase(step.keys[i]);
    }
  }
}

// About 150k operations: a third of the put batches are smaller than b (the
// log), the others flush and cascade; a fifth of the steps erase live keys,
// and every 13th step compacts.
std::vector<LsmStep> BuildLsmWorkload(uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<LsmStep> steps;
  Model model;
  std::vector<uint64_t> live;  // keys once written (some erased since)
  while (steps.size() < 70) {
    LsmStep step;
    const uint32_t pick = random() % 100;
    if (steps.size() % 13 == 12) {
      step.kind = LsmStep::kCompact;
    } else if (pick < 20 && model.size() > 2000) {
      step.kind = LsmStep::kErase;
      const size_t count = model.size() / 3;
      for (size_t i = 0; i < count; ++i) step.keys.push_back(live[random() % live.size()]);
      step.keys.push_back(random());  // absent: erases nothing
    } else {
      step.kind = LsmStep::kPut;
      const uint64_t count = pick < 50 ? 100 + random() % 300 : 1500 + random() % 5000;
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t key;
        if (i > 0 && random() % 50 == 0) {
          key = step.keys[random() % step.keys.size()];  // twice in a batch: the last wins
        } else if (!live.empty() && random() % 4 == 0) {
          key = live[random() % live.size()];  // update, or reinsert of an erased key
        } else {
          key = random();
          live.push_back(key);
        }
        step.keys.push_back(key);
        const size_t at = step.values.size();
        step.values.resize(at + kValueSize);
        testutil::SplitMix64Fill(key ^ (steps.size() << 40) ^ i, &step.values[at], kValueSize);
      }
    }
    Apply(step, model);
    steps.push_back(std::move(step));
  }
  return steps;
}

Status RunLsmStep(Table& table, const LsmStep& step) {
  switch (step.kind) {
    case LsmStep::kPut:
      return table.Put(step.keys, step.values);
    case LsmStep::kErase:
      return table.Erase(step.keys);
    case LsmStep::kCompact:
      return table.Compact();
  }
  return Status::InvalidArgument("unknown step");
}

// The child's records, in a pipe.
struct StepRecord {
  enum Type : uint32_t { kStarted, kAcknowledged, kEnd } type;
  uint32_t step;
  uint64_t points;  // persist points passed since the open
  int64_t sent_ns;
  uint32_t flushed;    // calibration: the step wrote a run (flush, checkpoint or compaction)
  uint32_t compacted;  // calibration: the step compacted
};

void SendRecord(int fd, StepRecord record) {
  record.points = pm::TEST_PersistPointCount();
  record.sent_ns = detail::SteadyNanos();
  if (write(fd, &record, sizeof(record)) != sizeof(record)) _exit(13);
}

void KillHook(void*, const void*, size_t, uint64_t index) {
  if (detail::g_kill_timer.armed && index == detail::g_kill_timer.at_point) {
    detail::ArmKillTimer(detail::g_kill_timer.delay);
  }
}

Options LsmChildOptions(int threads) {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = threads;
  return options;
}

// Runs the workload; with `calibrate`, reads after each step whether it
// flushed or compacted (outside the step's timed interval).
[[noreturn]] void RunLsmChild(const std::string& path, const std::vector<LsmStep>& steps,
                              ChildPlan::KillTimer kill, bool calibrate, int fd) {
  detail::g_kill_timer = kill;
  pm::TEST_SetPersistHook(&KillHook, nullptr);
  auto db = DB::Open(path, LsmChildOptions(kWorkers));
  if (!db.ok()) _exit(10);
  auto table = (*db)->OpenTable(kTable);
  if (!table.ok()) _exit(11);
  double compactions = 0, applied = 0;
  for (uint32_t i = 0; i < steps.size(); ++i) {
    SendRecord(fd, {StepRecord::kStarted, i, 0, 0, 0, 0});
    if (!RunLsmStep(**table, steps[i]).ok()) _exit(12);
    StepRecord ack{StepRecord::kAcknowledged, i, 0, 0, 0, 0};
    SendRecord(fd, ack);
    if (calibrate) {
      // A step that moved the levels' last batch wrote a run: a flush, a
      // cascade, a checkpoint or a compaction.
      auto applied_now = (*table)->GetProperty("lsm.applied-seq");
      auto now = (*table)->GetProperty("lsm.compactions");
      if (!applied_now.ok() || !now.ok()) _exit(15);
      StepRecord facts{StepRecord::kEnd, i, 0, 0, *applied_now != applied, *now > compactions};
      compactions = *now;
      applied = *applied_now;
      SendRecord(fd, facts);  // kEnd with step i: facts of step i
    }
  }
  _exit(0);
}

// A step of the reference run.
struct StepTiming {
  uint64_t points_before = 0;  // persist points passed when the step started
  double seconds = 0;          // fastest of the reference runs
  bool flushed = false;
  bool compacted = false;
};

struct ChildRun {
  int exit_code = -1;
  size_t acknowledged = 0;
  std::vector<StepTiming> timings;
};

ChildRun RunChildProcess(const std::string& path, const std::vector<LsmStep>& steps,
                         ChildPlan::KillTimer kill, bool calibrate) {
  int fds[2];
  ChildRun run;
  if (pipe(fds) != 0) return run;
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    RunLsmChild(path, steps, kill, calibrate, fds[1]);
  }
  close(fds[1]);
  run.timings.resize(steps.size());
  std::vector<int64_t> started(steps.size(), 0);
  StepRecord record;
  while (read(fds[0], &record, sizeof(record)) == sizeof(record)) {
    if (record.step >= steps.size()) break;
    StepTiming& timing = run.timings[record.step];
    if (record.type == StepRecord::kStarted) {
      timing.points_before = record.points;
      started[record.step] = record.sent_ns;
    } else if (record.type == StepRecord::kAcknowledged) {
      run.acknowledged = record.step + 1;
      timing.seconds = 1e-9 * static_cast<double>(record.sent_ns - started[record.step]);
    } else {
      timing.flushed = record.flushed != 0;
      timing.compacted = record.compacted != 0;
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

struct LsmCheck {
  std::string first_error;
  bool lost = false;  // the acknowledged state is missing
  bool half = false;  // a mix of the state before and after the step in flight
  void Fail(const std::string& what) {
    if (first_error.empty()) first_error = what;
  }
};

// Reopens the killed pool and checks it against the workload with
// `acknowledged` steps acknowledged.
LsmCheck CheckKilledPool(const std::string& path, const std::vector<LsmStep>& steps,
                         size_t acknowledged) {
  LsmCheck check;
  auto crashed = recovery::VerifyPool(path, nullptr);
  if (!crashed.ok()) {
    check.Fail("verify before the reopen: " + crashed.status().ToString());
  } else if (crashed->HasCorruption()) {
    check.Fail("verify before the reopen finds corruption: " + crashed->findings[0].message);
  }
  Model before;
  for (size_t i = 0; i < acknowledged; ++i) Apply(steps[i], before);
  Model after = before;
  if (acknowledged < steps.size()) Apply(steps[acknowledged], after);
  {
    auto db = DB::Open(path, LsmChildOptions(1));
    if (!db.ok()) {
      check.Fail("open after the kill: " + db.status().ToString());
      return check;
    }
    auto table = (*db)->OpenTable(kTable);
    if (!table.ok()) {
      check.Fail("open table: " + table.status().ToString());
      return check;
    }
    Model found;
    Status scan = (*table)->Scan([&](const uint8_t* key, const uint8_t* value) {
      uint64_t k;
      std::memcpy(&k, key, 8);
      found[k] = std::string(reinterpret_cast<const char*>(value), kValueSize);
      return true;
    });
    if (!scan.ok()) check.Fail("scan: " + scan.ToString());
    if (found != before && found != after) {
      // Which: the acknowledged state lost, or a mix of before and after.
      bool has_before = true;
      for (const auto& [key, value] : before) {
        auto it = found.find(key);
        auto next = after.find(key);
        const bool as_before = it != found.end() && it->second == value;
        const bool as_after = next == after.end() ? it == found.end()
                                                  : it != found.end() && it->second == next->second;
        has_before &= as_before || as_after;
      }
      (has_before ? check.half : check.lost) = true;
      check.Fail("the table holds " + std::to_string(found.size()) + " pairs, neither the " +
                 std::to_string(before.size()) + " before the step in flight nor the " +
                 std::to_string(after.size()) + " after it" +
                 (has_before ? " (a half batch)" : " (acknowledged writes lost)"));
    }
    // Get, Count and Stats see what Scan sees.
    std::vector<uint64_t> keys;
    for (const auto& pair : after) keys.push_back(pair.first);
    for (const auto& pair : before) keys.push_back(pair.first);
    std::vector<uint8_t> values(keys.size() * kValueSize), present(keys.size());
    if (!(*table)->Get(keys, values, present).ok()) check.Fail("get failed");
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = found.find(keys[i]);
      const bool agrees =
          present[i] ? it != found.end() &&
                           std::memcmp(it->second.data(), &values[i * kValueSize], kValueSize) == 0
                     : it == found.end();
      if (!agrees) {
        check.Fail("Get of key " + std::to_string(keys[i]) + " disagrees with Scan");
        break;
      }
    }
    const uint64_t lo = 0, hi = ~uint64_t{0};
    uint64_t counted = 0;
    if (!(*table)->Count(ConstBytes(&lo, 8), ConstBytes(&hi, 8), MutableBytes(&counted, 8)).ok() ||
        counted != found.size()) {
      check.Fail("Count of all keys is " + std::to_string(counted) + ", Scan visits " +
                 std::to_string(found.size()));
    }
    auto stats = (*table)->Stats();
    if (!stats.ok() || stats->keys != found.size()) check.Fail("Stats().keys disagrees with Scan");
  }
  auto report = recovery::VerifyPool(path, nullptr);
  if (!report.ok()) {
    check.Fail("verify after recovery: " + report.status().ToString());
  } else if (!report->findings.empty()) {
    check.Fail("verify after recovery: " + report->findings[0].message);
  }
  return check;
}

class LsmSigkillCrash : public ::testing::Test {
 protected:
  // The parent runs no OpenMP team: libgomp's pool does not survive fork.
  void SetUp() override {
    omp_set_num_threads(1);
    seed_ = CrashSeed(131);
    steps_ = BuildLsmWorkload(seed_);
    Options options = LsmChildOptions(1);
    options.create_if_missing = true;
    options.pool_size = kPoolSize;
    auto db = DB::Open(base_.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.kind = TableKind::kOrdered;
    table_options.value_size = kValueSize;
    table_options.ordered.batch_entries = kBatchEntries;
    table_options.ordered.max_dead_percent = 30;
    table_options.ordered.log_batches = log_batches_;
    ASSERT_TRUE((*db)->CreateTable(kTable, table_options).ok());
  }

  uint32_t log_batches_ = 1;  // M

  void FreshCopy() {
    std::filesystem::copy_file(base_.path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }

  // Three reference runs: each step's persist points (the same in every run)
  // and its fastest duration.
  std::vector<StepTiming> Calibrate() {
    std::vector<StepTiming> timings;
    for (int round = 0; round < 3; ++round) {
      FreshCopy();
      ChildRun run = RunChildProcess(work_.path(), steps_, {}, /*calibrate=*/true);
      EXPECT_EQ(run.exit_code, 0) << "reference run";
      EXPECT_EQ(run.acknowledged, steps_.size());
      if (round == 0) {
        timings = run.timings;
        continue;
      }
      for (size_t i = 0; i < steps_.size(); ++i) {
        EXPECT_EQ(run.timings[i].points_before, timings[i].points_before) << "step " << i;
        timings[i].seconds = std::min(timings[i].seconds, run.timings[i].seconds);
      }
    }
    return timings;
  }

  // Kills `min_kills` children at steps drawn (by reference duration) from
  // those `eligible` admits; each killed pool is checked.
  template <typename Eligible>
  void KillRepeatedly(uint64_t min_kills, const Eligible& eligible, const char* label) {
    std::vector<StepTiming> timings = Calibrate();
    if (HasFailure()) return;
    uint64_t flushes = 0, compactions = 0;
    std::vector<double> weights(steps_.size(), 0.0);
    double reference_seconds = 0;
    for (size_t i = 1; i < steps_.size(); ++i) {
      flushes += timings[i].flushed;
      compactions += timings[i].compacted;
      reference_seconds += timings[i].seconds;
      if (eligible(steps_[i], timings[i])) weights[i] = timings[i].seconds;
    }
    ASSERT_GE(flushes, 20u) << "the workload must flush and cascade";
    ASSERT_GE(compactions, 6u) << "the workload must compact on its own and when asked";
    std::discrete_distribution<size_t> pick_step(weights.begin(), weights.end());
    std::mt19937_64 random(seed_ ^ std::hash<std::string>()(label));
    Stopwatch watch;
    uint64_t kills = 0, completed = 0, inside = 0, failed = 0, lost = 0, half = 0;
    std::vector<std::string> errors;
    for (uint64_t runs = 0; runs < 2 * min_kills + 10 && kills < min_kills; ++runs) {
      const size_t target = pick_step(random);
      ChildPlan::KillTimer kill;
      kill.armed = true;
      kill.at_point = timings[target].points_before - 1;  // the last point before the step
      kill.delay =
          std::uniform_real_distribution<double>(0.0, 1.0)(random) * timings[target].seconds;
      FreshCopy();
      ChildRun run = RunChildProcess(work_.path(), steps_, kill, /*calibrate=*/false);
      if (run.exit_code == 0) {
        ++completed;
      } else if (run.exit_code == 128 + SIGKILL) {
        ++kills;
        inside += run.acknowledged == target;
      } else {
        ADD_FAILURE() << label << ": child exit " << run.exit_code;
        break;
      }
      LsmCheck check = CheckKilledPool(work_.path(), steps_, run.acknowledged);
      lost += check.lost;
      half += check.half;
      if (!check.first_error.empty()) {
        ++failed;
        errors.push_back("kill aimed " + std::to_string(1e6 * kill.delay) + " us into step " +
                         std::to_string(target) + ", " + std::to_string(run.acknowledged) +
                         " steps acknowledged: " + check.first_error);
        if (failed >= 5) break;
      }
    }
    std::printf(
        "[crash totals] lsm %s: %llu crash states checked (%llu SIGKILLs, %llu inside their aimed "
        "step, in a run of %zu steps, %.3f s, %llu flushes, %llu compactions; %llu runs finished "
        "first), %llu acknowledged writes lost, %llu half batches, %llu pools failing a check "
        "(%.0f s, seed %llu)\n",
        label, static_cast<unsigned long long>(kills + completed),
        static_cast<unsigned long long>(kills), static_cast<unsigned long long>(inside),
        steps_.size(), reference_seconds, static_cast<unsigned long long>(flushes),
        static_cast<unsigned long long>(compactions), static_cast<unsigned long long>(completed),
        static_cast<unsigned long long>(lost), static_cast<unsigned long long>(half),
        static_cast<unsigned long long>(failed), watch.seconds(),
        static_cast<unsigned long long>(seed_));
    std::fflush(stdout);
    for (const std::string& error : errors) ADD_FAILURE() << label << ": " << error;
    EXPECT_EQ(failed, 0u);
    if (failed == 0) {
      EXPECT_GE(kills, min_kills) << "the kill times do not follow the child";
      // A kill lands past its step only when the child runs faster than the
      // fastest reference run (by 2x for half of them): a quarter inside
      // leaves room for that, and still says the kills follow the work.
      EXPECT_GE(4 * inside, kills) << "too few kills landed inside the step they aimed at";
    }
  }

  testutil::TempPool base_{"lsm-sigkill-base"};
  testutil::TempPool work_{"lsm-sigkill-work"};
  uint64_t seed_ = 0;
  std::vector<LsmStep> steps_;
};

TEST_F(LsmSigkillCrash, KillsDuringLogAppendsFlushesAndCascadesLeaveWholeBatches) {
  KillRepeatedly(
      Scaled(80),
      [](const LsmStep& step, const StepTiming&) { return step.kind != LsmStep::kCompact; },
      "sigkill during puts and cascades");
}

// M = 4: a log of two halves of < 4 b entries, so the workload's larger
// batches start checkpoints behind the next ones and publish them later.
class LsmSigkillCrashCheckpoints : public LsmSigkillCrash {
 protected:
  LsmSigkillCrashCheckpoints() { log_batches_ = 4; }
};

TEST_F(LsmSigkillCrashCheckpoints, KillsDuringCheckpointsLeaveWholeBatches) {
  KillRepeatedly(
      Scaled(40),
      [](const LsmStep& step, const StepTiming&) { return step.kind != LsmStep::kCompact; },
      "sigkill during puts and checkpoints (M = 4)");
}

TEST_F(LsmSigkillCrash, KillsDuringCompactionLeaveWholeBatches) {
  KillRepeatedly(
      Scaled(50), [](const LsmStep&, const StepTiming& timing) { return timing.compacted; },
      "sigkill during compaction");
}

}  // namespace
}  // namespace gpkv::crashtest
