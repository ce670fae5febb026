// The plain C++ parts of `gpkv-bench --suite slab` (bench/gpu/slab_bench*):
// the sizing model that aims a table at a memory utilisation, the JSON lines
// and the configuration check. Runs without a device. How the goals are read
// off the JSON lines: check_targets_test.cc.
#include "bench/gpu/slab_bench.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/gpu/slab_bench_report.h"
#include "bench/gpu/slab_bench_sizing.h"

namespace gpkv::bench::gpu {
namespace {

constexpr uint32_t kSlots = 7;  // 8-byte keys and values: 15 words / 2 per slot
constexpr uint32_t kPair = 16;

TEST(SlabBenchSizing, UtilisationGrowsWithKeysPerBucketAndStaysBelowFullSlabs) {
  double previous = 0;
  for (double lambda = 0.25; lambda <= 40; lambda += 0.25) {
    const double u = ModelUtilisation(lambda, kSlots, kPair);
    EXPECT_GT(u, previous) << lambda;
    EXPECT_LT(u, kSlots * kPair / 128.0) << lambda;  // a full slab's share
    previous = u;
  }
  // One key per bucket in expectation: lists are base slabs only but for the
  // rare bucket of 8+ keys.
  EXPECT_NEAR(ModelUtilisation(1.0, kSlots, kPair), 16.0 / 128.0, 1e-3);
}

TEST(SlabBenchSizing, PlanReachesReachableTargetsWithinTheirBucketRounding) {
  for (double target : {0.2, 0.4, 0.6}) {
    const BucketPlan plan = PlanBuckets(uint64_t{1} << 24, target, kSlots, kPair);
    EXPECT_FALSE(plan.capped) << target;
    EXPECT_NEAR(plan.model_utilisation, target, 0.002) << target;
    EXPECT_NEAR(plan.keys_per_bucket, static_cast<double>(uint64_t{1} << 24) / plan.buckets, 1e-9);
  }
}

TEST(SlabBenchSizing, TargetsAboveTheGrowthBoundAreCappedBelowIt) {
  const BucketPlan plan = PlanBuckets(uint64_t{1} << 24, 0.8, kSlots, kPair);
  EXPECT_TRUE(plan.capped);
  // Never so few buckets that the build would rehash (keys > buckets * s * 2).
  EXPECT_LE(plan.keys_per_bucket, kGrowthSlabsPerList * kSlots);
  EXPECT_LT(plan.model_utilisation, 0.8);
  EXPECT_GT(plan.model_utilisation, 0.7);
}

TEST(SlabBenchSizing, TinyTablesGetAtLeastOneBucket) {
  EXPECT_GE(PlanBuckets(1, 0.6, kSlots, kPair).buckets, 1u);
}

// A slab_hash device row of `workload` at `keys` and `percent`.
SlabRow Row(const std::string& workload, uint64_t keys, int percent, double utilisation,
            double seconds) {
  SlabRow row;
  row.system = kSlabSystem;
  row.workload = workload;
  row.keys = keys;
  row.target_percent = percent;
  row.utilisation = utilisation;
  row.batch = 1 << 20;
  row.ops = keys;
  row.seconds = {seconds * 2, seconds, seconds / 2};  // median: seconds
  return row;
}

TEST(SlabBenchReport, JsonLinesCarryEveryRowWithItsGphashRatio) {
  const uint64_t big = uint64_t{1} << 24;
  std::vector<SlabRow> rows = {Row(kSearchHit, big, 60, 0.6, big / 6e9)};
  SlabRow peer = Row(kSearchHit, big, 0, -1, big / 2e9);
  peer.system = kGphashSystem;
  rows.push_back(peer);
  SlabRow growth = Row(kGrowthBuild, big, 0, 0.5, big / 1e9);
  growth.rehashes = 3;
  growth.rehash_seconds = 0.004;
  rows.push_back(growth);
  std::istringstream lines(SlabJsonLines("test device", rows, nullptr));
  std::string line;
  int slab = 0, other = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json json = nlohmann::json::parse(line);
    EXPECT_EQ(json["device"], "test device");
    if (json["kind"] == "slab") {
      ++slab;
      if (json["system"] == kSlabSystem && json["workload"] == kSearchHit) {
        EXPECT_NEAR(json["gops"].get<double>(), 6.0, 1e-9);
        EXPECT_NEAR(json["vs_gphash"].get<double>(), 3.0, 1e-9);
        EXPECT_EQ(json["seconds_each"].size(), 3u);
      }
      if (json["workload"] == kGrowthBuild) EXPECT_EQ(json["rehashes"], 3);
    }
    if (json["kind"] != "slab") ++other;
  }
  EXPECT_EQ(slab, 3);
  EXPECT_EQ(other, 0);  // no SlabAlloc row given; no verdicts
}

TEST(SlabBenchReport, KeyCountsOfPowersOfTwoPrintAsPowers) {
  EXPECT_EQ(KeyCountText(uint64_t{1} << 24), "2^24");
  EXPECT_EQ(KeyCountText(1), "2^0");
  EXPECT_EQ(KeyCountText(65537), "65537");
}

TEST(SlabBenchConfigCheck, BadValuesNameTheirOption) {
  auto expect_bad = [](const SlabBenchConfig& config, const std::string& option) {
    const Status status = ValidateSlabBenchConfig(config);
    EXPECT_TRUE(status.IsInvalidArgument()) << option << ": " << status.ToString();
    EXPECT_NE(status.message().find(option), std::string::npos) << status.ToString();
  };
  SlabBenchConfig config;
  config.keys = {uint64_t{1} << 30};
  expect_bad(config, "--keys");
  config = SlabBenchConfig();
  config.keys.clear();
  expect_bad(config, "--keys");
  config = SlabBenchConfig();
  config.utilisation_percent = {60, 0};
  expect_bad(config, "--utilisation");
  config = SlabBenchConfig();
  config.repeats = 0;
  expect_bad(config, "--repeats");
  config = SlabBenchConfig();
  config.batch = 0;
  expect_bad(config, "--batch");
  config = SlabBenchConfig();
  config.pool_dir.clear();
  expect_bad(config, "--pool-dir");
  config = SlabBenchConfig();
  config.allocations = 0;
  expect_bad(config, "--allocations");
  const Status defaults = ValidateSlabBenchConfig(SlabBenchConfig());
  EXPECT_TRUE(defaults.ok() || (!SlabBenchBuiltIn() && defaults.IsUnsupported()))
      << defaults.ToString();
}

}  // namespace
}  // namespace gpkv::bench::gpu
