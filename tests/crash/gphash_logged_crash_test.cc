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

#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "persist_point_harness.h"
#include "recovery/verify.h"

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

// b = 16, M = 2: a log of one 4 KiB extent, about 250 puts of 8/8 bytes. The
// batches of 100 fill it at the third, which checkpoints first; the batch of
// 300 is larger than the log.
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
                       CrashKind kind = CrashKind::kProcessKill) {
  return testutil::RunInChild(crash_at, kind, /*seed_salt=*/11, [&](const auto& pipes) {
    testutil::RunSteps(pipes, path, OpenOptions(), kTable, Workload(), RunStep);
  });
}

void CheckAfterCrash(const std::string& path, int acknowledged, uint64_t k) {
  std::vector<Step> steps = Workload();
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
    Options options = OpenOptions();
    options.create_if_missing = true;
    options.pool_size = 4 << 20;
    auto db = DB::Open(pools_.base(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.expected_keys = 1024;
    table_options.hash_log.batch_entries = 16;
    table_options.hash_log.log_batches = 2;
    ASSERT_TRUE((*db)->CreateTable(kTable, table_options).ok());
  }

  void RunEveryPoint(CrashKind kind, const char* label) {
    pools_.FreshCopy();
    ChildResult full = RunInChild(pools_.work(), std::nullopt);
    ASSERT_EQ(full.exit_code, 0);
    ASSERT_EQ(full.acknowledged, static_cast<int>(Workload().size()));
    ASSERT_GT(full.persist_points, 10u);
    CheckAfterCrash(pools_.work(), full.acknowledged, full.persist_points);
    uint64_t crashes = 0;
    testutil::CrashAtEveryPoint(
        pools_, full.persist_points, label,
        [&](uint64_t k) { return RunInChild(pools_.work(), k, kind); },
        [&](int acknowledged, uint64_t k, const std::string&) {
          CheckAfterCrash(pools_.work(), acknowledged, k);
        },
        &crashes);
    if (HasFatalFailure()) return;
    std::printf(
        "[crash totals] logged hash writes %s: %llu crash states checked (every persist "
        "point), 0 acknowledged writes lost, 0 half batches, 0 pools failing verify\n",
        label, static_cast<unsigned long long>(crashes));
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
