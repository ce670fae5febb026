// Logged hash tables (TableOptions::hash_log) on the CUDA backend: the index
// is the GPU slab hash, write batches come from host memory. The
// unordered_map oracle through checkpoints and reopens on either backend; the
// same batches on the CPU and CUDA backends leave the same bytes in root, log
// and image; gets take device memory, write batches in device memory are
// Unsupported.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "gpu_test_util.h"
#include "recovery/verify.h"
#include "tables/gphash/logged/layout.h"
#include "test_util.h"

namespace gpkv {
namespace {

namespace logged = gphash::logged;

Options PoolOptions(Backend backend) {
  Options options = testutil::DbOptions(uint64_t{64} << 20, 2, backend);
  return options;
}

TableOptions LoggedOptions() {
  TableOptions options;
  options.expected_keys = 1024;
  options.hash_log.batch_entries = 64;
  options.hash_log.log_batches = 4;
  return options;
}

// Batches of puts and erases over 3000 keys, some larger than the log.
struct Batch {
  bool erase = false;
  std::vector<uint64_t> keys, values;
};
std::vector<Batch> Workload(uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<Batch> batches(60);
  for (size_t b = 0; b < batches.size(); ++b) {
    Batch& batch = batches[b];
    batch.erase = b % 4 == 3;
    const size_t n = b % 9 == 0 ? 1500 : 1 + random() % 200;
    for (size_t i = 0; i < n; ++i) {
      batch.keys.push_back(random() % 3000);
      batch.values.push_back(random());
    }
  }
  return batches;
}

using Oracle = std::unordered_map<uint64_t, uint64_t>;

void RunBatch(Table& table, const Batch& batch, Oracle& oracle) {
  if (batch.erase) {
    std::vector<uint8_t> erased(batch.keys.size());
    ASSERT_TRUE(table.Erase(batch.keys, erased).ok());
    for (size_t i = 0; i < batch.keys.size(); ++i) {
      ASSERT_EQ(erased[i], oracle.erase(batch.keys[i])) << i;
    }
  } else {
    ASSERT_TRUE(table.Put(batch.keys, batch.values).ok());
    for (size_t i = 0; i < batch.keys.size(); ++i) oracle[batch.keys[i]] = batch.values[i];
  }
}

void ExpectMatches(Table& table, const Oracle& oracle) {
  std::vector<uint64_t> keys(3000), values(3000);
  for (uint64_t key = 0; key < 3000; ++key) keys[key] = key;
  std::vector<uint8_t> found(3000);
  ASSERT_TRUE(table.Get(keys, values, found).ok());
  for (uint64_t key = 0; key < 3000; ++key) {
    auto it = oracle.find(key);
    ASSERT_EQ(found[key], it != oracle.end() ? 1 : 0) << key;
    if (it != oracle.end()) ASSERT_EQ(values[key], it->second) << key;
  }
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, oracle.size());
}

TEST(GphashLoggedGpu, OracleThroughCheckpointsAndReopensOnEitherBackend) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool pool("gphash-logged-gpu");
  Oracle oracle;
  const std::vector<Batch> batches = Workload(3);
  {
    auto db = DB::Open(pool.path(), PoolOptions(Backend::kCuda));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->CreateTable("h", LoggedOptions());
    ASSERT_TRUE(table.ok()) << table.status().ToString();
  }
  for (int round = 0; round < 4; ++round) {
    const Backend backend = round % 2 == 0 ? Backend::kCuda : Backend::kCpu;
    auto db = DB::Open(pool.path(), PoolOptions(backend));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->OpenTable("h");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto stats = (*table)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->backend, backend == Backend::kCuda ? "cuda" : "cpu");
    ExpectMatches(**table, oracle);
    for (size_t b = round * 15; b < (round + 1) * 15u; ++b) RunBatch(**table, batches[b], oracle);
    ExpectMatches(**table, oracle);
  }
  auto report = recovery::VerifyPool(pool.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
}

// The bytes of the pool's one table: root, log and image.
std::vector<uint8_t> TableBytes(const std::string& path) {
  auto a = testutil::ReadBytes<format::Superblock>(path, format::kSuperblockOffset[0]);
  auto b = testutil::ReadBytes<format::Superblock>(path, format::kSuperblockOffset[1]);
  const format::Superblock& current = a.generation > b.generation ? a : b;
  auto entry = testutil::ReadBytes<format::CatalogEntry>(
      path, current.catalog_offset + sizeof(format::CatalogHeader));
  auto root = testutil::ReadBytes<logged::LoggedRoot>(path, entry.root_offset);
  const logged::Checkpoint& checkpoint =
      root.checkpoints[logged::ActiveIndex(root.active_checkpoint)];
  std::vector<uint8_t> bytes;
  auto append = [&](uint64_t offset, uint64_t length) {
    for (uint64_t at = 0; at < length; ++at) {
      bytes.push_back(testutil::ReadBytes<uint8_t>(path, offset + at));
    }
  };
  append(entry.root_offset, logged::kLoggedRootSize);
  append(root.log_offset, root.log_capacity);
  append(checkpoint.image_offset,
         logged::ImageBytes(checkpoint.image_entries, root.key_size, root.value_size));
  return bytes;
}

TEST(GphashLoggedGpu, BothBackendsWriteTheSameBytes) {
  SKIP_WITHOUT_DEVICE();
  const std::vector<Batch> batches = Workload(4);
  std::vector<uint8_t> bytes[2];
  for (int side = 0; side < 2; ++side) {
    testutil::TempPool pool(side == 0 ? "gphash-logged-bytes-cpu" : "gphash-logged-bytes-gpu");
    {
      auto db = DB::Open(pool.path(), PoolOptions(side == 0 ? Backend::kCpu : Backend::kCuda));
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      auto table = (*db)->CreateTable("h", LoggedOptions());
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      Oracle oracle;
      for (size_t b = 0; b < 40; ++b) RunBatch(**table, batches[b], oracle);
    }
    bytes[side] = TableBytes(pool.path());
  }
  ASSERT_EQ(bytes[0].size(), bytes[1].size());
  EXPECT_TRUE(bytes[0] == bytes[1]) << "the CPU and CUDA backends wrote different table bytes";
}

TEST(GphashLoggedGpu, GetsTakeDeviceMemoryAndWritesDoNot) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool pool("gphash-logged-device");
  auto db = DB::Open(pool.path(), PoolOptions(Backend::kCuda));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("h", LoggedOptions());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> keys = {1, 2, 3}, values = {10, 20, 30};
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  uint64_t* device_keys = nullptr;
  uint64_t* device_values = nullptr;
  uint8_t* device_found = nullptr;
  ASSERT_EQ(cudaMalloc(&device_keys, 3 * 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&device_values, 3 * 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&device_found, 3), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device_keys, keys.data(), 3 * 8, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_TRUE((*table)
                  ->Get(ConstBytes(device_keys, 3 * 8), MutableBytes(device_values, 3 * 8),
                        MutableBytes(device_found, 3))
                  .ok());
  std::vector<uint64_t> got(3);
  ASSERT_EQ(cudaMemcpy(got.data(), device_values, 3 * 8, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, values);
  Status put = (*table)->Put(ConstBytes(device_keys, 3 * 8), ConstBytes(device_values, 3 * 8));
  EXPECT_TRUE(put.IsUnsupported()) << put.ToString();
  cudaFree(device_keys);
  cudaFree(device_values);
  cudaFree(device_found);
}

}  // namespace
}  // namespace gpkv
