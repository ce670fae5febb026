// Snapshots of volatile ordered tables: a read through a snapshot sees the
// table exactly as it was when the snapshot was taken while writers go on
// (checked against the oracle replayed to the snapshot's timestamp); old
// versions stay while a snapshot sees them and are reclaimed once none does;
// a snapshot is refused by another table, by writes and by tables that take
// none.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>

#include "btree/btree_test_util.h"

namespace gpkv::btreetest {
namespace {

BatchOptions At(const Snapshot& snapshot) {
  BatchOptions options;
  options.snapshot = &snapshot;
  return options;
}

TEST(GPKV_BTREE_SUITE(BtreeSnapshot), ReadsSeeTheTableAsItWasWhileWritesGoOn) {
  OpenTable open("basic");
  Table& table = *open.table;
  ASSERT_TRUE(table.Put(std::vector<uint64_t>{1, 2, 3}, std::vector<uint64_t>{10, 20, 30}).ok());
  auto snapshot = table.TakeSnapshot();
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ((*snapshot)->timestamp(), 1u);
  ASSERT_TRUE(table.Put(std::vector<uint64_t>{2, 4}, std::vector<uint64_t>{21, 40}).ok());
  ASSERT_TRUE(table.Erase(std::vector<uint64_t>{1}).ok());

  std::vector<uint64_t> keys{1, 2, 3, 4}, values(4);
  std::vector<uint8_t> found(4);
  ASSERT_TRUE(table.Get(keys, values, found, At(**snapshot)).ok());
  EXPECT_EQ(values, (std::vector<uint64_t>{10, 20, 30, 0}));
  EXPECT_EQ(found, (std::vector<uint8_t>{1, 1, 1, 0}));
  ASSERT_TRUE(table.Get(keys, values, found).ok());
  EXPECT_EQ(values, (std::vector<uint64_t>{0, 21, 30, 40}));

  std::vector<uint64_t> lo{0}, hi{10}, counts(1);
  ASSERT_TRUE(table.Count(lo, hi, counts, At(**snapshot)).ok());
  EXPECT_EQ(counts[0], 3u);
  std::vector<uint64_t> probe{0}, neighbour(1), value(1);
  std::vector<uint8_t> was_found(1);
  ASSERT_TRUE(table.Successor(probe, neighbour, value, was_found, At(**snapshot)).ok());
  EXPECT_EQ(neighbour[0], 1u);
  ASSERT_TRUE(table.Successor(probe, neighbour, value, was_found).ok());
  EXPECT_EQ(neighbour[0], 2u);
  probe[0] = 100;
  ASSERT_TRUE(table.Predecessor(probe, neighbour, value, was_found, At(**snapshot)).ok());
  EXPECT_EQ(neighbour[0], 3u);
  ASSERT_TRUE(table.Predecessor(probe, neighbour, value, was_found).ok());
  EXPECT_EQ(neighbour[0], 4u);

  // Keys 1 and 2 hold two versions each (1: its erased value and the
  // tombstone) while the snapshot lives.
  EXPECT_EQ(Property(table, "btree.versions"), 6.0);
  EXPECT_EQ(Property(table, "btree.tombstones"), 1.0);
  EXPECT_EQ(Property(table, "btree.snapshots"), 1.0);
  snapshot->reset();
  EXPECT_EQ(Property(table, "btree.versions"), 3.0);
  EXPECT_EQ(Property(table, "btree.tombstones"), 0.0);
  EXPECT_EQ(Property(table, "btree.snapshots"), 0.0);
  EXPECT_EQ(Property(table, "btree.reclaimed"), 3.0);
}

// One writer applies random batches over a small key space (so that keys
// are overwritten and erased under live snapshots) and logs each; readers
// take snapshots and read through them at once and again later, while the
// writer goes on. Afterwards each read is checked against the oracle
// replayed to its snapshot's timestamp: batch t is the table's t-th write.
TEST(GPKV_BTREE_SUITE(BtreeSnapshot), ReadsThroughASnapshotEqualTheOracleAtItsTimestamp) {
  OpenTable open("linearizable", VolatileOrdered(), /*threads=*/2);
  Table& table = *open.table;
  constexpr uint64_t kKeySpace = 2048;
  struct Batch {
    std::vector<uint64_t> keys, values;  // values empty: an erase
  };
  std::vector<Batch> log;  // written by the writer only; read after it is joined
  struct Read {
    uint64_t timestamp = 0;
    std::vector<std::pair<uint64_t, uint64_t>> range;  // the whole table
    std::vector<std::pair<uint64_t, uint64_t>> gets;   // key, value (0 = absent)
    std::vector<std::pair<uint64_t, uint64_t>> later;  // the whole table, read again later
  };
  std::mutex reads_mutex;
  std::vector<Read> reads;
  std::atomic<bool> writing{true};
  std::atomic<int> snapshots_taken{0};

  // The writer goes on until the readers have taken snapshots among its
  // batches, however the threads are scheduled.
  std::thread writer([&] {
    std::mt19937_64 random(7);
    for (int round = 1; round <= 1500 || (snapshots_taken.load() < 40 && round <= 200000);
         ++round) {
      Batch batch;
      const size_t n = 1 + random() % 48;
      for (size_t i = 0; i < n; ++i) batch.keys.push_back(random() % kKeySpace);
      if (random() % 3 == 0) {
        ASSERT_TRUE(table.Erase(batch.keys).ok());
      } else {
        for (size_t i = 0; i < n; ++i) batch.values.push_back(uint64_t(round) << 32 | i);
        ASSERT_TRUE(table.Put(batch.keys, batch.values).ok());
      }
      log.push_back(std::move(batch));
    }
    writing.store(false);
  });
  auto read_all = [&](const Snapshot& snapshot) {
    std::vector<uint64_t> lo{0}, hi{~uint64_t{0}};
    Table::RangeResults results;
    EXPECT_TRUE(table.Range(lo, hi, &results, At(snapshot)).ok());
    return RangePairs(results, 0);
  };
  std::vector<std::thread> readers;
  for (int reader = 0; reader < 2; ++reader) {
    readers.emplace_back([&, reader] {
      std::mt19937_64 random(reader);
      std::vector<std::pair<std::unique_ptr<Snapshot>, Read>> held;
      while (writing.load()) {
        auto snapshot = table.TakeSnapshot();
        ASSERT_TRUE(snapshot.ok());
        snapshots_taken.fetch_add(1);
        Read read;
        read.timestamp = (*snapshot)->timestamp();
        read.range = read_all(**snapshot);
        std::vector<uint64_t> keys(64), values(64);
        std::vector<uint8_t> found(64);
        for (uint64_t& key : keys) key = random() % kKeySpace;
        EXPECT_TRUE(table.Get(keys, values, found, At(**snapshot)).ok());
        for (size_t i = 0; i < keys.size(); ++i) {
          read.gets.emplace_back(keys[i], found[i] ? values[i] : 0);
        }
        held.emplace_back(std::move(*snapshot), std::move(read));
        // Some snapshots are read again after more writes, then released.
        if (held.size() > 3 || random() % 2 == 0) {
          auto& [old_snapshot, old_read] = held.front();
          old_read.later = read_all(*old_snapshot);
          std::lock_guard<std::mutex> lock(reads_mutex);
          reads.push_back(std::move(old_read));
          held.erase(held.begin());
        }
      }
      for (auto& [snapshot, read] : held) {
        read.later = read_all(*snapshot);
        std::lock_guard<std::mutex> lock(reads_mutex);
        reads.push_back(std::move(read));
      }
    });
  }
  writer.join();
  for (std::thread& reader : readers) reader.join();
  ASSERT_GT(reads.size(), 10u);

  std::sort(reads.begin(), reads.end(),
            [](const Read& a, const Read& b) { return a.timestamp < b.timestamp; });
  Oracle oracle;
  size_t applied = 0;
  size_t checked_mid_run = 0;
  for (const Read& read : reads) {
    ASSERT_LE(read.timestamp, log.size());
    for (; applied < read.timestamp; ++applied) {
      const Batch& batch = log[applied];
      for (size_t i = 0; i < batch.keys.size(); ++i) {
        if (batch.values.empty()) {
          oracle.erase(batch.keys[i]);
        } else {
          oracle[batch.keys[i]] = batch.values[i];
        }
      }
    }
    const std::vector<std::pair<uint64_t, uint64_t>> expected(oracle.begin(), oracle.end());
    ASSERT_EQ(read.range, expected) << "snapshot at " << read.timestamp;
    ASSERT_EQ(read.later, expected) << "snapshot at " << read.timestamp << ", read later";
    for (const auto& [key, value] : read.gets) {
      auto it = oracle.find(key);
      ASSERT_EQ(value, it == oracle.end() ? 0 : it->second) << "key " << key;
    }
    if (read.timestamp > 0 && read.timestamp < log.size()) ++checked_mid_run;
  }
  EXPECT_GT(checked_mid_run, 0u) << "no snapshot was taken while the writer ran";
  // Every snapshot is gone: one version per live key is left.
  for (; applied < log.size(); ++applied) {
    const Batch& batch = log[applied];
    for (size_t i = 0; i < batch.keys.size(); ++i) {
      if (batch.values.empty()) {
        oracle.erase(batch.keys[i]);
      } else {
        oracle[batch.keys[i]] = batch.values[i];
      }
    }
  }
  EXPECT_EQ(Property(table, "btree.versions"), static_cast<double>(oracle.size()));
  EXPECT_EQ(table.Stats()->keys, oracle.size());
}

TEST(GPKV_BTREE_SUITE(BtreeSnapshot), ReleasingSnapshotsReclaimsTheVersionsOnlyTheySaw) {
  OpenTable open("reclaim");
  Table& table = *open.table;
  constexpr uint64_t kKeys = 1000;
  std::vector<uint64_t> keys(kKeys), values(kKeys);
  for (uint64_t i = 0; i < kKeys; ++i) keys[i] = i;
  std::vector<std::unique_ptr<Snapshot>> snapshots;
  for (uint64_t round = 0; round < 5; ++round) {
    for (uint64_t i = 0; i < kKeys; ++i) values[i] = round * kKeys + i;
    ASSERT_TRUE(table.Put(keys, values).ok());
    auto snapshot = table.TakeSnapshot();
    ASSERT_TRUE(snapshot.ok());
    snapshots.push_back(std::move(*snapshot));
  }
  // Overwritten once more: each snapshot sees its own round's version.
  for (uint64_t i = 0; i < kKeys; ++i) values[i] = 99;
  ASSERT_TRUE(table.Put(keys, values).ok());
  EXPECT_EQ(Property(table, "btree.versions"), 6.0 * kKeys);

  // Releasing the middle snapshots frees exactly their versions; the
  // oldest and newest snapshots still read theirs.
  snapshots[1].reset();
  snapshots[2].reset();
  snapshots[3].reset();
  EXPECT_EQ(Property(table, "btree.versions"), 3.0 * kKeys);
  std::vector<uint64_t> read(kKeys);
  std::vector<uint8_t> found(kKeys);
  ASSERT_TRUE(table.Get(keys, read, found, At(*snapshots[0])).ok());
  EXPECT_EQ(read[7], 7u);
  ASSERT_TRUE(table.Get(keys, read, found, At(*snapshots[4])).ok());
  EXPECT_EQ(read[7], 4 * kKeys + 7);

  // Erased under a snapshot: the tombstone stays until it is released.
  ASSERT_TRUE(table.Erase(keys).ok());
  EXPECT_EQ(Property(table, "btree.tombstones"), static_cast<double>(kKeys));
  snapshots.clear();
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, 0u);
  EXPECT_EQ(stats->Property("btree.versions"), 0.0);
  EXPECT_EQ(stats->Property("btree.tombstones"), 0.0);

