// Crash an ordered (LSM) table at every persist point of a few mixed write
// batches (Table::Write): batches whose puts and tombstones go to the log as
// two records published by one store, and batches flushed into the levels as
// one run holding both, with and without a checkpoint behind the batches.
// As lsm_persist_point_crash_test.cc does for Put and Erase batches: a child
// process runs the steps and stops itself at persist point k (a process kill
// and a power failure); the parent reopens the pool and checks that the
// table holds exactly the state after the acknowledged steps or exactly the
// state after the step in flight, never a mix, and that verify finds nothing.
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
constexpr uint8_t kPut = testutil::kPutOp;
constexpr uint8_t kErase = testutil::kEraseOp;

using Step = testutil::WriteStep;

// b = 16. With M = 1 the second, third and fifth batches flush (the log holds
// fewer than 16 entries), the others go to the log; with M = 4 (two halves of
// < 64 entries) the third fills the first half and starts a checkpoint, and
// the fifth (90 entries) flushes at once.
std::vector<Step> Workload() {
  testutil::WriteStepBuilder steps;
  auto begin = [&]() { steps.Begin(); };
  auto add = [&](uint8_t op, uint64_t first, uint64_t count) { steps.Add(op, first, count); };
  begin();
  add(kPut, 0, 12);
  begin();  // erases of live keys, new keys, a put then an erase of one key
  add(kErase, 0, 4);
  add(kPut, 30, 4);
  add(kPut, 5, 1);
  add(kErase, 5, 1);
  add(kErase, 60, 1);
  add(kPut, 60, 1);
  begin();
  add(kPut, 100, 40);
  add(kErase, 6, 6);
  begin();
  add(kErase, 30, 4);
  add(kPut, 6, 1);
  add(kPut, 6, 1);  // a repeat: the last put wins
  begin();
  add(kPut, 200, 70);
  add(kErase, 100, 20);
  begin();
  add(kErase, 200, 1);
  add(kPut, 201, 1);
  add(kErase, 6, 1);
  add(kPut, 200, 1);
  return steps.Take();
}

using testutil::ChildResult;
using testutil::CrashKind;

ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill) {
  return testutil::RunStepsInChild(
      path, kTable, crash_at, kind, /*seed_salt=*/5, Workload(),
      [](Table& table, const Step& step) { return table.Write(step.keys, step.values, step.ops); });
}

void CheckAfterCrash(const std::string& path, int acknowledged, const std::string& where) {
  testutil::ExpectWholeBatchesAfterCrash(path, kTable, Workload(), acknowledged, where,
                                         testutil::ApplyWriteStep);
}

class LsmWriteCrashAtEveryPersistPoint : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    TableOptions table_options;
    table_options.kind = TableKind::kOrdered;
    table_options.ordered.batch_entries = 16;
    table_options.ordered.log_batches = GetParam();
    testutil::CreatePoolWithTable(pools_.base(), 4 << 20, kTable, table_options);
  }

  void RunEveryPoint(CrashKind kind, const char* label) {
    uint64_t crashes = 0;
    testutil::CheckEveryPersistPoint(
        pools_, kind, label, static_cast<int>(Workload().size()), 10, RunInChild, CheckAfterCrash,
        [] {}, &crashes);
    if (HasFatalFailure()) return;
    testutil::PrintCrashTotals(
        std::string("lsm mixed writes ") + label + ", M = " + std::to_string(GetParam()), crashes,
        testutil::kNothingLostNoHalfBatch);
  }

  testutil::PoolCopies pools_{"lsm-write-crash"};
};

TEST_P(LsmWriteCrashAtEveryPersistPoint, ProcessKillLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_P(LsmWriteCrashAtEveryPersistPoint, PowerFailureLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

INSTANTIATE_TEST_SUITE_P(LogBatches, LsmWriteCrashAtEveryPersistPoint, ::testing::Values(1u, 4u),
                         testutil::LogBatchesName);

}  // namespace
}  // namespace gpkv
