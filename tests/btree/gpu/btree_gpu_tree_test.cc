// The GPU B-link tree under the loads that find its bugs: many concurrent
// inserts into one leaf region (splits under contention, root splits, the
// node arena growing mid-batch), bulk builds, wide keys ordered by their last
// word first, values of 1..128 bytes, and the reclamation of versions and
// tombstones, every result checked against a std::map.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "btree/btree_test_util.h"
#include "btree/gpu/device_environment.h"

namespace gpkv::btreetest {
namespace {

// A DB on the GPU with one volatile ordered table.
struct GpuTable {
  GpuTable(const std::string& tag, TableOptions options) : temp("btree-gpu-" + tag) {
    auto opened = DB::Open(temp.path(), testutil::DbOptions(uint64_t{16} << 20, 2, Backend::kCuda));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    db = std::move(*opened);
    auto created = db->CreateTable("t", options);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    table = *created;
  }
  testutil::TempPool temp;
  std::unique_ptr<DB> db;
  Table* table = nullptr;
};

// Checks every read of `table` against `oracle` for `probes` keys.
void CheckAgainst(Table& table, const WideOracle& oracle, uint32_t key_size, uint32_t value_size,
                  const std::vector<WideKey>& probes) {
  const size_t n = probes.size();
  std::vector<uint8_t> keys(n * key_size);
  for (size_t i = 0; i < n; ++i) std::memcpy(&keys[i * key_size], probes[i].data(), key_size);
  const WideLess less{key_size / 8};
  // Get.
  std::vector<uint8_t> values(n * value_size), found(n);
  ASSERT_TRUE(table.Get(keys, values, found).ok());
  for (size_t i = 0; i < n; ++i) {
    auto it = oracle.find(probes[i]);
    ASSERT_EQ(found[i], it != oracle.end() ? 1 : 0) << "get " << i;
    if (it != oracle.end()) {
      ASSERT_EQ(0, std::memcmp(&values[i * value_size], it->second.data(), value_size)) << i;
    }
  }
  // Successor and predecessor.
  std::vector<uint8_t> neighbours(n * key_size);
  ASSERT_TRUE(table.Successor(keys, neighbours, values, found).ok());
  for (size_t i = 0; i < n; ++i) {
    auto it = oracle.lower_bound(probes[i]);
    ASSERT_EQ(found[i], it != oracle.end() ? 1 : 0) << "successor " << i;
    if (it != oracle.end()) {
      ASSERT_TRUE(LoadKey(&neighbours[i * key_size], key_size) == it->first) << i;
      ASSERT_EQ(0, std::memcmp(&values[i * value_size], it->second.data(), value_size)) << i;
    }
  }
  ASSERT_TRUE(table.Predecessor(keys, neighbours, values, found).ok());
  for (size_t i = 0; i < n; ++i) {
    auto it = oracle.upper_bound(probes[i]);
    const bool has = it != oracle.begin();
    ASSERT_EQ(found[i], has ? 1 : 0) << "predecessor " << i;
    if (has) {
      --it;
      ASSERT_TRUE(LoadKey(&neighbours[i * key_size], key_size) == it->first) << i;
    }
  }
  // Count and Range from each probe to the next probe in key order.
  std::vector<WideKey> sorted = probes;
  std::sort(sorted.begin(), sorted.end(), less);
  std::vector<uint8_t> lo(n * key_size), hi(n * key_size);
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(&lo[i * key_size], sorted[i].data(), key_size);
    std::memcpy(&hi[i * key_size], sorted[std::min(i + 3, n - 1)].data(), key_size);
  }
  std::vector<uint64_t> counts(n);
  ASSERT_TRUE(table.Count(lo, hi, counts).ok());
  Table::RangeResults results;
  ASSERT_TRUE(table.Range(lo, hi, &results).ok());
  ASSERT_EQ(results.offsets.size(), n + 1);
  for (size_t i = 0; i < n; ++i) {
    const WideKey low = sorted[i];
    const WideKey high = sorted[std::min(i + 3, n - 1)];
    uint64_t expected = 0;
    uint64_t at = results.offsets[i];
    for (auto it = oracle.lower_bound(low); it != oracle.end() && !less(high, it->first); ++it) {
      ASSERT_LT(at, results.offsets[i + 1]) << "range " << i;
      ASSERT_TRUE(LoadKey(&results.keys[at * key_size], key_size) == it->first) << i;
      ASSERT_EQ(0, std::memcmp(&results.values[at * value_size], it->second.data(), value_size));
      ++at;
      ++expected;
    }
    ASSERT_EQ(at, results.offsets[i + 1]) << "range " << i;
    ASSERT_EQ(counts[i], expected) << "count " << i;
  }
}

// Every pair, in order, through Scan.
void CheckScan(Table& table, const WideOracle& oracle, uint32_t key_size, uint32_t value_size) {
  auto it = oracle.begin();
  size_t seen = 0;
  ASSERT_TRUE(table
                  .Scan([&](const uint8_t* key, const uint8_t* value) {
                    EXPECT_TRUE(it != oracle.end());
                    if (it == oracle.end()) return false;
                    EXPECT_TRUE(LoadKey(key, key_size) == it->first) << "scan pair " << seen;
                    EXPECT_EQ(0, std::memcmp(value, it->second.data(), value_size));
                    ++it;
                    ++seen;
                    return true;
                  })
                  .ok());
  EXPECT_EQ(seen, oracle.size());
}

// Puts `keys` with random values into table and oracle (one batch).
void PutAll(Table& table, WideOracle& oracle, const std::vector<WideKey>& keys, uint32_t key_size,
            uint32_t value_size, std::mt19937_64& random) {
  std::vector<uint8_t> key_bytes(keys.size() * key_size), values(keys.size() * value_size);
  for (size_t i = 0; i < keys.size(); ++i) {
    std::memcpy(&key_bytes[i * key_size], keys[i].data(), key_size);
    for (uint32_t b = 0; b < value_size; ++b) values[i * value_size + b] = random() & 0xff;
  }
  ASSERT_TRUE(table.Put(key_bytes, values).ok());
  // The last put of a repeated key wins.
  for (size_t i = 0; i < keys.size(); ++i) {
    oracle[keys[i]].assign(&values[i * value_size], &values[(i + 1) * value_size]);
  }
}

void EraseAll(Table& table, WideOracle& oracle, const std::vector<WideKey>& keys,
              uint32_t key_size) {
  std::vector<uint8_t> key_bytes(keys.size() * key_size), erased(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    std::memcpy(&key_bytes[i * key_size], keys[i].data(), key_size);
  }
  ASSERT_TRUE(table.Erase(key_bytes, erased).ok());
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool first = std::find(keys.begin(), keys.begin() + i, keys[i]) == keys.begin() + i;
    const bool expected = first && oracle.count(keys[i]) == 1;
    ASSERT_EQ(erased[i], expected ? 1 : 0) << "erase " << i;
  }
  for (const WideKey& key : keys) oracle.erase(key);
}

