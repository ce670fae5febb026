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

struct Family {
  const char* name;
  TableKind kind;
  Durability durability;
};

Options PoolOptions() {
  Options options;
  options.create_if_missing = true;
  options.pool_size = uint64_t{64} << 20;
  options.backend = Backend::kCuda;
  options.cpu_threads = 2;
  return options;
}

class DbWriteGpu : public ::testing::TestWithParam<Family> {};

TEST_P(DbWriteGpu, RandomMixedBatchesMatchAMap) {
  if (!gpu::DeviceUsable().ok()) GTEST_SKIP() << "no usable CUDA device";
  const Family family = GetParam();
  testutil::TempPool pool(std::string("write-gpu-") + family.name);
  auto opened = DB::Open(pool.path(), PoolOptions());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<DB> db = std::move(*opened);
  TableOptions options;
  options.kind = family.kind;
  options.durability = family.durability;
  options.value_size = 16;
  options.expected_keys = 4096;
  if (family.kind == TableKind::kOrdered && family.durability == Durability::kPersistent) {
    options.ordered.batch_entries = 32;
    options.ordered.log_batches = 4;
  }
  auto created = db->CreateTable("t", options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Table* table = *created;
  ASSERT_EQ(table->Stats()->backend, "cuda");
  std::mt19937_64 random(23);
  testutil::RandomWriteRounds(&db, &table, pool.path(), PoolOptions(),
                              family.durability == Durability::kPersistent, random, family.name);
}

INSTANTIATE_TEST_SUITE_P(
    Families, DbWriteGpu,
    ::testing::Values(Family{"gphash", TableKind::kHash, Durability::kPersistent},
                      Family{"slab", TableKind::kHash, Durability::kVolatile},
                      Family{"lsm", TableKind::kOrdered, Durability::kPersistent},
                      Family{"btree", TableKind::kOrdered, Durability::kVolatile}),
    [](const ::testing::TestParamInfo<Family>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gpkv
