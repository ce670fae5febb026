// The slab hash's CPU backend (libcuckoo) on its own: its counters, growth,
// Scan (and no device scan), the per-key order of a batch split among workers, and the errors it
// gives instead of throwing.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tables/slab_hash/cpu/backend.h"
#include "tables/slab_hash/family.h"
#include "tables/slab_hash/table.h"

namespace gpkv::slab_hash {
namespace {

TableOptions Sizes(uint32_t key_size, uint32_t value_size, uint64_t expected_keys) {
  TableOptions options;
  options.durability = Durability::kVolatile;
  options.key_size = key_size;
  options.value_size = value_size;
  options.expected_keys = expected_keys;
  return options;
}

std::unique_ptr<Backend> MakeBackend(const TableOptions& options, int threads = 4) {
  auto backend = cpu::CreateCpuBackend(options, threads);
  EXPECT_TRUE(backend.ok()) << backend.status().ToString();
  return backend.ok() ? std::move(*backend) : nullptr;
}

// Keys 0..count-1 (8 bytes), value = key * 3.
void PutSequential(Backend& backend, uint64_t first, uint64_t count) {
  std::vector<uint64_t> keys(count);
  std::vector<uint64_t> values(count);
  for (uint64_t i = 0; i < count; ++i) {
    keys[i] = first + i;
    values[i] = (first + i) * 3;
  }
  ASSERT_TRUE(backend
                  .Put(reinterpret_cast<const uint8_t*>(keys.data()),
                       reinterpret_cast<const uint8_t*>(values.data()), count, nullptr)
                  .ok());
}

TEST(SlabHashCpuBackend, StatsCountKeysSlotsAndMemory) {
  auto backend = MakeBackend(Sizes(8, 8, 1000));
  ASSERT_NE(backend, nullptr);
  auto empty = backend->Stats();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->keys, 0u);
  EXPECT_GT(empty->buckets, 0u);
  EXPECT_EQ(empty->slots, empty->buckets * 4);  // libcuckoo's four slots per bucket
  EXPECT_GE(empty->slots * 0.9, 1000);          // sized for the expected keys
  EXPECT_GT(empty->bytes, empty->slots * 16);
  EXPECT_EQ(empty->load_factor, 0);
  EXPECT_EQ(empty->memory_utilisation, 0);