std::vector<WideKey> Sample(const WideOracle& oracle, size_t n, std::mt19937_64& random,
                            uint32_t key_size) {
  std::vector<WideKey> probes;
  std::vector<WideKey> present;
  for (const auto& pair : oracle) present.push_back(pair.first);
  for (size_t i = 0; i < n; ++i) {
    if (!present.empty() && random() % 2 == 0) {
      probes.push_back(present[random() % present.size()]);
    } else {
      WideKey key{};
      for (uint32_t w = 0; w < key_size / 8; ++w)
        key[w] = random() % 4 == 0 ? random() : random() % 1000000;
      probes.push_back(key);
    }
  }
  return probes;
}

TEST(BtreeGpuTree, ManyInsertsIntoOneLeafRegionSplitUnderContention) {
  GpuTable open("contention", VolatileOrdered());
  Table& table = *open.table;
  std::mt19937_64 random(7);
  WideOracle oracle(WideLess{1});
  // A sparse tree built in bulk: keys i << 32.
  std::vector<WideKey> keys;
  for (uint64_t i = 0; i < 2000; ++i) keys.push_back(WideKey{i << 32});
  ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 8, random));
  // Then 300000 keys between two neighbours in one batch: every warp of the
  // launch splits the same few leaves and their parents.
  constexpr uint64_t kRegion = uint64_t{1000} << 32;
  keys.clear();
  for (uint64_t i = 0; i < 300000; ++i) keys.push_back(WideKey{kRegion + 2 * i + 1});
  std::shuffle(keys.begin(), keys.end(), random);
  ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 8, random));
  // And as many between those, with repeats and keys already there.
  keys.clear();
  for (uint64_t i = 0; i < 300000; ++i) keys.push_back(WideKey{kRegion + random() % 600000});
  ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 8, random));
  EXPECT_EQ(Property(table, "btree.versions"), static_cast<double>(oracle.size()));
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, oracle.size());
  EXPECT_EQ(stats->backend, "cuda");
  ASSERT_NO_FATAL_FAILURE(CheckAgainst(table, oracle, 8, 8, Sample(oracle, 20000, random, 8)));
  ASSERT_NO_FATAL_FAILURE(CheckScan(table, oracle, 8, 8));
}

