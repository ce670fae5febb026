// Crash at every persist point of a small workload.
//
// A child process opens a copy of a prepared pool, runs a fixed workload of
// put / update / erase batches (enough to resize the table twice) and stops
// itself at persist point k: as a process kill (every store so far is in the
// file; pm::TEST_CrashAtPersistPoint) and as a power failure (stores not yet
// persisted are each kept or dropped; testutil::PowerFailureSimulator). After each batch
// it acknowledges the batch index through a pipe. The parent then reopens the
// pool (recovery), checks that every acknowledged batch is applied, that each
// operation of the batch in flight is either applied or absent, and that
// verify finds nothing. For every k.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "persist_point_harness.h"

namespace gpkv {
namespace {

struct Op {
  enum Kind { kPut, kErase } kind;
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;
};

// 10 batches: inserts that outgrow a table made for 64 keys (resizes),
// updates of earlier keys, erases, reinserts.
std::vector<Op> Workload() {
  std::vector<Op> batches;
  uint64_t next_key = 1;
  for (int b = 0; b < 10; ++b) {
    Op op;
    if (b % 4 == 3) {
      op.kind = Op::kErase;
      for (uint64_t k = 1; k < next_key; k += 5) op.keys.push_back(k * 0x9e3779b97f4a7c15ULL);
    } else {
      op.kind = Op::kPut;
      for (int i = 0; i < 24; ++i) {
        uint64_t key = (b % 4 == 2 && i % 2 == 0) ? (1 + i * 3) : next_key++;
        op.keys.push_back(key * 0x9e3779b97f4a7c15ULL);
        op.values.push_back((uint64_t(b) << 32) | uint64_t(i + 1));
      }
    }
    batches.push_back(op);
  }
  return batches;
}

using Model = std::map<uint64_t, uint64_t>;

void Apply(const Op& op, Model& model) {
  for (size_t i = 0; i < op.keys.size(); ++i) {
    if (op.kind == Op::kPut)
      model[op.keys[i]] = op.values[i];
    else
      model.erase(op.keys[i]);
  }
}

constexpr char kTable[] = "crash";

using testutil::ChildResult;
using testutil::CrashKind;

// Child: run the workload, acknowledging each batch.
ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill) {
  return testutil::RunStepsInChild(
      path, kTable, crash_at, kind, /*seed_salt=*/1, Workload(), [](Table& table, const Op& op) {
        return op.kind == Op::kPut ? table.Put(op.keys, op.values) : table.Erase(op.keys);
      });
}

// Reopens the pool and checks it against the acknowledged prefix. A key of
// the batch in flight may hold its value from before the batch or the result
// of any of the batch's operations on it (operations are atomic one by one and
// run in order per key, so a crash can fall between two of them).
void CheckAfterCrash(const std::string& path, int acknowledged, const std::string& where) {
  std::vector<Op> batches = Workload();
  Model before;
  for (int b = 0; b < acknowledged; ++b) Apply(batches[b], before);
  std::map<uint64_t, std::vector<std::optional<uint64_t>>> allowed;
  for (const auto& [key, value] : before) allowed[key].push_back(value);
  std::vector<uint64_t> keys;
  for (const Op& op : batches) keys.insert(keys.end(), op.keys.begin(), op.keys.end());
  for (uint64_t key : keys) {
    if (before.count(key) == 0) allowed[key].push_back(std::nullopt);
  }
  if (acknowledged < static_cast<int>(batches.size())) {
    const Op& in_flight = batches[acknowledged];
    for (size_t i = 0; i < in_flight.keys.size(); ++i) {
      allowed[in_flight.keys[i]].push_back(
          in_flight.kind == Op::kPut ? std::optional<uint64_t>(in_flight.values[i]) : std::nullopt);
    }
  }
  {
    auto db = DB::Open(path, testutil::PersistPointOptions());
    ASSERT_TRUE(db.ok()) << where << ": " << db.status().ToString();
    auto table = (*db)->OpenTable(kTable);
    ASSERT_TRUE(table.ok());
    std::vector<uint64_t> values(keys.size());
    std::vector<uint8_t> found(keys.size());
    ASSERT_TRUE((*table)->Get(keys, values, found).ok());
    for (size_t i = 0; i < keys.size(); ++i) {
      std::optional<uint64_t> got;
      if (found[i]) got = values[i];
      const auto& options = allowed[keys[i]];
      bool ok = std::find(options.begin(), options.end(), got) != options.end();
      std::string expected;
      for (const auto& option : options) {
        expected += (option ? std::to_string(*option) : std::string("nothing")) + " ";
      }
      ASSERT_TRUE(ok) << where << " after " << acknowledged << " acknowledged batches: key "
                      << keys[i] << " has " << (got ? std::to_string(*got) : "nothing")
                      << ", expected one of " << expected;
    }
  }
  testutil::ExpectVerifyCleanAfterCrash(path, where);
}

// Copies of the prepared pool for each crash run.
class CrashAtEveryPersistPoint : public ::testing::Test {
 protected:
  void SetUp() override {
    TableOptions table_options;
    table_options.expected_keys = 16;
    table_options.hash.initial_top_buckets = 4;  // 48 slots: the workload resizes
    testutil::CreatePoolWithTable(pools_.base(), 16 << 20, kTable, table_options);
  }

  // The workload crosses resizes.
  void ExpectResizes() {
    auto db = DB::Open(pools_.work(), testutil::PersistPointOptions());
    ASSERT_TRUE(db.ok());
    auto resizes = (*(*db)->OpenTable(kTable))->GetProperty("gphash.resizes");
    ASSERT_TRUE(resizes.ok()) << resizes.status().ToString();
    ASSERT_GE(*resizes, 2.0) << "the workload must cross resizes";
  }

  void RunEveryPoint(CrashKind kind, const char* label) {
    uint64_t crashes = 0;
    testutil::CheckEveryPersistPoint(
        pools_, kind, label, 10, 100, RunInChild, CheckAfterCrash, [&] { ExpectResizes(); },
        &crashes);
    if (HasFatalFailure()) return;
    testutil::PrintCrashTotals(label, crashes, testutil::kNothingLost);
  }

  testutil::PoolCopies pools_{"crash"};
};

TEST_F(CrashAtEveryPersistPoint, ProcessKillLosesNoAcknowledgedBatch) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_F(CrashAtEveryPersistPoint, PowerFailureLosesNoAcknowledgedBatch) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

}  // namespace
}  // namespace gpkv
