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

#include <optional>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "persist_point_harness.h"
#include "whole_batch_check.h"

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

void Apply(const Step& step, testutil::PairModel& model) {
  for (size_t i = 0; i < step.keys.size(); ++i) {
    if (step.kind == Step::kPut) model[step.keys[i]] = step.values[i];
    if (step.kind == Step::kErase) model.erase(step.keys[i]);
  }
}

using testutil::ChildResult;
using testutil::CrashKind;

// Child: run the steps, acknowledging each.
ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill) {
  return testutil::RunStepsInChild(path, kTable, crash_at, kind, /*seed_salt=*/3, Workload(),
                                   [](Table& table, const Step& step) {
                                     return step.kind == Step::kPut
                                                ? table.Put(step.keys, step.values)
                                            : step.kind == Step::kErase ? table.Erase(step.keys)
                                                                        : table.Compact();
                                   });
}

// Besides whole batches: the table's key count is what it holds.
void CheckAfterCrash(const std::string& path, int acknowledged, const std::string& where) {
  testutil::ExpectWholeBatchesAfterCrash(
      path, kTable, Workload(), acknowledged, where, Apply,
      [](Table& table, const testutil::PairModel& found, const std::string& where) {
        ASSERT_EQ(table.Stats()->keys, found.size()) << where;
      });
}

// The parameter: M, the batches of b the log holds (1: every batch of b
// flushes; 4: batches of 20 go to the log too, and a flush merges several
// records' runs).
class LsmCrashAtEveryPersistPoint : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    TableOptions table_options;
    table_options.kind = TableKind::kOrdered;
    table_options.ordered.batch_entries = 16;
    table_options.ordered.log_batches = GetParam();
    testutil::CreatePoolWithTable(pools_.base(), 4 << 20, kTable, table_options);
  }

  // The workload compacts, on its own and when asked.
  void ExpectCompactions() {
    auto db = DB::Open(pools_.work(), testutil::PersistPointOptions());
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

  void RunEveryPoint(CrashKind kind, const char* label) {
    uint64_t crashes = 0;
    // Fewer persist points with M = 4: its batches of 20 are log appends,
    // not flushes.
    testutil::CheckEveryPersistPoint(
        pools_, kind, label, static_cast<int>(Workload().size()), GetParam() == 1 ? 50 : 30,
        RunInChild, CheckAfterCrash, [&] { ExpectCompactions(); }, &crashes);
    if (HasFatalFailure()) return;
    testutil::PrintCrashTotals(std::string("lsm ") + label + ", M = " + std::to_string(GetParam()),
                               crashes, testutil::kNothingLostNoHalfBatch);
  }

  testutil::PoolCopies pools_{"lsm-crash"};
};

TEST_P(LsmCrashAtEveryPersistPoint, ProcessKillLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_P(LsmCrashAtEveryPersistPoint, PowerFailureLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

INSTANTIATE_TEST_SUITE_P(LogBatches, LsmCrashAtEveryPersistPoint, ::testing::Values(1u, 4u),
                         testutil::LogBatchesName);

}  // namespace
}  // namespace gpkv