TEST(BtreeGpuTree, RandomBatchesIntoASmallTreeGrowTheArenaMidBatch) {
  GpuTable open("random", VolatileOrdered());
  Table& table = *open.table;
  std::mt19937_64 random(11);
  WideOracle oracle(WideLess{1});
  std::vector<WideKey> keys{WideKey{5}, WideKey{~uint64_t{0}}, WideKey{0}};
  ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 8, random));
  for (int round = 0; round < 6; ++round) {
    keys.clear();
    const size_t n = round % 2 == 0 ? 400000 : 5000;
    for (size_t i = 0; i < n; ++i) keys.push_back(WideKey{random()});
    ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 8, random));
    // Erase some present keys and some absent ones.
    keys = Sample(oracle, 20000, random, 8);
    ASSERT_NO_FATAL_FAILURE(EraseAll(table, oracle, keys, 8));
    ASSERT_NO_FATAL_FAILURE(CheckAgainst(table, oracle, 8, 8, Sample(oracle, 5000, random, 8)));
  }
  ASSERT_NO_FATAL_FAILURE(CheckScan(table, oracle, 8, 8));
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, oracle.size());
}

TEST(BtreeGpuTree, BulkBuildThenEveryRead) {
  // One leaf; one parent, full or not; a leaf tile (126 leaves of 6 keys
  // with 8-byte keys), full or one key more, its last parent over fewer
  // leaves; many tiles.
  for (uint64_t n : {1ull, 6ull, 7ull, 8ull, 9ull, 36ull, 37ull, 64ull, 65ull, 513ull, 755ull,
                     756ull, 757ull, 763ull, 100000ull}) {
    SCOPED_TRACE("keys " + std::to_string(n));
    GpuTable open("bulk-" + std::to_string(n), VolatileOrdered());
    Table& table = *open.table;
    std::mt19937_64 random(n);
    WideOracle oracle(WideLess{1});
    std::vector<WideKey> keys;
    for (uint64_t i = 0; i < n; ++i) keys.push_back(WideKey{i * 3 + 1});
    std::shuffle(keys.begin(), keys.end(), random);
    ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 8, random));
    std::vector<WideKey> probes;
    for (uint64_t i = 0; i < 3 * n + 3 && i < 30000; ++i) probes.push_back(WideKey{i});
    probes.push_back(WideKey{~uint64_t{0}});
    ASSERT_NO_FATAL_FAILURE(CheckAgainst(table, oracle, 8, 8, probes));
    ASSERT_NO_FATAL_FAILURE(CheckScan(table, oracle, 8, 8));
    // Inserts between the built keys split the full leaves.
    keys.clear();
    for (uint64_t i = 0; i < n; ++i) keys.push_back(WideKey{i * 3 + 2});
    ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 8, random));
    ASSERT_NO_FATAL_FAILURE(CheckAgainst(table, oracle, 8, 8, probes));
    ASSERT_NO_FATAL_FAILURE(CheckScan(table, oracle, 8, 8));
  }
}

