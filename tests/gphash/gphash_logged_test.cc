// Persistent hash tables in logged mode (TableOptions::hash_log): random
// put, erase and mixed batches checked against an unordered_map oracle
// through checkpoints, batches larger than a log half and reopens, among
// them reopens of a process that stopped with a checkpoint pending (records
// in both halves); the same answers from a read-only open; the mode in the
// catalog, Stats and the options it refuses.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gphash/logged_table_bytes.h"
#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "recovery/verify.h"
#include "tables/gphash/logged/core.h"
#include "test_util.h"

namespace gpkv {
namespace {

constexpr uint8_t kPut = static_cast<uint8_t>(Table::WriteOp::kPut);
constexpr uint8_t kErase = static_cast<uint8_t>(Table::WriteOp::kErase);

using Oracle = std::unordered_map<std::string, std::string>;

struct Shape {
  uint32_t key_size;
  uint32_t value_size;
};

TableOptions LoggedOptions(const Shape& shape, uint32_t log_batches = 4) {
  TableOptions options;
  options.key_size = shape.key_size;
  options.value_size = shape.value_size;
  options.expected_keys = 256;
  options.hash_log.batch_entries = 16;
  options.hash_log.log_batches = log_batches;
  return options;
}

Options PoolOptions() { return testutil::DbOptions(uint64_t{32} << 20, 2); }

// Every pair of the table, as the oracle holds them.
Oracle Contents(Table& table) {
  const TableOptions& options = table.options();
  Oracle contents;
  Status status = table.Scan([&](const uint8_t* key, const uint8_t* value) {
    contents.emplace(std::string(reinterpret_cast<const char*>(key), options.key_size),
                     std::string(reinterpret_cast<const char*>(value), options.value_size));
    return true;
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return contents;
}

// The pairs of table 'h' of the pool at `path`, opened read-only.
Oracle ReadOnlyContents(const std::string& path) {
  Options read_only = PoolOptions();
  read_only.read_only = true;
  auto db = DB::Open(path, read_only);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return {};
  auto table = (*db)->OpenTable("h");
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return {};
  return Contents(**table);
}

// Gets of every oracle key and of `absent` keys agree with the oracle.
void ExpectGetsMatch(Table& table, const Oracle& oracle, const std::vector<std::string>& absent) {
  const TableOptions& options = table.options();
  std::vector<std::string> asked;
  for (const auto& [key, value] : oracle) asked.push_back(key);
  for (const std::string& key : absent) {
    if (oracle.count(key) == 0) asked.push_back(key);
  }
  std::string keys;
  for (const std::string& key : asked) keys += key;
  std::vector<uint8_t> values(asked.size() * options.value_size), found(asked.size());
  ASSERT_TRUE(table.Get(ConstBytes(keys.data(), keys.size()), values, found).ok());
  for (size_t i = 0; i < asked.size(); ++i) {
    auto it = oracle.find(asked[i]);
    ASSERT_EQ(found[i], it != oracle.end() ? 1 : 0) << "key " << i;
    if (it == oracle.end()) continue;
    ASSERT_EQ(
        std::memcmp(values.data() + i * options.value_size, it->second.data(), options.value_size),
        0);
  }
}

class GphashLoggedOracle : public ::testing::TestWithParam<Shape> {};

TEST_P(GphashLoggedOracle, MixedBatchesMatchTheOracleThroughCheckpointsAndReopens) {
  const Shape shape = GetParam();
  testutil::TempPool pool("gphash-logged-oracle");
  std::mt19937_64 random(42);
  auto key_of = [&](uint64_t id) {
    std::string key(shape.key_size, '\0');
    std::memcpy(key.data(), &id, sizeof(id));
    key[shape.key_size - 1] ^= static_cast<char>(id % 7);  // the high word matters too
    return key;
  };
  auto value_of = [&]() {
    std::string value(shape.value_size, '\0');
    testutil::SplitMix64Fill(random(), reinterpret_cast<uint8_t*>(value.data()), shape.value_size);
    return value;
  };
  Oracle oracle;
  std::vector<std::string> absent;
  for (uint64_t id = 5000; id < 5010; ++id) absent.push_back(key_of(id));
  {
    auto db = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->CreateTable("h", LoggedOptions(shape)).ok());
  }
  for (int round = 0; round < 6; ++round) {
    auto db = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->OpenTable("h");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_EQ(Contents(**table), oracle) << "after reopen " << round;
    for (int batch = 0; batch < 25; ++batch) {
      // Mostly small batches; now and then one larger than the log.
      const size_t n = random() % 10 == 0 ? 300 + random() % 200 : 1 + random() % 60;
      std::string keys, values;
      std::vector<uint8_t> ops;
      for (size_t i = 0; i < n; ++i) {
        keys += key_of(random() % 600);
        values += value_of();
        ops.push_back(random() % 3 == 0 ? kErase : kPut);
      }
      const int kind = static_cast<int>(random() % 3);
      std::vector<uint8_t> erased(n, 2);
      if (kind == 0) {
        ASSERT_TRUE((*table)
                        ->Put(ConstBytes(keys.data(), keys.size()),
                              ConstBytes(values.data(), values.size()))
                        .ok());
        for (size_t i = 0; i < n; ++i) {
          oracle[keys.substr(i * shape.key_size, shape.key_size)] =
              values.substr(i * shape.value_size, shape.value_size);
        }
      } else if (kind == 1) {
        ASSERT_TRUE((*table)->Erase(ConstBytes(keys.data(), keys.size()), erased).ok());
        for (size_t i = 0; i < n; ++i) {
          const size_t gone = oracle.erase(keys.substr(i * shape.key_size, shape.key_size));
          ASSERT_EQ(erased[i], gone) << "erase " << i;
        }
      } else {
        ASSERT_TRUE((*table)
                        ->Write(ConstBytes(keys.data(), keys.size()),
                                ConstBytes(values.data(), values.size()), ops, erased)
                        .ok());
        for (size_t i = 0; i < n; ++i) {
          const std::string key = keys.substr(i * shape.key_size, shape.key_size);
          if (ops[i] == kPut) {
            oracle[key] = values.substr(i * shape.value_size, shape.value_size);
          } else {
            ASSERT_EQ(erased[i], oracle.erase(key)) << "write erase " << i;
          }
        }
      }
    }
    ExpectGetsMatch(**table, oracle, absent);
    auto stats = (*table)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->keys, oracle.size());
    EXPECT_EQ(stats->mode, "logged");
    EXPECT_GT(*stats->Property("gphash.checkpoints"), 0) << "round " << round;
    // The checkpoint's time is its three steps': the scan of each started
    // one is timed.
    EXPECT_GT(*stats->Property("gphash.write-checkpoint-scan-ns"), 0) << "round " << round;
    EXPECT_EQ(*stats->Property("gphash.write-checkpoint-ns"),
              *stats->Property("gphash.write-checkpoint-scan-ns") +
                  *stats->Property("gphash.write-checkpoint-wait-ns") +
                  *stats->Property("gphash.write-checkpoint-publish-ns"))
        << "round " << round;
  }
  auto report = recovery::VerifyPool(pool.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
  ASSERT_EQ(report->tables.size(), 1u);
  EXPECT_EQ(report->tables[0].keys, oracle.size());

  // A read-only open replays the log into memory and answers the same.
  Options read_only = PoolOptions();
  read_only.read_only = true;
  auto db = DB::Open(pool.path(), read_only);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("h");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(Contents(**table), oracle);
  ExpectGetsMatch(**table, oracle, absent);
}

INSTANTIATE_TEST_SUITE_P(Sizes, GphashLoggedOracle,
                         ::testing::Values(Shape{8, 8}, Shape{16, 24}, Shape{32, 3}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return "K" + std::to_string(info.param.key_size) + "V" +
                                  std::to_string(info.param.value_size);
                         });

// One mixed batch of 16 keys of 0..399 (8/8 bytes; a third erases).
struct MixedBatch {
  std::vector<uint64_t> keys, values;
  std::vector<uint8_t> ops;
};
std::vector<MixedBatch> MixedBatches(uint64_t seed, size_t count) {
  std::mt19937_64 random(seed);
  std::vector<MixedBatch> batches(count);
  for (MixedBatch& batch : batches) {
    for (int i = 0; i < 16; ++i) {
      batch.keys.push_back(random() % 400);
      batch.values.push_back(random());
      batch.ops.push_back(random() % 3 == 0 ? kErase : kPut);
    }
  }
  return batches;
}

TEST(GphashLogged, ReopensWithACheckpointPendingMatchTheOracle) {
  // b = 16, M = 8: a half takes 14 batches of 16 mixed keys; a checkpoint
  // is published from the 6th batch of its half on. A child process writes
  // batches until a checkpoint has been pending for three of them and stops
  // without closing (records in both halves, the image possibly written but
  // not published); the parent opens the pool read-only (both halves
  // replayed), then writable (the checkpoint completed), and compares with
  // the oracle each time; then it writes on and closes with a checkpoint
  // pending (the close publishes it).
  testutil::TempPool pool("gphash-logged-pending");
  {
    auto db = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->CreateTable("h", LoggedOptions({8, 8}, 8)).ok());
  }
  Oracle oracle;
  auto apply = [&](const MixedBatch& batch) {
    for (size_t i = 0; i < batch.keys.size(); ++i) {
      const std::string key(reinterpret_cast<const char*>(&batch.keys[i]), 8);
      if (batch.ops[i] == kPut) {
        oracle[key] = std::string(reinterpret_cast<const char*>(&batch.values[i]), 8);
      } else {
        oracle.erase(key);
      }
    }
  };
  auto pending_of = [](Table& table) {
    auto stats = table.Stats();
    return stats.ok() ? *stats->Property("gphash.checkpoint-pending") : -1.0;
  };
  int pending_closes = 0;
  for (uint64_t round = 0; round < 4; ++round) {
    const std::vector<MixedBatch> batches = MixedBatches(round, 100);
    const pid_t child = fork();
    if (child == 0) {
      auto db = DB::Open(pool.path(), PoolOptions());
      if (!db.ok()) _exit(200);
      auto table = (*db)->OpenTable("h");
      if (!table.ok()) _exit(201);
      int pending_batches = 0;
      for (size_t n = 0; n < batches.size(); ++n) {
        const MixedBatch& batch = batches[n];
        if (!(*table)->Write(batch.keys, batch.values, batch.ops).ok()) _exit(202);
        pending_batches = pending_of(**table) == 1.0 ? pending_batches + 1 : 0;
        if (pending_batches == 3) _exit(static_cast<int>(n + 1));  // no close
      }
      _exit(203);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    const int written = WEXITSTATUS(status);
    ASSERT_LT(written, 200) << "the child failed (" << written << ")";
    for (int n = 0; n < written; ++n) apply(batches[n]);
    EXPECT_EQ(ReadOnlyContents(pool.path()), oracle) << "read-only, round " << round;
    auto db = DB::Open(pool.path(), PoolOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->OpenTable("h");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_EQ(Contents(**table), oracle) << "round " << round;
    EXPECT_EQ(pending_of(**table), 0.0);
    // On until a checkpoint is pending again, then a close publishes it.
    for (const MixedBatch& batch : MixedBatches(round + 100, 40)) {
      ASSERT_TRUE((*table)->Write(batch.keys, batch.values, batch.ops).ok());
      apply(batch);
      if (pending_of(**table) == 1.0) {
        ++pending_closes;
        break;
      }
    }
    ExpectGetsMatch(**table, oracle, {});
    ASSERT_TRUE((*db)->Close().ok());
  }
  EXPECT_EQ(pending_closes, 4);
  auto report = recovery::VerifyPool(pool.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
  ASSERT_EQ(report->tables.size(), 1u);
  EXPECT_EQ(report->tables[0].keys, oracle.size());
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("h");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(Contents(**table), oracle);
}

TEST(GphashLogged, ImagesWrittenBehindTheBatchesOrInlineLeaveTheSameBytes) {
  // The image's worker thread decides only when a checkpoint is published,
  // not what the pool holds after the close: the same batches with the
  // images written inline (the crash tests' order) leave the same bytes.
  const std::vector<MixedBatch> batches = MixedBatches(77, 120);
  std::vector<uint8_t> bytes[2];
  for (int side = 0; side < 2; ++side) {
    gphash::logged::TEST_WriteImagesInline(side == 1);
    testutil::TempPool pool(side == 0 ? "gphash-logged-worker" : "gphash-logged-inline");
    {
      auto db = DB::Open(pool.path(), PoolOptions());
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      auto table = (*db)->CreateTable("h", LoggedOptions({8, 8}, 8));
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      for (const MixedBatch& batch : batches) {
        ASSERT_TRUE((*table)->Write(batch.keys, batch.values, batch.ops).ok());
      }
      auto stats = (*table)->Stats();
      ASSERT_TRUE(stats.ok());
      EXPECT_GE(*stats->Property("gphash.checkpoints"), 5);
    }
    bytes[side] = testutil::LoggedTableBytes(pool.path());
  }
  gphash::logged::TEST_WriteImagesInline(false);
  ASSERT_EQ(bytes[0].size(), bytes[1].size());
  EXPECT_TRUE(bytes[0] == bytes[1]);
}

TEST(GphashLogged, APoolTooFullForAnImageFailsTheBatchAndLosesNothing) {
  // b = 4096, M = 1: a log half takes one batch, so every batch after the
  // first starts a checkpoint whose image holds every key so far. In a pool
  // of 8 MiB the images soon do not fit: the batch that cannot reserve its
  // image fails with PoolFull and changes nothing; every batch before it
  // stays, in memory and after a reopen.
  testutil::TempPool pool("gphash-logged-full");
  const Options options = testutil::DbOptions(uint64_t{8} << 20, 2);
  TableOptions table_options = LoggedOptions({8, 8}, 1);
  table_options.hash_log.batch_entries = 4096;
  std::vector<uint64_t> acknowledged;
  Status failed;
  {
    auto db = DB::Open(pool.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->CreateTable("h", table_options);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    for (uint64_t batch = 0; batch < 400 && failed.ok(); ++batch) {
      std::vector<uint64_t> keys, values;
      for (uint64_t key = batch * 4000; key < (batch + 1) * 4000; ++key) {
        keys.push_back(key);
        values.push_back(key * 7);
      }
      failed = (*table)->Put(keys, values);
      if (failed.ok()) acknowledged.insert(acknowledged.end(), keys.begin(), keys.end());
    }
    ASSERT_TRUE(failed.IsPoolFull()) << failed.ToString();
    EXPECT_NE(failed.message().find("checkpoint"), std::string::npos) << failed.ToString();
    ASSERT_GT(acknowledged.size(), 8000u);
    auto stats = (*table)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->keys, acknowledged.size());
  }
  auto db = DB::Open(pool.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("h");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> values(acknowledged.size());
  std::vector<uint8_t> found(acknowledged.size());
  ASSERT_TRUE((*table)->Get(acknowledged, values, found).ok());
  for (size_t i = 0; i < acknowledged.size(); ++i) {
    ASSERT_EQ(found[i], 1) << acknowledged[i];
    ASSERT_EQ(values[i], acknowledged[i] * 7);
  }
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, acknowledged.size());
}

TEST(GphashLogged, ABatchWhoseSyncFailsIsNeverSeenByReaders) {
  // On a page-granular mapping the pool's Sync makes a record durable: a
  // batch whose Sync fails fails, and the index does not show it (a reader
  // never sees a write that a crash could still take back); the table then
  // refuses writes until it is reopened, and keeps answering reads.
  testutil::TempPool pool("gphash-logged-sync");
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("h", LoggedOptions({8, 8}, 4));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> keys = {1, 2, 3}, values = {10, 20, 30};
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  std::vector<uint64_t> more = {4, 5}, more_values = {40, 50};
  pm::TEST_FailNextSyncs(1);
  const Status failed = (*table)->Put(more, more_values);
  pm::TEST_FailNextSyncs(0);
  EXPECT_TRUE(failed.IsIOError()) << failed.ToString();
  std::vector<uint64_t> got(more.size());
  std::vector<uint8_t> found(more.size());
  ASSERT_TRUE((*table)->Get(more, got, found).ok());
  EXPECT_EQ(found, std::vector<uint8_t>({0, 0}));
  got.assign(keys.size(), 0);
  found.assign(keys.size(), 0);
  ASSERT_TRUE((*table)->Get(keys, got, found).ok());
  EXPECT_EQ(found, std::vector<uint8_t>({1, 1, 1}));
  EXPECT_EQ(got, values);
  EXPECT_FALSE((*table)->Put(more, more_values).ok());
}

TEST(GphashLogged, StatsNameTheModeAndTheLog) {
  testutil::TempPool pool("gphash-logged-stats");
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("h", LoggedOptions({8, 8}, 2));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> keys = {1, 2, 3}, values = {10, 20, 30};
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, 3u);
  EXPECT_EQ(stats->mode, "logged");
  EXPECT_EQ(*stats->Property("gphash.batch-entries"), 16);
  EXPECT_EQ(*stats->Property("gphash.log-batches"), 2);
  EXPECT_EQ(*stats->Property("gphash.log-bytes"), 24 + 3 * 16);
  EXPECT_EQ(*stats->Property("gphash.applied-seq"), 1);
  EXPECT_EQ(*stats->Property("gphash.checkpoints"), 0);
  // The batch's time, and its steps within it.
  EXPECT_EQ(*stats->Property("gphash.write-batches"), 1);
  EXPECT_GT(*stats->Property("gphash.write-ns"), 0);
  EXPECT_GT(*stats->Property("gphash.write-record-ns"), 0);
  EXPECT_GE(*stats->Property("gphash.write-ns"), *stats->Property("gphash.write-record-ns") +
                                                     *stats->Property("gphash.write-sync-ns") +
                                                     *stats->Property("gphash.write-index-ns"));
  EXPECT_EQ((*table)->options().hash_log.log_batches, 2u);
  // The catalog keeps the mode: a reopened table is logged too.
  ASSERT_TRUE((*db)->Close().ok());
  auto reopened = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(reopened.ok());
  auto again = (*reopened)->OpenTable("h");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->options().hash_log.log_batches, 2u);
  EXPECT_EQ((*again)->options().hash_log.batch_entries, 16u);
  // The open's steps: the batch's record was replayed (no checkpoint yet,
  // so the image is empty), and the index made.
  auto opened = (*again)->Stats();
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->keys, 3u);
  EXPECT_GT(*opened->Property("gphash.open-index-ns"), 0);
  EXPECT_GT(*opened->Property("gphash.open-replay-ns"), 0);
  EXPECT_TRUE(opened->Property("gphash.open-check-ns").has_value());
  EXPECT_TRUE(opened->Property("gphash.open-image-ns").has_value());
  EXPECT_EQ(*opened->Property("gphash.write-batches"), 0);
}

TEST(GphashLogged, ReadersBesideAWriterSeeOnlyValuesItWrote) {
  testutil::TempPool pool("gphash-logged-readers");
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("h", LoggedOptions({8, 8}));
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  constexpr uint64_t kKeys = 500, kVersions = 40;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  auto reader = [&]() {
    std::vector<uint64_t> keys(kKeys), values(kKeys);
    for (uint64_t key = 0; key < kKeys; ++key) keys[key] = key;
    std::vector<uint8_t> found(kKeys);
    while (!done.load()) {
      if (!(*table)->Get(keys, values, found).ok()) ++bad;
      for (uint64_t key = 0; key < kKeys; ++key) {
        // Values are version * 1000 + key: a value of another key, or torn,
        // would show.
        if (found[key] && values[key] % 1000 != key) ++bad;
      }
      ++reads;
    }
  };
  std::thread readers[2] = {std::thread(reader), std::thread(reader)};
  while (reads.load() == 0) std::this_thread::yield();  // the readers run beside the writes
  for (uint64_t version = 1; version <= kVersions; ++version) {
    std::vector<uint64_t> keys, values;
    for (uint64_t key = version % 2; key < kKeys; key += 2) {
      keys.push_back(key);
      values.push_back(version * 1000 + key);
    }
    ASSERT_TRUE((*table)->Put(keys, values).ok());
  }
  done = true;
  for (std::thread& thread : readers) thread.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, kKeys);
}

TEST(GphashLogged, BadLogOptionsAreRefused) {
  testutil::TempPool pool("gphash-logged-options");
  auto db = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(db.ok());
  TableOptions options = LoggedOptions({8, 8});
  options.hash_log.batch_entries = 1000;
  Status status = (*db)->CreateTable("a", options).status();
  EXPECT_TRUE(status.IsInvalidArgument()) << status.ToString();
  EXPECT_NE(status.message().find("batch entries 1000"), std::string::npos) << status.ToString();
  options = LoggedOptions({8, 8}, 2000);
  status = (*db)->CreateTable("b", options).status();
  EXPECT_TRUE(status.IsInvalidArgument()) << status.ToString();
  EXPECT_NE(status.message().find("log batches 2000"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace gpkv
