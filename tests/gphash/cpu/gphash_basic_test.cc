// Put / get / erase / upsert of gphash::cpu::CpuBackend for every key size, inline and
// out-of-place values, across close and reopen.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "gphash/cpu/gphash_test_util.h"

namespace gpkv::gphash_test {
namespace {

class GphashBasic : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t>> {
 protected:
  uint32_t key_size() const { return std::get<0>(GetParam()); }
  uint32_t value_size() const { return std::get<1>(GetParam()); }
  std::string Tag(const char* what) const {
    return std::string(what) + "-" + std::to_string(key_size()) + "-" +
           std::to_string(value_size());
  }
};

std::vector<uint64_t> Range(uint64_t begin, uint64_t end) {
  std::vector<uint64_t> ids;
  for (uint64_t id = begin; id < end; ++id) ids.push_back(id);
  return ids;
}

TEST_P(GphashBasic, PutThenGetReturnsEveryValue) {
  TestTable t(Tag("put"), Options(key_size(), value_size()));
  std::vector<uint64_t> ids = Range(0, 3000);
  ids.push_back(~uint64_t{0});  // every key value is legal
  ASSERT_TRUE(t.Put(ids, 1).ok());
  for (uint64_t id : ids) ASSERT_TRUE(t.Holds(id, 1)) << id;
  EXPECT_EQ(t.table().Stats().keys, ids.size());
  EXPECT_FALSE(t.Get({5000})[0].has_value());
}

TEST_P(GphashBasic, UpsertReplacesTheValue) {
  TestTable t(Tag("upsert"), Options(key_size(), value_size()));
  std::vector<uint64_t> ids = Range(0, 1000);
  ASSERT_TRUE(t.Put(ids, 1).ok());
  ASSERT_TRUE(t.Put(ids, 2).ok());
  for (uint64_t id : ids) ASSERT_TRUE(t.Holds(id, 2)) << id;
  EXPECT_EQ(t.table().Stats().keys, ids.size());
}

TEST_P(GphashBasic, EraseRemovesAndReportsPresence) {
  TestTable t(Tag("erase"), Options(key_size(), value_size()));
  ASSERT_TRUE(t.Put(Range(0, 1000), 1).ok());
  std::vector<uint8_t> erased = t.Erase({10, 20, 5000});
  EXPECT_EQ(erased, (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_FALSE(t.Get({10})[0].has_value());
  EXPECT_TRUE(t.Holds(11, 1));
  EXPECT_EQ(t.Erase({10})[0], 0);
  EXPECT_EQ(t.table().Stats().keys, 998u);
  // Erased keys can come back, and erased slots are reused.
  ASSERT_TRUE(t.Put({10}, 3).ok());
  EXPECT_TRUE(t.Holds(10, 3));
}

TEST_P(GphashBasic, DuplicateKeysInOneBatchResolveToTheLastOccurrence) {
  TestTable t(Tag("dup"), Options(key_size(), value_size()), uint64_t{64} << 20, 4);
  std::vector<uint64_t> ids, versions;
  for (uint64_t round = 1; round <= 5; ++round) {
    for (uint64_t id = 0; id < 400; ++id) {
      ids.push_back(id);
      versions.push_back(round * 1000 + id);
    }
  }
  ASSERT_TRUE(t.Put(ids, versions).ok());
  for (uint64_t id = 0; id < 400; ++id) ASSERT_TRUE(t.Holds(id, 5000 + id)) << id;
  EXPECT_EQ(t.table().Stats().keys, 400u);
}

TEST_P(GphashBasic, ContentsSurviveCloseAndReopen) {
  TestTable t(Tag("reopen"), Options(key_size(), value_size()));
  ASSERT_TRUE(t.Put(Range(0, 2000), 1).ok());
  ASSERT_TRUE(t.Put(Range(0, 500), 2).ok());
  t.Erase(Range(500, 1000));
  recovery::Report report;
  t.Reopen(&report);
  EXPECT_EQ(report.slots_cleared, 0u);
  EXPECT_EQ(report.duplicates_removed, 0u);
  EXPECT_EQ(t.table().Stats().keys, 1500u);
  for (uint64_t id = 0; id < 500; ++id) ASSERT_TRUE(t.Holds(id, 2)) << id;
  for (uint64_t id = 500; id < 1000; ++id) ASSERT_FALSE(t.Get({id})[0].has_value()) << id;
  for (uint64_t id = 1000; id < 2000; ++id) ASSERT_TRUE(t.Holds(id, 1)) << id;
}

TEST_P(GphashBasic, ScanVisitsEveryLiveKeyOnce) {
  TestTable t(Tag("scan"), Options(key_size(), value_size()));
  ASSERT_TRUE(t.Put(Range(0, 1500), 1).ok());
  t.Erase(Range(0, 100));
  std::map<std::vector<uint8_t>, std::vector<uint8_t>> seen;
  Status status = t.table().Scan([&](const uint8_t* key, const uint8_t* value) {
    std::vector<uint8_t> k(key, key + key_size());
    EXPECT_EQ(seen.count(k), 0u);
    seen[k] = std::vector<uint8_t>(value, value + value_size());
    return true;
  });
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(seen.size(), 1400u);
  for (uint64_t id = 100; id < 1500; ++id) {
    std::vector<uint8_t> key(key_size()), value(value_size());
    MakeKey(id, key_size(), key.data());
    MakeValue(id, 1, value_size(), value.data());
    ASSERT_EQ(seen[key], value);
  }
}

// A key VALID in two slots (the state a racing insert leaves until recovery)
// is visited once, with the winner's value: Scan visits winners only, as on
// the GPU backend (tests/gphash/gpu/gphash_cross_backend_test.cc).
TEST_P(GphashBasic, ScanVisitsAKeyHeldTwiceOnce) {
  TestTable t(Tag("scan-dup"), Options(key_size(), value_size()));
  ASSERT_TRUE(t.Put(Range(0, 200), 1).ok());
  gphash::GphashView view = t.View();
  uint32_t planted = 0;
  for (uint64_t id = 0; id < 200 && planted < 10; ++id) {
    std::vector<uint8_t> key(key_size());
    MakeKey(id, key_size(), key.data());
    planted += PlantLosingCopy(t.pool(), view, key.data());
  }
  ASSERT_GT(planted, 0u);
  std::map<std::vector<uint8_t>, std::vector<uint8_t>> seen;
  ASSERT_TRUE(t.table()
                  .Scan([&](const uint8_t* key, const uint8_t* value) {
                    std::vector<uint8_t> k(key, key + key_size());
                    EXPECT_EQ(seen.count(k), 0u) << "a key visited twice";
                    seen[k] = std::vector<uint8_t>(value, value + value_size());
                    return true;
                  })
                  .ok());
  EXPECT_EQ(seen.size(), 200u);
}

INSTANTIATE_TEST_SUITE_P(KeyAndValueSizes, GphashBasic,
                         ::testing::Combine(::testing::Values(8u, 16u, 32u),
                                            ::testing::Values(8u, 100u, 3u)));

TEST(GphashBasicOptions, InvalidOptionsAreRejected) {
  testutil::TempPool file("gphash-options");
  auto pool = pm::Pool::Create(file.path(), uint64_t{16} << 20, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  TableOptions bad_key = Options(12, 8);
  EXPECT_TRUE(gphash::cpu::CpuBackend::Create(**pool, 1, bad_key).status().IsInvalidArgument());
  TableOptions bad_value = Options(8, 129);
  EXPECT_TRUE(gphash::cpu::CpuBackend::Create(**pool, 1, bad_value).status().IsInvalidArgument());
  TableOptions bad_slots = Options(8, 8, 2, 2, 6);
  EXPECT_TRUE(gphash::cpu::CpuBackend::Create(**pool, 1, bad_slots).status().IsInvalidArgument());
  TableOptions bad_levels = Options(8, 8, 5, 2, 8);
  EXPECT_TRUE(gphash::cpu::CpuBackend::Create(**pool, 1, bad_levels).status().IsInvalidArgument());
  TableOptions bad_top = Options(8, 8);
  bad_top.hash.initial_top_buckets = 100;
  EXPECT_TRUE(gphash::cpu::CpuBackend::Create(**pool, 1, bad_top).status().IsInvalidArgument());
}

TEST(GphashBasicOptions, CreateFailsWithPoolFullAndLeavesNothingAllocated) {
  testutil::TempPool file("gphash-full");
  auto pool = pm::Pool::Create(file.path(), uint64_t{4} << 20, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  uint64_t used = (*pool)->allocator().used_bytes();
  TableOptions huge = Options(8, 8);
  huge.expected_keys = uint64_t{1} << 30;
  EXPECT_TRUE(gphash::cpu::CpuBackend::Create(**pool, 1, huge).status().IsPoolFull());
  EXPECT_EQ((*pool)->allocator().used_bytes(), used);
}

TEST(GphashBasicOptions, DestroyFreesEveryExtent) {
  testutil::TempPool file("gphash-destroy");
  auto pool = pm::Pool::Create(file.path(), uint64_t{64} << 20, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  uint64_t used = (*pool)->allocator().used_bytes();
  auto root = gphash::cpu::CpuBackend::Create(**pool, 1, Options(16, 64));
  ASSERT_TRUE(root.ok());
  EXPECT_GT((*pool)->allocator().used_bytes(), used);
  ASSERT_TRUE(gphash::cpu::CpuBackend::Destroy(**pool, "t", *root).ok());
  EXPECT_EQ((*pool)->allocator().used_bytes(), used);
}

}  // namespace
}  // namespace gpkv::gphash_test