TEST(BtreeGpuTree, WideKeysOrderByTheirLastWordFirst) {
  for (uint32_t key_size : {16u, 32u}) {
    SCOPED_TRACE("key size " + std::to_string(key_size));
    GpuTable open("wide-" + std::to_string(key_size), VolatileOrdered(key_size, 8));
    Table& table = *open.table;
    std::mt19937_64 random(key_size);
    WideOracle oracle(WideLess{key_size / 8});
    for (int round = 0; round < 4; ++round) {
      std::vector<WideKey> keys;
      for (int i = 0; i < 50000; ++i) {
        WideKey key{};
        // Few distinct high words: the order turns on every word.
        for (uint32_t w = 0; w < key_size / 8; ++w) key[w] = random() % 4;
        key[0] = random();
        keys.push_back(key);
      }
      ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, key_size, 8, random));
      ASSERT_NO_FATAL_FAILURE(
          EraseAll(table, oracle, Sample(oracle, 5000, random, key_size), key_size));
      ASSERT_NO_FATAL_FAILURE(
          CheckAgainst(table, oracle, key_size, 8, Sample(oracle, 5000, random, key_size)));
    }
    ASSERT_NO_FATAL_FAILURE(CheckScan(table, oracle, key_size, 8));
  }
}

TEST(BtreeGpuTree, ValuesOfOneTo128Bytes) {
  for (uint32_t value_size : {1u, 3u, 8u, 9u, 17u, 64u, 128u}) {
    SCOPED_TRACE("value size " + std::to_string(value_size));
    GpuTable open("values-" + std::to_string(value_size), VolatileOrdered(8, value_size));
    Table& table = *open.table;
    std::mt19937_64 random(value_size);
    WideOracle oracle(WideLess{1});
    for (int round = 0; round < 4; ++round) {
      std::vector<WideKey> keys;
      for (int i = 0; i < 20000; ++i) keys.push_back(WideKey{random() % 50000});
      ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, value_size, random));
      // A snapshot keeps old values while they are overwritten.
      auto snapshot = table.TakeSnapshot();
      ASSERT_TRUE(snapshot.ok());
      const WideOracle before = oracle;
      keys = Sample(oracle, 10000, random, 8);
      ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, value_size, random));
      ASSERT_NO_FATAL_FAILURE(EraseAll(table, oracle, Sample(oracle, 3000, random, 8), 8));
      std::vector<uint8_t> probe(8 * 1000), values(1000 * value_size), found(1000);
      std::vector<WideKey> probes = Sample(before, 1000, random, 8);
      for (size_t i = 0; i < probes.size(); ++i) std::memcpy(&probe[i * 8], probes[i].data(), 8);
      BatchOptions at;
      at.snapshot = snapshot->get();
      ASSERT_TRUE(table.Get(probe, values, found, at).ok());
      for (size_t i = 0; i < probes.size(); ++i) {
        auto it = before.find(probes[i]);
        ASSERT_EQ(found[i], it != before.end() ? 1 : 0) << i;
        if (it != before.end()) {
          ASSERT_EQ(0, std::memcmp(&values[i * value_size], it->second.data(), value_size));
        }
      }
      snapshot->reset();
      ASSERT_NO_FATAL_FAILURE(
          CheckAgainst(table, oracle, 8, value_size, Sample(oracle, 3000, random, 8)));
    }
    ASSERT_NO_FATAL_FAILURE(CheckScan(table, oracle, 8, value_size));
  }
}

