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

constexpr char kTable[] = "ordered";
constexpr uint8_t kPut = static_cast<uint8_t>(Table::WriteOp::kPut);
constexpr uint8_t kErase = static_cast<uint8_t>(Table::WriteOp::kErase);

struct Step {
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;
  std::vector<uint8_t> ops;
};

// b = 16. With M = 1 the second, third and fifth batches flush (the log holds
// fewer than 16 entries), the others go to the log; with M = 4 (two halves of
// < 64 entries) the third fills the first half and starts a checkpoint, and
// the fifth (90 entries) flushes at once.
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
  return steps;
}

using Model = std::map<uint64_t, uint64_t>;

void Apply(const Step& step, Model& model) {
  for (size_t i = 0; i < step.keys.size(); ++i) {
    if (step.ops[i] == kPut) model[step.keys[i]] = step.values[i];
    if (step.ops[i] == kErase) model.erase(step.keys[i]);
  }
}

using testutil::ChildResult;
using testutil::CrashKind;

Options OpenOptions() { return testutil::PersistPointOptions(); }

ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill) {
  return testutil::RunInChild(crash_at, kind, /*seed_salt=*/5, [&](const auto& pipes) {
    testutil::RunSteps(pipes, path, OpenOptions(), kTable, Workload(),
                       [](Table& table, const Step& step) {
                         return table.Write(step.keys, step.values, step.ops);
                       });
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
    ASSERT_TRUE(table.ok());
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

class LsmWriteCrashAtEveryPersistPoint : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    Options options = OpenOptions();
    options.create_if_missing = true;
    options.pool_size = 4 << 20;
    auto db = DB::Open(pools_.base(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.kind = TableKind::kOrdered;
    table_options.ordered.batch_entries = 16;
    table_options.ordered.log_batches = GetParam();
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
        "[crash totals] lsm mixed writes %s, M = %u: %llu crash states checked (every persist "
        "point), 0 acknowledged writes lost, 0 half batches, 0 pools failing verify\n",
        label, GetParam(), static_cast<unsigned long long>(crashes));
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
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return "M" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace gpkv
