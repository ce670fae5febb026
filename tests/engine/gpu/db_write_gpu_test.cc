// Table::Write on the CUDA backend: the GPU twin of tests/engine/
// db_write_test.cc for the families that run on the GPU (GPHash, the slab
// hash, the LSM, the B-tree): random mixed batches checked against std::map,
// across the LSM's log, flushes and levels, and across reopens.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "gpu/device_memory.h"
#include "test_util.h"
#include "write_oracle.h"

namespace gpkv {
namespace {

using Family = testutil::WriteFamily;

Options PoolOptions() {
  return testutil::DbOptions(uint64_t{64} << 20, /*threads=*/2, Backend::kCuda);
}

class DbWriteGpu : public ::testing::TestWithParam<Family> {};

TEST_P(DbWriteGpu, RandomMixedBatchesMatchAMap) {
  if (!gpu::DeviceUsable().ok()) GTEST_SKIP() << "no usable CUDA device";
  const Family family = GetParam();
  testutil::TempPool pool(std::string("write-gpu-") + family.name);
  auto opened = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<DB> db = std::move(*opened);
  auto created = db->CreateTable("t", testutil::WriteTableOptions(family, 8));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Table* table = *created;
  ASSERT_EQ(table->Stats()->backend, "cuda");
  std::mt19937_64 random(23);
  testutil::RandomWriteRounds(&db, &table, pool.path(), PoolOptions(),
                              family.durability == Durability::kPersistent, random, family.name);
}

INSTANTIATE_TEST_SUITE_P(Families, DbWriteGpu, ::testing::ValuesIn(testutil::kWriteFamilies),
                         testutil::WriteFamilyName);

}  // namespace
}  // namespace gpkv