TEST(BtreeGpuTree, ReclamationFreesVersionsAndTheirSlotsAreReused) {
  GpuTable open("reclaim", VolatileOrdered(8, 64));
  Table& table = *open.table;
  std::mt19937_64 random(3);
  WideOracle oracle(WideLess{1});
  constexpr uint64_t kKeys = 50000;
  std::vector<WideKey> keys;
  for (uint64_t i = 0; i < kKeys; ++i) keys.push_back(WideKey{i * 7});
  ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 64, random));
  uint64_t bytes = 0;
  for (int round = 0; round < 5; ++round) {
    auto snapshot = table.TakeSnapshot();
    ASSERT_TRUE(snapshot.ok());
    ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 64, random));
    EXPECT_EQ(Property(table, "btree.versions"), 2.0 * kKeys);
    snapshot->reset();
    ASSERT_TRUE(table.Compact().ok());
    EXPECT_EQ(Property(table, "btree.versions"), static_cast<double>(kKeys));
    EXPECT_GE(Property(table, "btree.reclaimed"), (round + 1.0) * kKeys);
    // The freed slots are taken again: memory stops growing after round 0.
    auto stats = table.Stats();
    ASSERT_TRUE(stats.ok());
    if (round == 1) bytes = stats->bytes;
    if (round > 1) EXPECT_EQ(stats->bytes, bytes);
  }
  // Erased under a snapshot, then released: the keys leave the tree.
  auto snapshot = table.TakeSnapshot();
  ASSERT_TRUE(snapshot.ok());
  ASSERT_NO_FATAL_FAILURE(EraseAll(table, oracle, keys, 8));
  EXPECT_EQ(Property(table, "btree.tombstones"), static_cast<double>(kKeys));
  snapshot->reset();
  ASSERT_TRUE(table.Compact().ok());
  EXPECT_EQ(Property(table, "btree.versions"), 0.0);
  EXPECT_EQ(Property(table, "btree.tombstones"), 0.0);
  ASSERT_NO_FATAL_FAILURE(CheckAgainst(table, oracle, 8, 64, Sample(oracle, 1000, random, 8)));
  // An empty tree again: the next put batch builds it in bulk.
  ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 64, random));
  ASSERT_NO_FATAL_FAILURE(CheckAgainst(table, oracle, 8, 64, Sample(oracle, 5000, random, 8)));
  ASSERT_NO_FATAL_FAILURE(CheckScan(table, oracle, 8, 64));
}

// Read batches large enough to be sorted by their keys' (a range's lo
// bound's) leading bits before the descent, the queries in random order:
// every answer in its query's place. Gets, counts, ranges (every pair, the
// smallest 5) from host memory, and RangeOnDevice.
TEST(BtreeGpuTree, LargeReadBatchesAnswerInTheCallersOrder) {
  GpuTable open("large-reads", VolatileOrdered());
  Table& table = *open.table;
  std::mt19937_64 random(11);
  WideOracle oracle(WideLess{1});
  std::vector<WideKey> keys;
  for (int i = 0; i < 200000; ++i) keys.push_back(WideKey{random() | 1});
  ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 8, random));
  constexpr size_t kQueries = size_t{1} << 17;  // past the sort's threshold, 2^16
  std::vector<uint64_t> probes(kQueries), lo(kQueries), hi(kQueries);
  const uint64_t gap = ~uint64_t{0} / keys.size();  // between keys, on average
  for (size_t i = 0; i < kQueries; ++i) {
    // Half present keys, half anywhere; ranges of 0-32 gaps, ~16 keys.
    probes[i] = i % 2 == 0 ? keys[random() % keys.size()][0] : random();
    lo[i] = random();
    hi[i] = lo[i] + (random() % 32) * gap + random() % gap;
    if (hi[i] < lo[i]) hi[i] = ~uint64_t{0};
  }
  std::vector<uint64_t> values(kQueries);
  std::vector<uint8_t> found(kQueries);
  ASSERT_TRUE(table.Get(probes, values, found).ok());
  for (size_t i = 0; i < kQueries; ++i) {
    auto it = oracle.find(WideKey{probes[i]});
    ASSERT_EQ(found[i], it != oracle.end() ? 1 : 0) << "get " << i;
    if (it != oracle.end()) {
      ASSERT_EQ(0, std::memcmp(&values[i], it->second.data(), 8)) << "get " << i;
    }
  }
  std::vector<uint64_t> counts(kQueries);
  ASSERT_TRUE(table.Count(lo, hi, counts).ok());
  constexpr uint64_t kAll = std::numeric_limits<uint64_t>::max();
  for (const uint64_t limit : {kAll, uint64_t{5}}) {
    SCOPED_TRACE(limit == kAll ? "every pair" : "the smallest 5");
    BatchOptions options;
    options.range_limit = limit;
    Table::RangeResults results;
    ASSERT_TRUE(table.Range(lo, hi, &results, options).ok());
    for (size_t i = 0; i < kQueries; ++i) {
      std::vector<WideKey> expected;
      for (auto it = oracle.lower_bound(WideKey{lo[i]});
           it != oracle.end() && it->first[0] <= hi[i]; ++it) {
        expected.push_back(it->first);
      }
      if (limit == kAll) ASSERT_EQ(counts[i], expected.size()) << "count " << i;
      if (expected.size() > limit) expected.resize(limit);
      ASSERT_EQ(results.offsets[i + 1] - results.offsets[i], expected.size()) << "range " << i;
      for (size_t k = 0; k < expected.size(); ++k) {
        const uint64_t at = results.offsets[i] + k;
        ASSERT_TRUE(LoadKey(&results.keys[at * 8], 8) == expected[k]) << "range " << i;
        ASSERT_EQ(0, std::memcmp(&results.values[at * 8], oracle.at(expected[k]).data(), 8));
      }
    }
    Table::DeviceRangeResults device;
    ASSERT_TRUE(table.RangeOnDevice(lo, hi, &device, options).ok());
    ASSERT_EQ(device.pairs, results.offsets.back());
    std::vector<uint64_t> offsets(kQueries + 1);
    std::vector<uint8_t> got_keys(device.pairs * 8);
    ASSERT_TRUE(gpu::CopyDeviceToHost(offsets.data(), device.offsets, offsets.size() * 8).ok());
    ASSERT_TRUE(gpu::CopyDeviceToHost(got_keys.data(), device.keys, got_keys.size()).ok());
    EXPECT_EQ(offsets, results.offsets);
    EXPECT_EQ(got_keys, results.keys);
  }
}

