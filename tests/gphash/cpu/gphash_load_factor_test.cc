// Load factor a table reaches before its first resize: random keys are added
// in small batches until Stats().resizes becomes 1.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "gphash/cpu/gphash_test_util.h"

namespace gpkv::gphash_test {
namespace {

double LoadBeforeFirstResize(uint8_t levels, uint8_t locations, uint8_t slots, uint64_t top,
                             uint64_t seed) {
  TableOptions options = Options(8, 8, levels, locations, slots);
  options.hash.initial_top_buckets = top;
  TestTable t("load-" + std::to_string(levels) + std::to_string(locations) + std::to_string(slots) +
                  "-" + std::to_string(seed),
              options, uint64_t{64} << 20, /*threads=*/1);
  const uint64_t slots_before = t.table().Stats().slots;
  std::mt19937_64 random(seed);
  uint64_t keys_before = 0;
  for (;;) {
    std::vector<uint64_t> ids(16);
    for (uint64_t& id : ids) id = random();
    EXPECT_TRUE(t.Put(ids, 1).ok());
    gphash::Stats stats = t.table().Stats();
    if (stats.resizes > 0) break;
    keys_before = stats.keys;
  }
  return static_cast<double>(keys_before) / static_cast<double>(slots_before);
}

TEST(GphashLoadFactor, DefaultGeometryFillsAtLeastNinetyPercentBeforeResizing) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    double load = LoadBeforeFirstResize(2, 2, 8, /*top=*/4096, seed);
    std::printf("load factor before the first resize, 2L-2H-8S, 4096 top buckets, seed %lu: %.4f\n",
                static_cast<unsigned long>(seed), load);
    EXPECT_GE(load, 0.90);
  }
}

TEST(GphashLoadFactor, OtherGeometriesReportTheirLoad) {
  struct Case {
    uint8_t levels, locations, slots;
    double at_least;
  };
  for (const Case& c : {Case{1, 1, 4, 0.0}, Case{1, 2, 8, 0.85}, Case{3, 2, 16, 0.95}}) {
    double load = LoadBeforeFirstResize(c.levels, c.locations, c.slots, 1024, 7);
    std::printf("load factor before the first resize, %dL-%dH-%dS: %.4f\n", c.levels, c.locations,
                c.slots, load);
    EXPECT_GE(load, c.at_least);
  }
}

}  // namespace
}  // namespace gpkv::gphash_test
