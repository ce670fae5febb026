// Randomized oracle test: over a million mixed put / get / erase operations in
// batches of random size (with repeated keys inside batches), checked against
// std::unordered_map, with the table closed and reopened (CpuBackend object and
// pm::Pool destroyed) every so often and across several resizes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>

#include "gphash/cpu/gphash_test_util.h"

namespace gpkv::gphash_test {
namespace {

struct OracleCase {
  uint32_t key_size;
  uint32_t value_size;
  uint64_t operations;
  uint64_t key_space;
};

class GphashOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(GphashOracle, MixedBatchesMatchAnUnorderedMapAcrossReopensAndResizes) {
  const OracleCase c = GetParam();
  TestTable t("oracle-" + std::to_string(c.key_size) + "-" + std::to_string(c.value_size),
              Options(c.key_size, c.value_size, 2, 2, 8, /*expected_keys=*/2000),
              uint64_t{256} << 20);
  std::unordered_map<uint64_t, uint64_t> oracle;  // id -> version
  std::mt19937_64 random(c.key_size * 1000 + c.value_size);
  uint64_t version = 0;
  uint64_t done = 0;
  uint64_t next_reopen = c.operations / 8;
  uint64_t gets_checked = 0;
  while (done < c.operations) {
    size_t batch = 1 + random() % 4096;
    if (random() % 8 == 0) batch = 1 + random() % 16;
    std::vector<uint64_t> ids(batch);
    for (uint64_t& id : ids) {
      // A hot range makes repeats inside a batch common.
      id = random() % 4 == 0 ? random() % 64 : SplitMix(random() % c.key_space);
    }
    uint64_t kind = random() % 10;
    if (kind < 5) {
      std::vector<uint64_t> versions(batch);
      for (uint64_t& v : versions) v = ++version;
      ASSERT_TRUE(t.Put(ids, versions).ok());
      for (size_t i = 0; i < batch; ++i) oracle[ids[i]] = versions[i];
    } else if (kind < 7) {
      std::vector<uint8_t> erased = t.Erase(ids);
      for (size_t i = 0; i < batch; ++i) {
        ASSERT_EQ(erased[i], oracle.erase(ids[i])) << "erase of id " << ids[i];
      }
    } else {
      auto got = t.Get(ids);
      for (size_t i = 0; i < batch; ++i) {
        auto it = oracle.find(ids[i]);
        ASSERT_EQ(got[i].has_value(), it != oracle.end()) << "get of id " << ids[i];
        if (it == oracle.end()) continue;
        std::vector<uint8_t> want(c.value_size);
        MakeValue(ids[i], it->second, c.value_size, want.data());
        ASSERT_EQ(*got[i], want) << "get of id " << ids[i];
        ++gets_checked;
      }
    }
    done += batch;
    if (done >= next_reopen) {
      next_reopen += c.operations / 8;
      recovery::Report report;
      t.Reopen(&report);
      ASSERT_EQ(report.slots_cleared, 0u);
      ASSERT_EQ(report.duplicates_removed, 0u);
      ASSERT_EQ(t.table().Stats().keys, oracle.size());
    }
  }
  gphash::Stats stats = t.table().Stats();
  EXPECT_EQ(stats.keys, oracle.size());
  EXPECT_GE(stats.resizes, 2u);
  EXPECT_GT(gets_checked, c.operations / 10);
  size_t scanned = 0;
  ASSERT_TRUE(t.table()
                  .Scan([&](const uint8_t*, const uint8_t*) {
                    ++scanned;
                    return true;
                  })
                  .ok());
  EXPECT_EQ(scanned, oracle.size());
}

INSTANTIATE_TEST_SUITE_P(Sizes, GphashOracle,
                         ::testing::Values(OracleCase{8, 8, 1200000, 120000},
                                           OracleCase{16, 40, 400000, 60000},
                                           OracleCase{32, 5, 300000, 50000}),
                         [](const ::testing::TestParamInfo<OracleCase>& info) {
                           return "K" + std::to_string(info.param.key_size) + "_V" +
                                  std::to_string(info.param.value_size);
                         });

}  // namespace
}  // namespace gpkv::gphash_test