TEST(BtreeGpuTree, RangeOnDeviceEqualsRange) {
  GpuTable open("device-range", VolatileOrdered(8, 16));
  Table& table = *open.table;
  std::mt19937_64 random(5);
  WideOracle oracle(WideLess{1});
  std::vector<WideKey> keys;
  for (int i = 0; i < 100000; ++i) keys.push_back(WideKey{random() % 1000000});
  ASSERT_NO_FATAL_FAILURE(PutAll(table, oracle, keys, 8, 16, random));
  std::vector<uint64_t> lo(5000), hi(5000);
  for (size_t i = 0; i < lo.size(); ++i) {
    lo[i] = random() % 1000000;
    hi[i] = lo[i] + random() % 100;
  }
  for (bool limited : {false, true}) {
    BatchOptions options;
    if (limited) options.range_limit = 8;
    Table::RangeResults host;
    ASSERT_TRUE(table.Range(lo, hi, &host, options).ok());
    Table::DeviceRangeResults device;
    ASSERT_TRUE(table.RangeOnDevice(lo, hi, &device, options).ok());
    ASSERT_EQ(device.queries, lo.size());
    ASSERT_EQ(device.pairs, host.offsets.back());
    std::vector<uint64_t> offsets(lo.size() + 1);
    std::vector<uint8_t> got_keys(device.pairs * 8), got_values(device.pairs * 16);
    ASSERT_TRUE(gpu::CopyDeviceToHost(offsets.data(), device.offsets, offsets.size() * 8).ok());
    ASSERT_TRUE(gpu::CopyDeviceToHost(got_keys.data(), device.keys, got_keys.size()).ok());
    ASSERT_TRUE(gpu::CopyDeviceToHost(got_values.data(), device.values, got_values.size()).ok());
    EXPECT_EQ(offsets, host.offsets);
    EXPECT_EQ(got_keys, host.keys);
    EXPECT_EQ(got_values, host.values);
  }
}

}  // namespace
}  // namespace gpkv::btreetest
