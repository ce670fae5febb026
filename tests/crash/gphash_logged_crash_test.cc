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

#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "persist_point_harness.h"
#include "recovery/verify.h"
#include "tables/gphash/logged/core.h"

namespace gpkv {
namespace {

constexpr char kTable[] = "logged";
constexpr uint8_t kPut = static_cast<uint8_t>(Table::WriteOp::kPut);
constexpr uint8_t kErase = static_cast<uint8_t>(Table::WriteOp::kErase);

// One write batch: all puts (Table::Put), all erases (Table::Erase) or mixed
// (Table::Write).
struct Step {
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;
  std::vector<uint8_t> ops;
};

// b = 16, M = 2: log halves of one 4 KiB extent each, about 250 puts of 8/8
// bytes. The batches of 100 fill half 0 at the third, which starts a
// checkpoint (published by the next batch); the batch of 300 is larger than
// a half.
std::vector<Step> Workload() {
  std::vector<Step> steps;
  uint64_t version = 1;
  Step* step = nullptr;
  auto begin = [&]() {
    steps.emplace_back();
    step = &steps.back();
    ++version;
  };
  auto add = [&](uint8_t op, uint64_t first, uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) {
      step->keys.push_back(first + i);
      step->values.push_back(version << 32 | step->keys.size());
      step->ops.push_back(op);
    }
  };
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
  return steps;
}

// b = 16, M = 8 (a checkpoint is published from the 6th batch of its half
// on; halves of 4 KiB): half 0 fills at step 4, whose checkpoint stays
// pending through steps 5-7 until step 8 finds half 1 full too (it publishes
// it and starts the next one, into half 0); that one is pending through
// steps 9-12 and published by step 13, the 6th batch of its half; step 14
// is larger than a half.
std::vector<Step> PendingWorkload() {
  // Step values are version << 32 | position, the version one per step.
  struct Steps {
    std::vector<Step> steps;
    Steps& Then(uint8_t op, uint64_t first, uint64_t count) {
      steps.emplace_back();
      return And(op, first, count);
    }
    Steps& And(uint8_t op, uint64_t first, uint64_t count) {
      Step& step = steps.back();
      for (uint64_t key = first; key < first + count; ++key) {
        step.keys.push_back(key);
        step.values.push_back((100 + steps.size()) << 32 | step.keys.size());
        step.ops.push_back(op);
      }
      return *this;
    }
  } build;
  build.Then(kPut, 0, 100).Then(kPut, 100, 100);
  build.Then(kErase, 0, 10).And(kPut, 200, 30);  // mixed: 3856 bytes of half 0 used
  build.Then(kPut, 300, 50);                     // half 0 is full: a checkpoint starts, half 1
  build.Then(kErase, 100, 20).Then(kPut, 400, 50).Then(kPut, 500, 100);
  build.Then(kPut, 600, 50);  // half 1 is full too: publish, the next checkpoint, half 0
  build.Then(kPut, 700, 10).Then(kPut, 710, 10).Then(kErase, 700, 5).Then(kPut, 720, 10);
  build.Then(kPut, 730, 10);   // the 6th batch of half 0: publishes first
  build.Then(kPut, 800, 400);  // larger than a half: the image
  build.Then(kErase, 800, 50).And(kPut, 30, 5);
  return build.steps;
}

using Model = std::map<uint64_t, uint64_t>;

void Apply(const Step& step, Model& model) {
  for (size_t i = 0; i < step.keys.size(); ++i) {
    if (step.ops[i] == kPut) model[step.keys[i]] = step.values[i];
    if (step.ops[i] == kErase) model.erase(step.keys[i]);
  }
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

Options OpenOptions() { return testutil::PersistPointOptions(); }

ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill,
                       const std::vector<Step>& steps = Workload()) {
  return testutil::RunInChild(crash_at, kind, /*seed_salt=*/11, [&](const auto& pipes) {
    testutil::RunSteps(pipes, path, OpenOptions(), kTable, steps, RunStep);
  });
}

void CheckAfterCrash(const std::string& path, int acknowledged, uint64_t k,
                     const std::vector<Step>& steps = Workload()) {
  Model before;
  for (int s = 0; s < acknowledged; ++s) Apply(steps[s], before);
  Model after = before;
  if (acknowledged < static_cast<int>(steps.size())) Apply(steps[acknowledged], after);
  {
    auto db = DB::Open(path, OpenOptions());
    ASSERT_TRUE(db.ok()) << "crash at " << k << ": " << db.status().ToString();
    auto table = (*db)->OpenTable(kTable);
    ASSERT_TRUE(table.ok()) << "crash at " << k << ": " << table.status().ToString();
    Model found;
    ASSERT_TRUE((*table)
                    ->Scan([&](const uint8_t* key, const uint8_t* value) {
                      uint64_t id, v;
                      std::memcpy(&id, key, 8);
                      std::memcpy(&v, value, 8);
                      found[id] = v;
                      return true;
                    })
                    .ok());
    ASSERT_TRUE(found == before || found == after)
        << "crash at persist point " << k << " after " << acknowledged
        << " acknowledged steps: the table holds " << found.size() << " pairs, neither the "
        << before.size() << " before the step in flight nor the " << after.size() << " after it";
  }
  auto report = recovery::VerifyPool(path, nullptr);
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->findings.empty())
      << "crash at " << k << ": verify after recovery: " << report->findings[0].message;
}

class GphashLoggedCrashAtEveryPersistPoint : public ::testing::Test {
 protected:
  void SetUp() override {
    gphash::logged::TEST_WriteImagesInline(true);
    Options options = OpenOptions();
    options.create_if_missing = true;
    options.pool_size = 4 << 20;
    auto db = DB::Open(pools_.base(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.expected_keys = 1024;
    table_options.hash_log.batch_entries = 16;
    table_options.hash_log.log_batches = log_batches_;
    ASSERT_TRUE((*db)->CreateTable(kTable, table_options).ok());
  }
  void TearDown() override { gphash::logged::TEST_WriteImagesInline(false); }

  void RunEveryPoint(CrashKind kind, const char* label,
                     const std::vector<Step>& steps = Workload()) {
    pools_.FreshCopy();
    ChildResult full = RunInChild(pools_.work(), std::nullopt, CrashKind::kProcessKill, steps);
    ASSERT_EQ(full.exit_code, 0);
    ASSERT_EQ(full.acknowledged, static_cast<int>(steps.size()));
    ASSERT_GT(full.persist_points, 10u);
    CheckAfterCrash(pools_.work(), full.acknowledged, full.persist_points, steps);
    uint64_t crashes = 0;
    testutil::CrashAtEveryPoint(
        pools_, full.persist_points, label,
        [&](uint64_t k) { return RunInChild(pools_.work(), k, kind, steps); },
        [&](int acknowledged, uint64_t k, const std::string&) {
          CheckAfterCrash(pools_.work(), acknowledged, k, steps);
        },
        &crashes);
    if (HasFatalFailure()) return;
    std::printf(
        "[crash totals] logged hash writes %s: %llu crash states checked (every persist "
        "point), 0 acknowledged writes lost, 0 half batches, 0 pools failing verify\n",
        label, static_cast<unsigned long long>(crashes));
  }

  uint32_t log_batches_ = 2;
  testutil::PoolCopies pools_{"gphash-logged-crash"};
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
