// Concurrent batches from several host threads against one table on the CPU
// backend, checked by a per-key history checker (history_run.h): every read
// returns the value of an overlapping or the latest preceding write, never a
// torn one. The table starts small, so it resizes while the batches run. Over
// a million operations per table; the totals are printed. The GPU twin:
// gpu/concurrent_history_gpu_test.cc.
#include <gtest/gtest.h>

#include "concurrency/history_run.h"

namespace gpkv::concurrency {
namespace {

TEST(ConcurrentHistory, InlineValuesReadsSeeOverlappingOrLatestWrites) {
  RunHistory(ConfigFromEnvironment(8), "inline values");
}

TEST(ConcurrentHistory, CellValuesAreNeverTornAndNeverStale) {
  RunHistory(ConfigFromEnvironment(100), "100-byte value cells");
}

// A quarter of the batches of all threads touch the same key at once.
TEST(ConcurrentHistory, HotKeysUnderHeavyContentionKeepTheirHistory) {
  RunHistory(ConfigFromEnvironment(100, 1024), "hot keys, 100-byte value cells");
}

// The checker itself: it must reject what it is there to reject.
TEST(HistoryCheckerSelfTest, AcceptsOverlappingAndLatestPrecedingWrites) {
  HistoryChecker checker;
  checker.AddWrite(Event{1, 10, 1, 2});
  checker.AddWrite(Event{1, 11, 5, 8});
  checker.AddRead(Event{1, 10, 3, 4});       // latest preceding
  checker.AddRead(Event{1, 11, 6, 7});       // overlapping
  checker.AddRead(Event{1, 10, 6, 7});       // overlapping the overwrite: old still legal
  checker.AddRead(Event{2, kAbsent, 3, 4});  // never written
  uint64_t count = 0;
  EXPECT_TRUE(checker.Check(&count).empty());
  EXPECT_EQ(count, 0u);
}

TEST(HistoryCheckerSelfTest, RejectsStaleFutureTornAndLostValues) {
  HistoryChecker checker;
  checker.AddWrite(Event{1, 10, 1, 2});
  checker.AddWrite(Event{1, 11, 3, 4});
  checker.AddWrite(Event{1, kAbsent, 9, 10});
  checker.AddRead(Event{1, 10, 5, 6});         // stale: 11 completed before
  checker.AddRead(Event{1, 11, 1, 2});         // from the future
  checker.AddRead(Event{1, kTorn, 5, 6});      // torn
  checker.AddRead(Event{1, kAbsent, 5, 6});    // lost: 11 completed, no erase yet
  checker.AddRead(Event{1, 12, 5, 6});         // never written
  checker.AddRead(Event{1, kAbsent, 11, 12});  // legal: after the erase
  checker.AddRead(Event{1, 11, 11, 12});       // stale: erased before
  uint64_t count = 0;
  checker.Check(&count);
  EXPECT_EQ(count, 6u);
}

}  // namespace
}  // namespace gpkv::concurrency
