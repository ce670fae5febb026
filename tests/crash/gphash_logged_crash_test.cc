// Crash a logged hash table (TableOptions::hash_log) at every persist point of
// a few write batches: put, erase and mixed batches appended to the log, a
// batch that finds its log half full (a checkpoint starts: its image
// written, the batch in the other half), a checkpoint pending across several
// batches and published at a later one, a second half filling while a
// checkpoint is pending (the batch waits for it and starts the next) and a
// batch larger than a half (written as the image). The images are written
// inline (logged::TEST_WriteImagesInline) so that the persist points come in
// a fixed order; the checkpoints are still published later. The scaffolding is
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
#include "tables/gphash/logged/core.h"
#include "whole_batch_check.h"

namespace gpkv {
namespace {

constexpr char kTable[] = "logged";
constexpr uint8_t kPut = testutil::kPutOp;
constexpr uint8_t kErase = testutil::kEraseOp;

// One write batch: all puts (Table::Put), all erases (Table::Erase) or mixed
// (Table::Write).
using Step = testutil::WriteStep;

// b = 16, M = 2: log halves of one 4 KiB extent each, about 250 puts of 8/8
// bytes. The batches of 100 fill half 0 at the third, which starts a
// checkpoint (published by the next batch); the batch of 300 is larger than
// a half.
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

// b = 16, M = 8 (a checkpoint is published from the 6th batch of its half
// on; halves of 4 KiB): half 0 fills at step 4, whose checkpoint stays
// pending through steps 5-7 until step 8 finds half 1 full too (it publishes
// it and starts the next one, into half 0); that one is pending through
// steps 9-12 and published by step 13, the 6th batch of its half; step 14
// is larger than a half.
std::vector<Step> PendingWorkload() {
  testutil::WriteStepBuilder steps;
  auto then = [&](uint8_t op, uint64_t first, uint64_t count) {
    steps.Begin();
    steps.Add(op, first, count);
  };
  auto also = [&](uint8_t op, uint64_t first, uint64_t count) { steps.Add(op, first, count); };
  then(kPut, 0, 100);
  then(kPut, 100, 100);
  then(kErase, 0, 10);  // mixed: 3856 bytes of half 0 used
  also(kPut, 200, 30);
  then(kPut, 300, 50);  // half 0 is full: a checkpoint starts, half 1
  then(kErase, 100, 20);
  then(kPut, 400, 50);
  then(kPut, 500, 100);
  then(kPut, 600, 50);  // half 1 is full too: publish, the next checkpoint, half 0
  then(kPut, 700, 10);
  then(kPut, 710, 10);
  then(kErase, 700, 5);
  then(kPut, 720, 10);
  then(kPut, 730, 10);   // the 6th batch of half 0: publishes first
  then(kPut, 800, 400);  // larger than a half: the image
  then(kErase, 800, 50);
  also(kPut, 30, 5);
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

ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at, CrashKind kind,
                       const std::vector<Step>& steps) {
  return testutil::RunStepsInChild(path, kTable, crash_at, kind, /*seed_salt=*/11, steps, RunStep);
}

void CheckAfterCrash(const std::string& path, int acknowledged, const std::string& where,
                     const std::vector<Step>& steps) {
  testutil::ExpectWholeBatchesAfterCrash(path, kTable, steps, acknowledged, where,
                                         testutil::ApplyWriteStep);
}

class GphashLoggedCrashAtEveryPersistPoint : public ::testing::Test {
 protected:
  void SetUp() override {
    gphash::logged::TEST_WriteImagesInline(true);
    TableOptions table_options;
    table_options.expected_keys = 1024;
    table_options.hash_log.batch_entries = 16;
    table_options.hash_log.log_batches = log_batches_;
    testutil::CreatePoolWithTable(pools_.base(), 4 << 20, kTable, table_options);
  }
  void TearDown() override { gphash::logged::TEST_WriteImagesInline(false); }

  void RunEveryPoint(CrashKind kind, const char* label,
                     const std::vector<Step>& steps = Workload()) {
    uint64_t crashes = 0;
    testutil::CheckEveryPersistPoint(
        pools_, kind, label, static_cast<int>(steps.size()), 10,
        [&](const std::string& path, std::optional<uint64_t> crash_at, CrashKind child_kind) {
          return RunInChild(path, crash_at, child_kind, steps);
        },
        [&](const std::string& path, int acknowledged, const std::string& where) {
          CheckAfterCrash(path, acknowledged, where, steps);
        },
        [] {}, &crashes);
    if (HasFatalFailure()) return;
    testutil::PrintCrashTotals(std::string("logged hash writes ") + label, crashes,
                               testutil::kNothingLostNoHalfBatch);
  }

  testutil::PoolCopies pools_{"gphash-logged-crash"};
  uint32_t log_batches_ = 2;
};

// The table with M = 8, for PendingWorkload.
class GphashLoggedPendingCheckpointCrash : public GphashLoggedCrashAtEveryPersistPoint {
 protected:
  GphashLoggedPendingCheckpointCrash() { log_batches_ = 8; }
};

TEST_F(GphashLoggedCrashAtEveryPersistPoint, ProcessKillLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_F(GphashLoggedCrashAtEveryPersistPoint, PowerFailureLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

TEST_F(GphashLoggedPendingCheckpointCrash, ProcessKillLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill, checkpoints pending", PendingWorkload());
}

TEST_F(GphashLoggedPendingCheckpointCrash, PowerFailureLeavesWholeBatches) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure, checkpoints pending", PendingWorkload());
}

}  // namespace
}  // namespace gpkv
