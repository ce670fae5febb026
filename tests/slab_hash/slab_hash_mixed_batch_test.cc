// The slab hash's mixed-batch hook (tables/slab_hash/mixed_batch.h) on the
// tables a DB hands out, without a device: the CPU backend has no mixed
// batch and says so, and the hook refuses spans of the wrong sizes, tables
// of another family and closed tables. The GPU runs are in
// tests/slab_hash/gpu/slab_hash_gpu_test.cc.
#include <gtest/gtest.h>

#include <vector>

#include "gpkv/db.h"
#include "tables/slab_hash/mixed_batch.h"
#include "test_util.h"

namespace gpkv {
namespace {

TableOptions Volatile() {
  TableOptions options;
  options.durability = Durability::kVolatile;
  options.expected_keys = 1024;
  return options;
}

TEST(SlabHashMixedBatch, TheCpuBackendAnswersUnsupported) {
  testutil::TempPool pool("mixed-cpu");
  auto db = DB::Open(pool.path(), testutil::DbOptions(uint64_t{16} << 20, 2));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("cache", Volatile());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint8_t> ops(4, static_cast<uint8_t>(slab_hash::MixedOp::kSearch));
  std::vector<uint8_t> keys(4 * 8), values(4 * 8), results(4);
  Status status = slab_hash::MixedBatch(**table, ops, keys, values, results);
  EXPECT_TRUE(status.IsUnsupported()) << status.ToString();
}

TEST(SlabHashMixedBatch, BadSpansOtherFamiliesAndClosedTablesAreInvalidArguments) {
  testutil::TempPool pool("mixed-bad");
  auto db = DB::Open(pool.path(), testutil::DbOptions(uint64_t{16} << 20, 2));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto cache = (*db)->CreateTable("cache", Volatile());
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  std::vector<uint8_t> ops(4, static_cast<uint8_t>(slab_hash::MixedOp::kReplace));
  std::vector<uint8_t> keys(4 * 8), values(4 * 8), results(4), short_results(3);
  EXPECT_TRUE(slab_hash::MixedBatch(**cache, ops, keys, values, short_results).IsInvalidArgument());

  TableOptions persistent;
  persistent.expected_keys = 1024;
  auto users = (*db)->CreateTable("users", persistent);
  ASSERT_TRUE(users.ok()) << users.status().ToString();
  Status other = slab_hash::MixedBatch(**users, ops, keys, values, results);
  EXPECT_TRUE(other.IsInvalidArgument()) << other.ToString();

  ASSERT_TRUE((*db)->Close().ok());
  Status closed = slab_hash::MixedBatch(**cache, ops, keys, values, results);
  EXPECT_TRUE(closed.IsInvalidArgument()) << closed.ToString();
}

}  // namespace
}  // namespace gpkv
