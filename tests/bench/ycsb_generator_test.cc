// The workload generator of gpkv-bench (bench/gpkv_bench_workload.h):
// YCSB's key choosers draw the distributions they claim, and the batches are a
// pure function of the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/gpkv_bench_workload.h"

namespace gpkv::bench {
namespace {

TEST(YcsbGenerator, FnvHashMatchesYcsb) {
  // Values from YCSB's Utils.fnvhash64 (Java long arithmetic, Math.abs).
  EXPECT_EQ(FnvHash64(0), 6284781860667377211ULL);
  EXPECT_EQ(FnvHash64(1), 8517097267634966620ULL);
  EXPECT_EQ(FnvHash64(12345), 1792800413050876852ULL);
  EXPECT_EQ(FnvHash64(1099511627783ULL), 6089181255519459853ULL);
}

TEST(YcsbGenerator, ZipfianHeadMatchesTheDistribution) {
  // P(rank 0) = 1 / zeta(n) and P(rank 1) = 2^-theta / zeta(n) are exact in
  // Gray's method.
  constexpr uint64_t kItems = 1000;
  constexpr int kDraws = 2000000;
  ZipfianGenerator zipfian(0, kItems - 1);
  Random random(7);
  std::vector<int> counts(kItems, 0);
  for (int i = 0; i < kDraws; ++i) {
    uint64_t item = zipfian.Next(random);
    ASSERT_LT(item, kItems);
    ++counts[item];
  }
  const double zeta = ZipfianGenerator::Zeta(0, kItems, 0.99, 0.0);
  EXPECT_NEAR(counts[0] / static_cast<double>(kDraws), 1.0 / zeta, 0.01 / zeta);
  EXPECT_NEAR(counts[1] / static_cast<double>(kDraws), std::pow(0.5, 0.99) / zeta, 0.01 / zeta);
  // Popularity falls with rank.
  EXPECT_GT(counts[1], counts[10]);
  EXPECT_GT(counts[10], counts[100]);
  EXPECT_GT(counts[100], counts[900]);
}

TEST(YcsbGenerator, ZipfianZetaGrowsWithItemCount) {
  // Extending zeta incrementally equals computing it at once.
  ZipfianGenerator zipfian(0, 99);
  Random random(1);
  zipfian.Next(random, 5000);
  EXPECT_NEAR(zipfian.zetan(), ZipfianGenerator::Zeta(0, 5000, 0.99, 0.0), 1e-9);
}

TEST(YcsbGenerator, ScrambledZipfianStaysInRangeAndIsSkewed) {
  constexpr uint64_t kItems = 100000;
  constexpr int kDraws = 1000000;
  ScrambledZipfianGenerator scrambled(0, kItems - 1);
  Random random(3);
  std::map<uint64_t, int> counts;
  for (int i = 0; i < kDraws; ++i) {
    uint64_t item = scrambled.Next(random);
    ASSERT_LT(item, kItems);
    ++counts[item];
  }
  std::vector<int> sorted;
  for (const auto& [item, count] : counts) sorted.push_back(count);
  std::sort(sorted.rbegin(), sorted.rend());
  // The hottest item draws 1 / zeta(10^10) = 3.8% of the requests (plus the
  // few colder items hashed onto it).
  const double hottest = sorted[0] / static_cast<double>(kDraws);
  EXPECT_GT(hottest, 0.95 / ScrambledZipfianGenerator::kZetan);
  EXPECT_LT(hottest, 1.2 / ScrambledZipfianGenerator::kZetan);
  // Scrambling moves the hottest zipfian item (0) to fnv(0) mod items.
  auto hottest_item = std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) {
                        return a.second < b.second;
                      })->first;
  EXPECT_EQ(hottest_item, FnvHash64(0) % kItems);
  // Skewed: the hottest 1% of items take far more than 1% of the draws.
  long top = 0;
  for (size_t i = 0; i < kItems / 100 && i < sorted.size(); ++i) top += sorted[i];
  EXPECT_GT(top / static_cast<double>(kDraws), 0.3);
}

TEST(YcsbGenerator, LatestFavoursTheNewestRecords) {
  constexpr uint64_t kRecords = 10000;
  LatestGenerator latest(kRecords);
  Random random(5);
  std::vector<int> counts(kRecords, 0);
  for (int i = 0; i < 200000; ++i) {
    uint64_t record = latest.Next(random, kRecords);
    ASSERT_LT(record, kRecords);
    ++counts[record];
  }
  EXPECT_EQ(std::max_element(counts.begin(), counts.end()) - counts.begin(),
            static_cast<long>(kRecords - 1));
  EXPECT_GT(counts[kRecords - 1], counts[kRecords - 100]);
  EXPECT_GT(counts[kRecords - 100], counts[0]);
}

TEST(YcsbGenerator, UniformCoversTheRange) {
  Random random(9);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) ++counts[random.Uniform(10)];
  for (int count : counts) EXPECT_NEAR(count, 10000, 500);
}

TEST(YcsbGenerator, KeysOfDistinctRecordsAreDistinct) {
  for (uint32_t key_size : {8u, 16u, 32u}) {
    std::set<std::string> keys;
    std::vector<uint8_t> key(key_size);
    for (uint64_t record = 0; record < 50000; ++record) {
      EncodeKey(record, 42, key_size, key.data());
      keys.insert(std::string(key.begin(), key.end()));
      EncodeKey(kAbsentRecordBase + record, 42, key_size, key.data());
      keys.insert(std::string(key.begin(), key.end()));
    }
    EXPECT_EQ(keys.size(), 100000u) << key_size;
  }
}

