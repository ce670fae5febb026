// Group commit of a logged hash table: many threads write put, erase and
// mixed batches at once, so that batches queue and one leader writes each
// group. Every caller's answers (its status, its erase results) match an
// oracle of its own keys; the table, reopened and opened read-only, holds
// what the callers were told; the groups published fewer log words than
// there were batches. A group whose sync fails fails each of its batches.
// A group of callers that put the same keys leaves the index as a reopen's
// replay of the log leaves it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv {
namespace {

constexpr uint8_t kPut = static_cast<uint8_t>(Table::WriteOp::kPut);
constexpr uint8_t kErase = static_cast<uint8_t>(Table::WriteOp::kErase);

using Oracle = std::map<uint64_t, uint64_t>;

Options PoolOptions() { return testutil::DbOptions(uint64_t{32} << 20, 2); }

TableOptions LoggedOptions() {
  TableOptions options;
  options.key_size = 8;
  options.value_size = 8;
  options.expected_keys = 1024;
  options.hash_log.batch_entries = 16;
  options.hash_log.log_batches = 4;
  return options;
}

Oracle Contents(Table& table) {
  Oracle contents;
  Status status = table.Scan([&](const uint8_t* key, const uint8_t* value) {
    uint64_t key_word, value_word;
    std::memcpy(&key_word, key, sizeof(key_word));
    std::memcpy(&value_word, value, sizeof(value_word));
    contents.emplace(key_word, value_word);
    return true;
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return contents;
}

// Counts the 8-byte persist points (commit words: a log half's, the
// checkpoint's) and holds each one back a little, so that writers arriving
// meanwhile queue behind the leader.
std::atomic<uint64_t> word_persists{0};
void HoldCommitWords(void*, const void*, size_t length, uint64_t) {
  if (length != 8) return;
  ++word_persists;
  std::this_thread::sleep_for(std::chrono::microseconds(300));
}

// One writer thread: batches of its own keys (so that its oracle knows
// every answer), checked as they return.
void RunWriter(Table& table, uint64_t thread, int batches, Oracle* oracle,
               std::atomic<uint64_t>* failures) {
  std::mt19937_64 random(thread + 1);
  const uint64_t first_key = thread << 32;
  for (int batch = 0; batch < batches; ++batch) {
    // Mostly small batches; now and then one larger than a log half.
    const size_t n = random() % 25 == 0 ? 70 : 1 + random() % 12;
    std::vector<uint64_t> keys(n), values(n);
    std::vector<uint8_t> ops(n), erased(n, 2);
    for (size_t i = 0; i < n; ++i) {
      keys[i] = first_key + random() % 40;
      values[i] = random();
      ops[i] = random() % 3 == 0 ? kErase : kPut;
    }
    const int kind = static_cast<int>(random() % 3);
    Status status;
    if (kind == 0) {
      status = table.Put(keys, values);
    } else if (kind == 1) {
      status = table.Erase(keys, erased);
    } else {
      status = table.Write(keys, values, ops, erased);
    }
    if (!status.ok()) {
      ADD_FAILURE() << "thread " << thread << " batch " << batch << ": " << status.ToString();
      ++*failures;
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      const bool put = kind == 0 || (kind == 2 && ops[i] == kPut);
      if (put) {
        (*oracle)[keys[i]] = values[i];
        continue;
      }
      const uint8_t live = oracle->erase(keys[i]) ? 1 : 0;
      if (erased[i] != live) {
        ADD_FAILURE() << "thread " << thread << " batch " << batch << " erase " << i << ": told "
                      << int{erased[i]} << ", the key was " << (live ? "live" : "absent");
        ++*failures;
      }
    }
  }
}

TEST(GphashLoggedGroupCommit, ConcurrentWritersAreToldWhatTheTableHolds) {
  testutil::TempPool pool("gphash-logged-group");
  constexpr int kThreads = 8, kBatches = 60;
  std::vector<Oracle> oracles(kThreads);
  {
    auto db = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->CreateTable("h", LoggedOptions());
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    std::atomic<uint64_t> failures{0};
    word_persists = 0;
    pm::TEST_SetPersistHook(HoldCommitWords, nullptr);
    std::vector<std::thread> writers;
    for (int thread = 0; thread < kThreads; ++thread) {
      writers.emplace_back(RunWriter, std::ref(**table), thread, kBatches, &oracles[thread],
                           &failures);
    }
    for (std::thread& writer : writers) writer.join();
    pm::TEST_SetPersistHook(nullptr, nullptr);
    ASSERT_EQ(failures.load(), 0u);
    // One batch at a time publishes at least one word a batch; groups
    // publish one a group.
    EXPECT_LT(word_persists.load(), uint64_t{kThreads} * kBatches);
    Oracle all;
    for (const Oracle& oracle : oracles) all.insert(oracle.begin(), oracle.end());
    EXPECT_EQ(Contents(**table), all);
    auto stats = (*table)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_GT(*stats->Property("gphash.checkpoints"), 0);
    ASSERT_TRUE((*db)->Close().ok());
  }
  Oracle all;
  for (const Oracle& oracle : oracles) all.insert(oracle.begin(), oracle.end());
  {
    auto db = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->OpenTable("h");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_EQ(Contents(**table), all);
  }
  auto report = recovery::VerifyPool(pool.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
  Options read_only = PoolOptions();
  read_only.read_only = true;
  auto db = DB::Open(pool.path(), read_only);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("h");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(Contents(**table), all);
}

// Holds the first commit word's persist (the lone first batch's) until
// released, so that the next batches queue into one group; with
// fail_second, makes the sync after the second word (that group's) fail.
struct HeldGroup {
  bool fail_second = false;
  std::atomic<int> words{0};
  std::atomic<bool> first_held{false};
  std::atomic<bool> release{false};
};
void HoldTheFirstWord(void* context, const void*, size_t length, uint64_t) {
  if (length != 8) return;
  auto* state = static_cast<HeldGroup*>(context);
  const int word = state->words++;
  if (word == 0) {
    state->first_held = true;
    while (!state->release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } else if (word == 1 && state->fail_second) {
    pm::TEST_FailNextSyncs(1);
  }
}

TEST(GphashLoggedGroupCommit, AFailedSyncFailsEveryBatchOfTheGroup) {
  // A group's batches are durable together or not at all, and none is shown
  // to readers before the sync: when the group's sync fails, each of its
  // callers is told so, none of their keys is readable, and the table
  // refuses writes until it is reopened. The batch before the group stays.
  testutil::TempPool pool("gphash-logged-group-sync");
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("h", LoggedOptions());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  constexpr int kGroup = 3;
  HeldGroup state;
  state.fail_second = true;
  pm::TEST_SetPersistHook(HoldTheFirstWord, &state);
  Status first_status;
  std::thread first([&] {
    std::vector<uint64_t> keys = {1, 2}, values = {10, 20};
    first_status = (*table)->Put(keys, values);
  });
  while (!state.first_held) std::this_thread::yield();
  std::vector<Status> statuses(kGroup);
  std::vector<std::thread> group;
  for (int caller = 0; caller < kGroup; ++caller) {
    group.emplace_back([&, caller] {
      std::vector<uint64_t> keys = {100 + uint64_t(caller)}, values = {7};
      statuses[caller] = (*table)->Put(keys, values);
    });
  }
  // The callers queue behind the first batch, whose leader holds the writer.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  state.release = true;
  first.join();
  for (std::thread& caller : group) caller.join();
  pm::TEST_SetPersistHook(nullptr, nullptr);
  pm::TEST_FailNextSyncs(0);
  EXPECT_TRUE(first_status.ok()) << first_status.ToString();
  for (int caller = 0; caller < kGroup; ++caller) {
    EXPECT_TRUE(statuses[caller].IsIOError()) << caller << ": " << statuses[caller].ToString();
  }
  std::vector<uint64_t> keys = {1, 2, 100, 101, 102}, values(keys.size());
  std::vector<uint8_t> found(keys.size());
  ASSERT_TRUE((*table)->Get(keys, values, found).ok());
  EXPECT_EQ(found, std::vector<uint8_t>({1, 1, 0, 0, 0}));
  std::vector<uint64_t> more = {5}, more_values = {50};
  EXPECT_FALSE((*table)->Put(more, more_values).ok());
  ASSERT_TRUE((*db)->Close().ok());
  auto reopened = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto again = (*reopened)->OpenTable("h");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  // The injected failure syncs as usual: the group's one store published
  // its three batches together (one at a time, the first failure would have
  // stopped the other two before their records).
  const Oracle contents = Contents(**again);
  EXPECT_EQ(contents, Oracle({{1, 10}, {2, 20}, {100, 7}, {101, 7}, {102, 7}}));
  EXPECT_TRUE((*again)->Put(more, more_values).ok());
}

TEST(GphashLoggedGroupCommit, AGroupsPutsOnSharedKeysAgreeWithTheLog) {
  // The batches of a group reach the index in the order of their records: a
  // key that several of them put ends with the value of the last in the log,
  // which is what a reopen replays. Callers put the same keys (batches of
  // more than a worker's share, so that the index splits each among its
  // workers); one caller erases some of them in between. No checkpoint
  // runs: the reopen replays every record.
  testutil::TempPool pool("gphash-logged-group-shared");
  TableOptions options = LoggedOptions();
  options.expected_keys = 1 << 14;
  options.hash_log.batch_entries = 4096;
  options.hash_log.log_batches = 32;
  Oracle before;
  {
    auto db = DB::Open(pool.path(), testutil::DbOptions(uint64_t{64} << 20, 2));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->CreateTable("h", options);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    HeldGroup state;
    pm::TEST_SetPersistHook(HoldTheFirstWord, &state);
    std::thread first([&] {
      std::vector<uint64_t> keys = {1}, values = {10};
      EXPECT_TRUE((*table)->Put(keys, values).ok());
    });
    while (!state.first_held) std::this_thread::yield();
    constexpr int kCallers = 6;
    constexpr uint64_t kShared = 3000;
    std::vector<std::thread> callers;
    for (int caller = 0; caller < kCallers; ++caller) {
      callers.emplace_back([&, caller] {
        std::mt19937_64 random(caller + 1);
        std::vector<uint64_t> keys(2500), values(keys.size());
        std::vector<uint8_t> erased(keys.size());
        for (size_t i = 0; i < keys.size(); ++i) {
          keys[i] = 1000 + random() % kShared;
          values[i] = uint64_t(caller + 1) << 32 | i;
        }
        const Status status =
            caller == kCallers / 2 ? (*table)->Erase(keys, erased) : (*table)->Put(keys, values);
        EXPECT_TRUE(status.ok()) << caller << ": " << status.ToString();
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    state.release = true;
    first.join();
    for (std::thread& caller : callers) caller.join();
    pm::TEST_SetPersistHook(nullptr, nullptr);
    auto stats = (*table)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(*stats->Property("gphash.checkpoints"), 0);
    before = Contents(**table);
    ASSERT_TRUE((*db)->Close().ok());
  }
  EXPECT_GT(before.size(), 1u);
  auto db = DB::Open(pool.path(), testutil::DbOptions(uint64_t{64} << 20, 2));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("h");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(Contents(**table), before);
}

}  // namespace
}  // namespace gpkv
