// Every table geometry (levels x hash locations x slots per bucket) grows
// through several resizes and keeps every key, across close and reopen.
#include <gtest/gtest.h>

#include "gphash/cpu/gphash_test_util.h"

namespace gpkv::gphash_test {
namespace {

struct Geometry {
  uint8_t levels;
  uint8_t locations;
  uint8_t slots;
  uint32_t key_size;
  uint32_t value_size;
};

class GphashGeometry : public ::testing::TestWithParam<Geometry> {};

std::string Name(const ::testing::TestParamInfo<Geometry>& info) {
  const Geometry& g = info.param;
  return std::to_string(g.levels) + "L" + std::to_string(g.locations) + "H" +
         std::to_string(g.slots) + "S_K" + std::to_string(g.key_size) + "_V" +
         std::to_string(g.value_size);
}

TEST_P(GphashGeometry, GrowsThroughResizesAndKeepsEveryKey) {
  const Geometry g = GetParam();
  TestTable t("geometry-" + Name({g, 0}),
              Options(g.key_size, g.value_size, g.levels, g.locations, g.slots,
                      /*expected_keys=*/64),
              uint64_t{128} << 20);
  gphash::Stats before = t.table().Stats();
  EXPECT_EQ(before.levels, g.levels);
  EXPECT_GE(before.top_buckets, 16u);

  constexpr uint64_t kKeys = 12000;
  std::vector<uint64_t> ids;
  for (uint64_t id = 0; id < kKeys; ++id) ids.push_back(SplitMix(id));
  for (size_t begin = 0; begin < ids.size(); begin += 1000) {
    std::vector<uint64_t> batch(ids.begin() + begin, ids.begin() + begin + 1000);
    ASSERT_TRUE(t.Put(batch, 1).ok());
  }
  gphash::Stats after = t.table().Stats();
  EXPECT_EQ(after.keys, kKeys);
  EXPECT_GT(after.resizes, 2u);
  EXPECT_EQ(after.levels, g.levels);
  EXPECT_FALSE(after.resizing);
  EXPECT_EQ(after.slots,
            after.top_buckets * g.slots * ((2u << (g.levels - 1)) - 1) / (1u << (g.levels - 1)));
  EXPECT_GT(after.load_factor, 0.0);
  for (uint64_t id : ids) ASSERT_TRUE(t.Holds(id, 1)) << id;

  t.Reopen();
  EXPECT_EQ(t.table().Stats().keys, kKeys);
  std::vector<uint64_t> half(ids.begin(), ids.begin() + kKeys / 2);
  t.Erase(half);
  ASSERT_TRUE(t.Put(std::vector<uint64_t>(ids.begin() + kKeys / 2, ids.end()), 2).ok());
  t.Reopen();
  EXPECT_EQ(t.table().Stats().keys, kKeys / 2);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i < kKeys / 2) {
      ASSERT_FALSE(t.Get({ids[i]})[0].has_value());
    } else {
      ASSERT_TRUE(t.Holds(ids[i], 2));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, GphashGeometry,
                         ::testing::Values(Geometry{1, 1, 4, 8, 8}, Geometry{2, 2, 8, 8, 8},
                                           Geometry{3, 2, 16, 8, 8}, Geometry{4, 4, 4, 16, 8},
                                           Geometry{2, 3, 8, 32, 24}, Geometry{1, 2, 16, 16, 100}),
                         Name);

}  // namespace
}  // namespace gpkv::gphash_test