// The batches of a run, flattened, for comparisons.
std::vector<uint8_t> Flatten(const WorkloadSpec& spec, uint64_t run_seed, uint64_t batches,
                             RecordState state) {
  BatchGenerator generator(spec, 8, 8, 1, run_seed, &state);
  OpBatch batch;
  std::vector<uint8_t> out;
  for (uint64_t i = 0; i < batches; ++i) {
    generator.Next(1000, &batch);
    for (const auto* part :
         {&batch.read_keys, &batch.write_keys, &batch.write_values, &batch.erase_keys}) {
      out.insert(out.end(), part->begin(), part->end());
    }
  }
  return out;
}

TEST(YcsbGenerator, SameSeedSameOperations) {
  for (const char* name : {"A", "B", "C", "D", "F"}) {
    WorkloadSpec spec;
    ASSERT_TRUE(YcsbWorkload(name, KeyChoice::kZipfian, &spec));
    RecordState state;
    state.inserted = 100000;
    EXPECT_EQ(Flatten(spec, 11, 5, state), Flatten(spec, 11, 5, state)) << name;
    EXPECT_NE(Flatten(spec, 11, 5, state), Flatten(spec, 12, 5, state)) << name;
  }
}

TEST(YcsbGenerator, WorkloadMixesHaveTheirProportions) {
  struct Expected {
    const char* name;
    double read, update, insert, rmw;
  };
  for (const Expected& e :
       {Expected{"A", 0.5, 0.5, 0, 0}, Expected{"B", 0.95, 0.05, 0, 0}, Expected{"C", 1, 0, 0, 0},
        Expected{"D", 0.95, 0, 0.05, 0}, Expected{"F", 0.5, 0, 0, 0.5}}) {
    WorkloadSpec spec;
    ASSERT_TRUE(YcsbWorkload(e.name, KeyChoice::kUniform, &spec));
    RecordState state;
    state.inserted = 1000;
    BatchGenerator generator(spec, 8, 8, 1, 2, &state);
    OpBatch batch;
    generator.Next(100000, &batch);
    EXPECT_NEAR(batch.reads / 1e5, e.read, 0.01) << e.name;
    EXPECT_NEAR(batch.updates / 1e5, e.update, 0.01) << e.name;
    EXPECT_NEAR(batch.inserts / 1e5, e.insert, 0.01) << e.name;
    EXPECT_NEAR(batch.read_modify_writes / 1e5, e.rmw, 0.01) << e.name;
    EXPECT_EQ(state.inserted, 1000 + batch.inserts) << e.name;
    EXPECT_EQ(batch.write_keys.size(), batch.write_count() * 8) << e.name;
  }
}

TEST(YcsbGenerator, LoadInsertsEveryRecordOnce) {
  WorkloadSpec spec;
  ASSERT_TRUE(YcsbWorkload("LOAD", KeyChoice::kUniform, &spec));
  RecordState state;
  BatchGenerator generator(spec, 8, 8, 1, 2, &state);
  OpBatch batch;
  std::set<uint64_t> keys;
  for (int i = 0; i < 3; ++i) {
    generator.Next(1000, &batch);
    ASSERT_EQ(batch.inserts, 1000u);
    for (size_t k = 0; k < batch.inserts; ++k) {
      uint64_t key;
      std::memcpy(&key, batch.write_keys.data() + k * 8, 8);
      keys.insert(key);
    }
  }
  EXPECT_EQ(keys.size(), 3000u);
  EXPECT_EQ(state.inserted, 3000u);
}

TEST(YcsbGenerator, DuplicateUpdatesInABatchWriteEqualValues) {
  // Systems apply a batch's writes in different orders; equal values make the
  // outcome the same.
  WorkloadSpec spec;
  ASSERT_TRUE(YcsbWorkload("A", KeyChoice::kZipfian, &spec));
  RecordState state;
  state.inserted = 1000;
  BatchGenerator generator(spec, 8, 8, 1, 2, &state);
  OpBatch batch;
  generator.Next(20000, &batch);
  std::map<uint64_t, uint64_t> value_of;
  size_t duplicates = 0;
  for (size_t i = 0; i < batch.updates; ++i) {
    uint64_t key, value;
    std::memcpy(&key, batch.write_keys.data() + i * 8, 8);
    std::memcpy(&value, batch.write_values.data() + i * 8, 8);
    auto [it, inserted] = value_of.emplace(key, value);
    if (!inserted) {
      ++duplicates;
      EXPECT_EQ(it->second, value);
    }
  }
  EXPECT_GT(duplicates, 0u);  // zipfian over 1000 records: many
}

TEST(YcsbGenerator, AbsentKeysAreNeverInserted) {
  WorkloadSpec spec;
  ASSERT_TRUE(MicroWorkload("search-", &spec));
  RecordState state;
  state.inserted = 1000;
  BatchGenerator generator(spec, 8, 8, 1, 2, &state);
  OpBatch batch;
  generator.Next(1000, &batch);
  std::set<uint64_t> present;
  for (uint64_t record = 0; record < 1000; ++record) {
    uint64_t key;
    EncodeKey(record, 1, 8, reinterpret_cast<uint8_t*>(&key));
    present.insert(key);
  }
  for (size_t i = 0; i < batch.reads; ++i) {
    uint64_t key;
    std::memcpy(&key, batch.read_keys.data() + i * 8, 8);
    EXPECT_EQ(present.count(key), 0u);
  }
}

}  // namespace
}  // namespace gpkv::bench
