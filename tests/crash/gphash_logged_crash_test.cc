// Crash a logged hash table (TableOptions::hash_log) at every persist point of
// a few write batches: put, erase and mixed batches appended to the log, a
// batch that finds the log full (a checkpoint writes the image first) and a
// batch larger than the whole log (written as the image). The scaffolding is
// the persist-point harness the other crash tests use: a child process runs
// the steps and stops itself at persist point k (a process kill and a power
// failure); the parent reopens the pool and checks that the table holds
// exactly the state after the acknowledged steps or after the step in
// flight, never a mix, and that verify finds nothing.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "persist_point_harness.h"
#include "whole_batch_check.h"

namespace gpkv {
namespace {

constexpr char kTable[] = "logged";
constexpr uint8_t kPut = testutil::kPutOp;
constexpr uint8_t kErase = testutil::kEraseOp;

// One write batch: all puts (Table::Put), all erases (Table::Erase) or mixed
// (Table::Write).
using Step = testutil::WriteStep;

// b = 16, M = 2: a log of one 4 KiB extent, about 250 puts of 8/8 bytes. The
// batches of 100 fill it at the third, which checkpoints first; the batch of
// 300 is larger than the log.
std::vector<Step> Workload() {
  testutil::WriteStepBuilder steps;
  auto begin = [&]() { steps.Begin(); };
  auto add = [&](uint8_t op, uint64_t first, uint64_t count) { steps.Add(op, first, count); };
  begin();
  add(kPut, 0, 100);
  begin();
  add(kErase, 0, 10);
  add(kErase, 1000, 2);  // absent keys
  begin();               // mixed: erases of live keys, new keys, a put then an erase
  add(kErase, 10, 20);
  add(kPut, 100, 60);
  add(kPut, 5, 1);
  add(kErase, 5, 1);
  begin();
  add(kPut, 200, 100);  // the log is full: checkpoint first
  add(kPut, 200, 3);    // repeats: the last put wins
  begin();
  add(kPut, 400, 300);  // larger than the log: the image
  begin();
  add(kErase, 400, 50);
  add(kPut, 30, 5);
  return steps.Take();
}

Status RunStep(Table& table, const Step& step) {
  bool puts = true, erases = true;
  for (uint8_t op : step.ops) {
    puts = puts && op == kPut;
    erases = erases && op == kErase;
  }
  if (puts) return table.Put(step.keys, step.values);
  if (erases) return table.Erase(step.keys);
  return table.Write(step.keys, step.values, step.ops);
}

using testutil::ChildResult;
using testutil::CrashKind;

ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill) {
  return testutil::RunStepsInChild(path, kTable, crash_at, kind, /*seed_salt=*/11, Workload(),
                                   RunStep);
}

void CheckAfterCrash(const std::string& path, int acknowledged, const std::string& where) {
  testutil::ExpectWholeBatchesAfterCrash(path, kTable, Workload(), acknowledged, where,
                                         testutil::ApplyWriteStep);
}

class GphashLoggedCrashAtEveryPersistPoint : public ::testing::Test {
 protected:
  void SetUp() override {
    TableOptions table_options;
    table_options.expected_keys = 1024;
    table_options.hash_log.batch_entries = 16;
    table_options.hash_log.log_batches = 2;
    testutil::CreatePoolWithTable(pools_.base(), 4 << 20, kTable, table_options);
  }

  void RunEveryPoint(CrashKind kind, const char* label) {
    uint64_t crashes = 0;
    testutil::CheckEveryPersistPoint(
        pools_, kind, label, static_cast<int>(Workload().size()), 10, RunInChild, CheckAfterCrash,
        [] {}, &crashes);
    if (HasFatalFailure()) return;
    testutil::PrintCrashTotals(std::string("logged hash writes ") + label, crashes,
                               testutil::kNothingLostNoHalfBatch);
  }

  testutil::PoolCopies pools_{"gphash-logged-crash"};
};

TEST_F(GphashLoggedCrashAtEveryPersistPoint, ProcessKillLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_F(GphashLoggedCrashAtEveryPersistPoint, PowerFailureLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

}  // namespace
}  // namespace gpkv