  PutSequential(*backend, 0, 900);
  auto stats = backend->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, 900u);
  EXPECT_EQ(stats->rehashes, 0u);  // the expected keys fit without growth
  EXPECT_DOUBLE_EQ(stats->load_factor, 900.0 / static_cast<double>(stats->slots));
  EXPECT_GT(stats->memory_utilisation, 0);
  EXPECT_LE(stats->memory_utilisation, 1);
  // Replacing keys adds none; erasing them removes them.
  PutSequential(*backend, 0, 900);
  EXPECT_EQ(backend->Stats()->keys, 900u);
  std::vector<uint64_t> gone = {0, 1, 1, 5000};
  std::vector<uint8_t> erased(gone.size());
  ASSERT_TRUE(
      backend->Erase(reinterpret_cast<const uint8_t*>(gone.data()), erased.data(), 4, nullptr)
          .ok());
  EXPECT_EQ(erased, (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(backend->Stats()->keys, 898u);
}

TEST(SlabHashCpuBackend, ATableGrowsPastItsExpectedKeysAndCountsItsRehashes) {
  auto backend = MakeBackend(Sizes(8, 8, 16));
  ASSERT_NE(backend, nullptr);
  const uint64_t first_slots = backend->Stats()->slots;
  for (uint64_t batch = 0; batch < 20; ++batch) PutSequential(*backend, batch * 10'000, 10'000);
  auto stats = backend->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, 200'000u);
  EXPECT_GT(stats->slots, first_slots);
  EXPECT_GE(stats->slots * 0.9, 200'000);
  EXPECT_GE(stats->rehashes, 1u);
  EXPECT_GE(stats->rehash_seconds, 0);
  std::vector<uint64_t> keys(200'000);
  for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = i;
  std::vector<uint64_t> values(keys.size());
  std::vector<uint8_t> found(keys.size());
  ASSERT_TRUE(backend
                  ->Get(reinterpret_cast<const uint8_t*>(keys.data()),
                        reinterpret_cast<uint8_t*>(values.data()), found.data(), keys.size(),
                        nullptr)
                  .ok());
  for (uint64_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(found[i], 1) << i;
    ASSERT_EQ(values[i], i * 3) << i;
  }
}

// One batch large enough for every worker, each key many times: the last
// put of each key wins, and of its erases only the first reports it.
TEST(SlabHashCpuBackend, ABatchSplitAmongWorkersKeepsEachKeysOrder) {
  auto backend = MakeBackend(Sizes(8, 8, 1000), 4);
  ASSERT_NE(backend, nullptr);
  constexpr uint64_t kKeys = 1000;
  constexpr uint64_t kRounds = 64;  // 64,000 operations: four workers
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;
  for (uint64_t round = 0; round < kRounds; ++round) {
    for (uint64_t key = 0; key < kKeys; ++key) {
      keys.push_back(key);
      values.push_back(round * kKeys + key);
    }
  }
  ASSERT_TRUE(backend
                  ->Put(reinterpret_cast<const uint8_t*>(keys.data()),
                        reinterpret_cast<const uint8_t*>(values.data()), keys.size(), nullptr)
                  .ok());
  std::vector<uint64_t> got(kKeys);
  std::vector<uint8_t> found(kKeys);
  ASSERT_TRUE(backend
                  ->Get(reinterpret_cast<const uint8_t*>(keys.data()),
                        reinterpret_cast<uint8_t*>(got.data()), found.data(), kKeys, nullptr)
                  .ok());
  for (uint64_t key = 0; key < kKeys; ++key) {
    ASSERT_EQ(got[key], (kRounds - 1) * kKeys + key) << key;
  }
  std::vector<uint8_t> erased(keys.size(), 0xee);
  ASSERT_TRUE(backend
                  ->Erase(reinterpret_cast<const uint8_t*>(keys.data()), erased.data(), keys.size(),
                          nullptr)
                  .ok());
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(erased[i], i < kKeys ? 1 : 0) << i;
  EXPECT_EQ(backend->Stats()->keys, 0u);
}

TEST(SlabHashCpuBackend, ScanVisitsEveryPairStopsWhenToldAndMayCallTheTable) {
  auto backend = MakeBackend(Sizes(32, 100, 100));
  ASSERT_NE(backend, nullptr);
  constexpr uint64_t kPairs = 5000;
  std::vector<uint8_t> keys(kPairs * 32, 0);
  std::vector<uint8_t> values(kPairs * 100, 0);
  for (uint64_t i = 0; i < kPairs; ++i) {
    std::memcpy(&keys[i * 32 + 24], &i, 8);  // the last word differs
    std::memset(&values[i * 100], static_cast<int>(i % 251), 100);
  }
  ASSERT_TRUE(backend->Put(keys.data(), values.data(), kPairs, nullptr).ok());
  std::vector<int> seen(kPairs, 0);
  bool values_match = true;
  ASSERT_TRUE(backend
                  ->Scan([&](const uint8_t* key, const uint8_t* value) {
                    uint64_t i = 0;
                    std::memcpy(&i, key + 24, 8);
                    if (i >= kPairs) return values_match = false;
                    ++seen[i];
                    values_match &= std::memcmp(value, &values[i * 100], 100) == 0;
                    return true;
                  })
                  .ok());
  EXPECT_TRUE(values_match);
  EXPECT_EQ(seen, std::vector<int>(kPairs, 1));

  uint64_t visited = 0;
  ASSERT_TRUE(backend->Scan([&](const uint8_t*, const uint8_t*) { return ++visited < 10; }).ok());
  EXPECT_EQ(visited, 10u);

  // A visitor that erases what it visits.
  uint64_t erased_count = 0;
  ASSERT_TRUE(backend
                  ->Scan([&](const uint8_t* key, const uint8_t*) {
                    uint8_t erased = 0;
                    erased_count += backend->Erase(key, &erased, 1, nullptr).ok() && erased;
                    return true;
                  })
                  .ok());
  EXPECT_EQ(erased_count, kPairs);
  EXPECT_EQ(backend->Stats()->keys, 0u);
}

TEST(SlabHashCpuBackend, HasNoDeviceScanSoItsPairsAreScannedOnTheHost) {
  auto backend = MakeBackend(Sizes(8, 8, 100));
  ASSERT_NE(backend, nullptr);
  PutSequential(*backend, 0, 10);
  EXPECT_EQ(backend->cuda_device(), -1);
  uint64_t pairs = 0;
  EXPECT_TRUE(backend->ScanIntoDevice(nullptr, nullptr, 0, &pairs).IsUnsupported());
}

TEST(SlabHashCpuBackend, BadSizesAndTooManyExpectedKeysAreErrorsNotCrashes) {
  EXPECT_TRUE(cpu::CreateCpuBackend(Sizes(12, 8, 10), 1).status().IsInvalidArgument());
  EXPECT_TRUE(cpu::CreateCpuBackend(Sizes(8, 0, 10), 1).status().IsInvalidArgument());
  EXPECT_TRUE(cpu::CreateCpuBackend(Sizes(8, 129, 10), 1).status().IsInvalidArgument());
  // 2^40 keys of 32 + 128 bytes: more RAM than any machine running this.
  auto huge = cpu::CreateCpuBackend(Sizes(32, 128, kMaxExpectedKeys), 1);
  EXPECT_EQ(huge.status().code(), Code::kOutOfDeviceMemory) << huge.status().ToString();
}

TEST(SlabHashCpuBackend, ATableTooLargeForRamOpensSmallAndStillGrows) {
  auto table = OpenEmptyTable("pool: table 'big'", "big", Sizes(32, 128, kMaxExpectedKeys),
                              gpkv::Backend::kCpu, 2);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint8_t> keys(32 * 1000, 0);
  std::vector<uint8_t> values(128 * 1000, 7);
  for (uint32_t i = 0; i < 1000; ++i) std::memcpy(&keys[i * 32], &i, 4);
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  EXPECT_EQ((*(*table)->Stats()).keys, 1000u);
}

TEST(SlabHashTable, PublicStatsNameEveryPropertyOfTheFamily) {
  Stats stats;
  stats.keys = 5;
  stats.buckets = 2;
  stats.slabs = 3;
  stats.slots = 14;
  stats.dead_slots = 1;
  stats.load_factor = 5.0 / 14;
  stats.memory_utilisation = 0.25;
  stats.bytes = 4096;
  stats.super_blocks = 1;
  stats.rehashes = 2;
  stats.rehash_seconds = 0.5;
  stats.flushes = 4;
  TableStats out = PublicStats(stats);
  EXPECT_EQ(out.family, "slab_hash");
  EXPECT_EQ(out.kind, TableKind::kHash);
  EXPECT_EQ(out.durability, Durability::kVolatile);
  EXPECT_EQ(out.keys, 5u);
  EXPECT_EQ(out.bytes, 4096u);
  const std::vector<std::pair<const char*, double>> expected = {
      {"slab_hash.buckets", 2},
      {"slab_hash.slabs", 3},
      {"slab_hash.slots", 14},
      {"slab_hash.dead-slots", 1},
      {"slab_hash.load-factor", 5.0 / 14},
      {"slab_hash.memory-utilisation", 0.25},
      {"slab_hash.super-blocks", 1},
      {"slab_hash.rehashes", 2},
      {"slab_hash.rehash-seconds", 0.5},
      {"slab_hash.flushes", 4}};
  ASSERT_EQ(out.properties.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(out.properties[i].name, expected[i].first);
    EXPECT_DOUBLE_EQ(out.properties[i].value, expected[i].second);
  }
}

}  // namespace
}  // namespace gpkv::slab_hash