  // Writes with no snapshot update in place: no version is added.
  ASSERT_TRUE(table.Put(keys, values).ok());
  ASSERT_TRUE(table.Put(keys, values).ok());
  EXPECT_EQ(Property(table, "btree.versions"), static_cast<double>(kKeys));
}

TEST(GPKV_BTREE_SUITE(BtreeSnapshot), CompactReclaimsWithoutAWrite) {
  OpenTable open("compact");
  Table& table = *open.table;
  std::vector<uint64_t> keys{5}, values{1};
  ASSERT_TRUE(table.Put(keys, values).ok());
  auto snapshot = table.TakeSnapshot();
  ASSERT_TRUE(snapshot.ok());
  values[0] = 2;
  ASSERT_TRUE(table.Put(keys, values).ok());
  snapshot->reset();
  ASSERT_TRUE(table.Compact().ok());
  EXPECT_EQ(Property(table, "btree.versions"), 1.0);
}

TEST(GPKV_BTREE_SUITE(BtreeSnapshot), ScanSeesTheTableAtItsStartAndMayWrite) {
  OpenTable open("scan");
  Table& table = *open.table;
  std::vector<uint64_t> keys(10000), values(10000);
  for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = values[i] = i;
  ASSERT_TRUE(table.Put(keys, values).ok());
  uint64_t visited = 0;
  ASSERT_TRUE(table
                  .Scan([&](const uint8_t* key, const uint8_t*) {
                    uint64_t k;
                    std::memcpy(&k, key, 8);
                    EXPECT_EQ(k, visited);
                    ++visited;
                    // Erases a key the scan has not reached yet.
                    std::vector<uint64_t> later{k + 5000};
                    EXPECT_TRUE(table.Erase(later).ok());
                    return true;
                  })
                  .ok());
  EXPECT_EQ(visited, keys.size());
  EXPECT_EQ(table.Stats()->keys, 5000u);
}

TEST(GPKV_BTREE_SUITE(BtreeSnapshot), ASnapshotIsRefusedByOtherTablesAndByWrites) {
  OpenTable open("refused");
  Table& table = *open.table;
  auto other = open.db->CreateTable("other", VolatileOrdered());
  ASSERT_TRUE(other.ok());
  auto snapshot = table.TakeSnapshot();
  ASSERT_TRUE(snapshot.ok());
  std::vector<uint64_t> keys{1}, values(1);
  std::vector<uint8_t> found(1);
  Status status = (*other)->Get(keys, values, found, At(**snapshot));
  EXPECT_TRUE(status.IsInvalidArgument()) << status.ToString();
  EXPECT_NE(status.message().find("another table"), std::string::npos) << status.ToString();
  status = table.Put(keys, values, At(**snapshot));
  EXPECT_TRUE(status.IsInvalidArgument()) << status.ToString();
  status = table.Erase(keys, {}, At(**snapshot));
  EXPECT_TRUE(status.IsInvalidArgument()) << status.ToString();

  // Tables of the other families take no snapshots, nor another's.
  TableOptions hash;
  hash.expected_keys = 1000;
  auto persistent_hash = open.db->CreateTable("hash", hash);
  ASSERT_TRUE(persistent_hash.ok());
  EXPECT_TRUE((*persistent_hash)->TakeSnapshot().status().IsUnsupported());
  EXPECT_TRUE((*persistent_hash)->Get(keys, values, found, At(**snapshot)).IsInvalidArgument());
  TableOptions ordered;
  ordered.kind = TableKind::kOrdered;
  auto lsm = open.db->CreateTable("lsm", ordered);
  ASSERT_TRUE(lsm.ok());
  EXPECT_TRUE((*lsm)->TakeSnapshot().status().IsUnsupported());
  std::vector<uint64_t> lo{0}, hi{9};
  Table::RangeResults results;
  EXPECT_TRUE((*lsm)->Range(lo, hi, &results, At(**snapshot)).IsInvalidArgument());

  // A snapshot may outlive its table and DB.
  ASSERT_TRUE(open.db->Close().ok());
  open.db.reset();
  snapshot->reset();
}

}  // namespace
}  // namespace gpkv::btreetest
