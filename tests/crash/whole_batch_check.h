// The oracle of the persist-point crash tests of tables that give whole-batch
// atomicity (logged tables): after a crash the table holds exactly the state
// after the acknowledged steps, or exactly the state after the step in
// flight; never a mix. And the write batches their workloads are made of.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "persist_point_harness.h"

namespace gpkv::testutil {

// A table's pairs, 8-byte keys and values.
using PairModel = std::map<uint64_t, uint64_t>;

// One write batch: operation i puts (keys[i], values[i]) or erases keys[i],
// as ops[i] (a Table::WriteOp) says.
struct WriteStep {
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;
  std::vector<uint8_t> ops;
};

constexpr uint8_t kPutOp = static_cast<uint8_t>(Table::WriteOp::kPut);
constexpr uint8_t kEraseOp = static_cast<uint8_t>(Table::WriteOp::kErase);

inline void ApplyWriteStep(const WriteStep& step, PairModel& model) {
  for (size_t i = 0; i < step.keys.size(); ++i) {
    if (step.ops[i] == kPutOp) model[step.keys[i]] = step.values[i];
    if (step.ops[i] == kEraseOp) model.erase(step.keys[i]);
  }
}

// Builds a workload batch by batch. Each value tells its batch and its
// position in it: (batch + 2) << 32 | (position + 1).
class WriteStepBuilder {
 public:
  // Starts the next batch.
  void Begin() {
    steps_.emplace_back();
    ++version_;
  }

  // Appends `op` (kPutOp or kEraseOp) of keys first .. first + count - 1.
  void Add(uint8_t op, uint64_t first, uint64_t count) {
    WriteStep& step = steps_.back();
    for (uint64_t i = 0; i < count; ++i) {
      step.keys.push_back(first + i);
      step.values.push_back(version_ << 32 | step.keys.size());
      step.ops.push_back(op);
    }
  }

  std::vector<WriteStep> Take() { return std::move(steps_); }

 private:
  std::vector<WriteStep> steps_;
  uint64_t version_ = 1;
};

// Reopens the pool at `path`, crashed (`where` names the crash) after
// `acknowledged` of `steps`, and checks that the table `table_name` holds
// the state after the acknowledged steps or after the step in flight
// (apply(step, model) applies a step to a PairModel); then more(table,
// found, where) for what a family checks besides, and that verify finds
// nothing.
template <typename Step, typename Apply, typename More>
void ExpectWholeBatchesAfterCrash(const std::string& path, const char* table_name,
                                  const std::vector<Step>& steps, int acknowledged,
                                  const std::string& where, const Apply& apply, const More& more) {
  PairModel before;
  for (int s = 0; s < acknowledged; ++s) apply(steps[s], before);
  PairModel after = before;
  if (acknowledged < static_cast<int>(steps.size())) apply(steps[acknowledged], after);
  {
    auto db = DB::Open(path, PersistPointOptions());
    ASSERT_TRUE(db.ok()) << where << ": " << db.status().ToString();
    auto table = (*db)->OpenTable(table_name);
    ASSERT_TRUE(table.ok()) << where << ": " << table.status().ToString();
    PairModel found;
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
        << where << " after " << acknowledged << " acknowledged steps: the table holds "
        << found.size() << " pairs, neither the " << before.size()
        << " before the step in flight nor the " << after.size() << " after it";
    more(**table, found, where);
    if (::testing::Test::HasFatalFailure()) return;
  }
  ExpectVerifyCleanAfterCrash(path, where);
}

// ExpectWholeBatchesAfterCrash with nothing checked besides.
template <typename Step, typename Apply>
void ExpectWholeBatchesAfterCrash(const std::string& path, const char* table_name,
                                  const std::vector<Step>& steps, int acknowledged,
                                  const std::string& where, const Apply& apply) {
  ExpectWholeBatchesAfterCrash(path, table_name, steps, acknowledged, where, apply,
                               [](Table&, const PairModel&, const std::string&) {});
}

}  // namespace gpkv::testutil
