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
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "power_failure.h"
#include "recovery/verify.h"
#include "test_util.h"

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

// The CPU backend (its persist points are what the hook sees), one worker
// thread: the persist points of a run then come in a fixed order, so point k
// of the counting run is point k of every crashing run.
Options OpenOptions() {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = 1;
  return options;
}

// Child: run the workload, write the index of each acknowledged batch.
enum class CrashKind { kProcessKill, kPowerFailure };

[[noreturn]] void RunChild(const std::string& path, int ack_fd, std::optional<uint64_t> crash_at,
                           CrashKind kind, int count_fd) {
  static testutil::PowerFailureSimulator* simulator = nullptr;
  if (!crash_at) {
    pm::TEST_CountPersistPoints();
  } else if (kind == CrashKind::kProcessKill) {
    pm::TEST_CrashAtPersistPoint(*crash_at);
  } else {
    simulator = new testutil::PowerFailureSimulator(*crash_at, /*seed=*/*crash_at * 7919 + 1);
    simulator->Install();
  }
  auto db = DB::Open(path, OpenOptions());
  if (!db.ok()) _exit(10);
  auto table = (*db)->OpenTable(kTable);
  if (!table.ok()) _exit(11);
  std::vector<Op> batches = Workload();
  for (uint32_t b = 0; b < batches.size(); ++b) {
    const Op& op = batches[b];
    Status status =
        op.kind == Op::kPut ? (*table)->Put(op.keys, op.values) : (*table)->Erase(op.keys);
    if (!status.ok()) _exit(12);
    if (write(ack_fd, &b, sizeof(b)) != sizeof(b)) _exit(13);
  }
  if (count_fd >= 0) {
    uint64_t count = pm::TEST_PersistPointCount();
    if (write(count_fd, &count, sizeof(count)) != sizeof(count)) _exit(14);
  }
  _exit(0);
}

struct ChildResult {
  int exit_code = -1;
  int acknowledged = 0;  // batches acknowledged
  uint64_t persist_points = 0;
};

ChildResult RunInChild(const std::string& path, std::optional<uint64_t> crash_at,
                       CrashKind kind = CrashKind::kProcessKill) {
  int ack[2], count[2];
  EXPECT_EQ(pipe(ack), 0);
  EXPECT_EQ(pipe(count), 0);
  pid_t child = fork();
  if (child == 0) {
    close(ack[0]);
    close(count[0]);
    RunChild(path, ack[1], crash_at, kind, count[1]);
  }
  close(ack[1]);
  close(count[1]);
  ChildResult result;
  uint32_t index;
  while (read(ack[0], &index, sizeof(index)) == sizeof(index)) result.acknowledged = index + 1;
  if (read(count[0], &result.persist_points, sizeof(uint64_t)) != sizeof(uint64_t)) {
    result.persist_points = 0;
  }
  close(ack[0]);
  close(count[0]);
  int status = 0;
  waitpid(child, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Reopens the pool and checks it against the acknowledged prefix. A key of
// the batch in flight may hold its value from before the batch or the result
// of any of the batch's operations on it (operations are atomic one by one and
// run in order per key, so a crash can fall between two of them).
void CheckAfterCrash(const std::string& path, int acknowledged, uint64_t k) {
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
    auto db = DB::Open(path, OpenOptions());
    ASSERT_TRUE(db.ok()) << "crash at " << k << ": " << db.status().ToString();
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
      ASSERT_TRUE(ok) << "crash at persist point " << k << " after " << acknowledged
                      << " acknowledged batches: key " << keys[i] << " has "
                      << (got ? std::to_string(*got) : "nothing") << ", expected one of "
                      << expected;
    }
  }
  auto report = recovery::VerifyPool(path, nullptr);
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->findings.empty())
      << "crash at " << k << ": verify after recovery: " << report->findings[0].message;
}

// Copies of the prepared pool for each crash run.
class CrashAtEveryPersistPoint : public ::testing::Test {
 protected:
  void SetUp() override {
    Options options = OpenOptions();
    options.create_if_missing = true;
    options.pool_size = 16 << 20;
    auto db = DB::Open(base_.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.expected_keys = 16;
    table_options.hash.initial_top_buckets = 4;  // 48 slots: the workload resizes
    ASSERT_TRUE((*db)->CreateTable(kTable, table_options).ok());
  }

  void FreshCopy() {
    std::filesystem::copy_file(base_.path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }

  void RunEveryPoint(CrashKind kind, const char* label) {
    FreshCopy();
    ChildResult full = RunInChild(work_.path(), std::nullopt);
    ASSERT_EQ(full.exit_code, 0);
    ASSERT_EQ(full.acknowledged, 10);
    ASSERT_GT(full.persist_points, 100u);
    CheckAfterCrash(work_.path(), full.acknowledged, full.persist_points);
    {
      auto db = DB::Open(work_.path(), OpenOptions());
      ASSERT_TRUE(db.ok());
      auto resizes = (*(*db)->OpenTable(kTable))->GetProperty("gphash.resizes");
      ASSERT_TRUE(resizes.ok()) << resizes.status().ToString();
      ASSERT_GE(*resizes, 2.0) << "the workload must cross resizes";
    }
    uint64_t crashes = 0;
    for (uint64_t k = 0; k < full.persist_points; ++k) {
      FreshCopy();
      ChildResult result = RunInChild(work_.path(), k, kind);
      ASSERT_EQ(result.exit_code, pm::kCrashExitCode) << label << " at persist point " << k;
      ++crashes;
      CheckAfterCrash(work_.path(), result.acknowledged, k);
      if (HasFatalFailure()) return;
    }
    std::printf(
        "[crash totals] %s: %llu crash states checked (every persist point), "
        "0 acknowledged writes lost, 0 pools failing verify\n",
        label, static_cast<unsigned long long>(crashes));
  }

  testutil::TempPool base_{"crash-base"};
  testutil::TempPool work_{"crash-work"};
};

TEST_F(CrashAtEveryPersistPoint, ProcessKillLosesNoAcknowledgedBatch) {
  RunEveryPoint(CrashKind::kProcessKill, "process kill");
}

TEST_F(CrashAtEveryPersistPoint, PowerFailureLosesNoAcknowledgedBatch) {
  RunEveryPoint(CrashKind::kPowerFailure, "power failure");
}

}  // namespace
}  // namespace gpkv
