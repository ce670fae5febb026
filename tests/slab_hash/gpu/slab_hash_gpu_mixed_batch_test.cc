// The slab hash's mixed-batch hook (tables/slab_hash/mixed_batch.h) on a
// volatile hash table a DB on the CUDA backend hands out: searches, replaces
// and deletes of one launch, from host and from device memory, answer as
// the table's own batches then see them. Device test: skipped when no CUDA
// device is usable (label `gpu`).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpkv/db.h"
#include "gpu/device_memory.h"
#include "slab_hash_gpu_test_util.h"
#include "tables/slab_hash/mixed_batch.h"
#include "test_util.h"

namespace gpkv::slab_hash::gpu_test {
namespace {

constexpr uint64_t kKeys = 4096;

std::vector<uint8_t> KeysOf(uint64_t first, uint64_t count) {
  std::vector<uint8_t> keys(count * 8);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t key = first + i;
    std::memcpy(&keys[i * 8], &key, 8);
  }
  return keys;
}

std::vector<uint8_t> ValuesOf(uint64_t first, uint64_t count, uint64_t salt) {
  std::vector<uint8_t> values(count * 8);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t value = (first + i) * 31 + salt;
    std::memcpy(&values[i * 8], &value, 8);
  }
  return values;
}

// A batch of kKeys operations on a table holding keys [0, kKeys): searches
// of [0, kKeys/4), deletes of [kKeys/4, kKeys/2), replaces of [kKeys,
// kKeys * 3/2) (new keys) and [kKeys/2, kKeys) (values of salt 1).
struct Batch {
  std::vector<uint8_t> ops, keys, values;
};

Batch MakeBatch() {
  Batch batch;
  batch.keys = KeysOf(0, kKeys / 4);
  batch.ops.assign(kKeys / 4, static_cast<uint8_t>(MixedOp::kSearch));
  batch.values.assign(kKeys / 4 * 8, 0);
  auto append = [&](MixedOp op, uint64_t first, uint64_t count) {
    const std::vector<uint8_t> keys = KeysOf(first, count);
    const std::vector<uint8_t> values = ValuesOf(first, count, 1);
    batch.keys.insert(batch.keys.end(), keys.begin(), keys.end());
    batch.values.insert(batch.values.end(), values.begin(), values.end());
    batch.ops.insert(batch.ops.end(), count, static_cast<uint8_t>(op));
  };
  append(MixedOp::kDelete, kKeys / 4, kKeys / 4);
  append(MixedOp::kReplace, kKeys, kKeys / 2);
  append(MixedOp::kReplace, kKeys / 2, kKeys / 2);
  return batch;
}

void CheckAfter(Table& table, const Batch& batch, const std::vector<uint8_t>& values,
                const std::vector<uint8_t>& results) {
  const std::vector<uint8_t> loaded = ValuesOf(0, kKeys, 0);
  for (uint64_t i = 0; i < kKeys / 4; ++i) {  // searches saw the loaded values
    ASSERT_EQ(results[i], 1) << "search " << i;
    ASSERT_EQ(std::memcmp(&values[i * 8], &loaded[i * 8], 8), 0) << "search " << i;
  }
  for (uint64_t i = kKeys / 4; i < batch.ops.size(); ++i) ASSERT_EQ(results[i], 1) << i;
  // Then: [kKeys/4, kKeys/2) gone, [kKeys/2, kKeys * 3/2) with salt 1.
  const std::vector<uint8_t> keys = KeysOf(0, kKeys * 3 / 2);
  std::vector<uint8_t> got(keys.size()), found(kKeys * 3 / 2);
  ASSERT_TRUE(table.Get(keys, got, found).ok());
  const std::vector<uint8_t> replaced = ValuesOf(0, kKeys * 3 / 2, 1);
  for (uint64_t key = 0; key < kKeys * 3 / 2; ++key) {
    const bool deleted = key >= kKeys / 4 && key < kKeys / 2;
    ASSERT_EQ(found[key], deleted ? 0 : 1) << key;
    if (deleted) continue;
    const uint8_t* want = key < kKeys / 4 ? &loaded[key * 8] : &replaced[key * 8];
    ASSERT_EQ(std::memcmp(&got[key * 8], want, 8), 0) << key;
  }
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, kKeys * 5 / 4);
}

class SlabHashGpuMixedBatch : public ::testing::TestWithParam<bool> {};

TEST_P(SlabHashGpuMixedBatch, AppliesSearchesReplacesAndDeletesOfOneLaunch) {
  SKIP_WITHOUT_DEVICE();
  const bool on_device = GetParam();
  testutil::TempPool pool(on_device ? "mixed-device" : "mixed-host");
  auto db =
      DB::Open(pool.path(), testutil::DbOptions(uint64_t{16} << 20, 2, ::gpkv::Backend::kCuda));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions options;
  options.durability = Durability::kVolatile;
  options.expected_keys = kKeys * 2;
  auto table = (*db)->CreateTable("cache", options);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_TRUE((*table)->Put(KeysOf(0, kKeys), ValuesOf(0, kKeys, 0)).ok());

  const Batch batch = MakeBatch();
  const size_t count = batch.ops.size();
  std::vector<uint8_t> values = batch.values, results(count, 7);
  if (on_device) {
    auto ops = ::gpkv::gpu::DeviceBytes::Allocate(count);
    auto keys = ::gpkv::gpu::DeviceBytes::Allocate(count * 8);
    auto device_values = ::gpkv::gpu::DeviceBytes::Allocate(count * 8);
    auto device_results = ::gpkv::gpu::DeviceBytes::Allocate(count);
    ASSERT_TRUE(ops.ok() && keys.ok() && device_values.ok() && device_results.ok());
    ASSERT_TRUE(ops->CopyFromHost(batch.ops.data(), count).ok());
    ASSERT_TRUE(keys->CopyFromHost(batch.keys.data(), count * 8).ok());
    ASSERT_TRUE(device_values->CopyFromHost(values.data(), count * 8).ok());
    Status mixed =
        MixedBatch(**table, ConstBytes(ops->data(), count), ConstBytes(keys->data(), count * 8),
                   MutableBytes(device_values->data(), count * 8),
                   MutableBytes(device_results->data(), count));
    ASSERT_TRUE(mixed.ok()) << mixed.ToString();
    ASSERT_TRUE(device_values->CopyToHost(values.data(), count * 8).ok());
    ASSERT_TRUE(device_results->CopyToHost(results.data(), count).ok());
  } else {
    Status mixed = MixedBatch(**table, batch.ops, batch.keys, values, results);
    ASSERT_TRUE(mixed.ok()) << mixed.ToString();
  }
  CheckAfter(**table, batch, values, results);
}

INSTANTIATE_TEST_SUITE_P(HostAndDeviceArrays, SlabHashGpuMixedBatch, ::testing::Bool());

}  // namespace
}  // namespace gpkv::slab_hash::gpu_test
