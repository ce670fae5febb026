// Gets of large batches over an index in GPU memory (mirror and staged
// mode), which run one thread per key (GetIndexKernel, thread::IndexGet):
// answers against an unordered_map and against the tile kernel
// (GpuTableOptions::tile_index_gets) on the same pool, over every slot
// count and key size, tables of several levels, duplicate keys in a batch,
// erased and never-written keys, and device-memory batches.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/device_memory.h"
#include "gpu_test_util.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::DeviceBytes;

namespace {

using gpu_test::Bytes;
using gpu_test::RandomKeys;
using gpu_test::RandomValue;
using gpu_test::TableHarness;

struct IndexGetCase {
  const char* name;
  GpuIndexMode mode;
  uint32_t key_size;
  uint32_t value_size;
  uint8_t slots_per_bucket;
  uint8_t hash_locations;
  uint8_t levels;
};

class GphashGpuIndexGet : public ::testing::TestWithParam<IndexGetCase> {};

// Gets of `keys` (count of them) on `table`: values and found flags.
void GetAll(GpuBackend& table, const std::vector<uint8_t>& keys, size_t count, uint32_t value_size,
            std::vector<uint8_t>* values, std::vector<uint8_t>* found) {
  values->assign(count * value_size, 0xee);
  found->assign(count, 7);
  ASSERT_TRUE(table.Get(keys.data(), values->data(), found->data(), count).ok());
}

TEST_P(GphashGpuIndexGet, LargeBatchesAnswerLikeAMapAndLikeTiles) {
  SKIP_WITHOUT_DEVICE();
  const IndexGetCase& param = GetParam();
  const uint32_t key_size = param.key_size;
  const uint32_t value_size = param.value_size;
  TableOptions options;
  options.key_size = key_size;
  options.value_size = value_size;
  options.expected_keys = 4000;  // small: the puts below resize it into more levels
  options.hash.slots_per_bucket = param.slots_per_bucket;
  options.hash.hash_locations = param.hash_locations;
  options.hash.levels = param.levels;
  TableHarness harness(std::string("index-get-") + param.name, options, param.mode);
  ASSERT_TRUE(harness.ok());
  ASSERT_TRUE(harness.table().mirrored());

  std::mt19937_64 rng(20261126);
  const size_t written = 150000;
  std::vector<uint8_t> keys = RandomKeys(rng, written, key_size);
  std::vector<uint8_t> values(written * value_size);
  for (size_t i = 0; i < written; ++i) RandomValue(rng, &values[i * value_size], value_size);
  std::unordered_map<std::string, std::string> oracle;
  const size_t put_batch = 50000;
  for (size_t done = 0; done < written; done += put_batch) {
    ASSERT_TRUE(
        harness.table().Put(&keys[done * key_size], &values[done * value_size], put_batch).ok());
    for (size_t i = done; i < done + put_batch; ++i) {
      oracle[Bytes(&keys[i * key_size], key_size)] = Bytes(&values[i * value_size], value_size);
    }
  }
  // Every third key erased.
  std::vector<uint8_t> erase_keys;
  for (size_t i = 0; i < written; i += 3) {
    erase_keys.insert(erase_keys.end(), &keys[i * key_size], &keys[(i + 1) * key_size]);
    oracle.erase(Bytes(&keys[i * key_size], key_size));
  }
  ASSERT_TRUE(harness.table().Erase(erase_keys.data(), nullptr, erase_keys.size() / key_size).ok());
  ASSERT_GT(harness.table().Stats().resizes, 0u) << "the table never resized";

  // 2^16 gets: written keys (live and erased), repeats, never-written keys.
  const size_t count = size_t{1} << 16;
  std::vector<uint8_t> get_keys(count * key_size);
  std::vector<uint8_t> fresh = RandomKeys(rng, count, key_size);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* from = (i % 4 == 3) ? &fresh[i * key_size] : &keys[(rng() % written) * key_size];
    std::memcpy(&get_keys[i * key_size], from, key_size);
  }
  std::vector<uint8_t> got, found;
  GetAll(harness.table(), get_keys, count, value_size, &got, &found);
  size_t hits = 0;
  for (size_t i = 0; i < count; ++i) {
    auto it = oracle.find(Bytes(&get_keys[i * key_size], key_size));
    ASSERT_EQ(found[i], it != oracle.end() ? 1 : 0) << "get " << i;
    if (it == oracle.end()) {
      EXPECT_EQ(Bytes(&got[i * value_size], value_size), std::string(value_size, '\0'));
    } else {
      EXPECT_EQ(Bytes(&got[i * value_size], value_size), it->second) << "get " << i;
      ++hits;
    }
  }
  EXPECT_GT(hits, count / 3);

  // The same batch from device memory answers the same.
  auto device_keys = DeviceBytes::Allocate(get_keys.size());
  auto device_values = DeviceBytes::Allocate(got.size());
  auto device_found = DeviceBytes::Allocate(count);
  ASSERT_TRUE(device_keys.ok() && device_values.ok() && device_found.ok());
  ASSERT_TRUE(device_keys->CopyFromHost(get_keys.data(), get_keys.size()).ok());
  ASSERT_TRUE(harness.table()
                  .Get(device_keys->data(), device_values->data(), device_found->data(), count)
                  .ok());
  std::vector<uint8_t> device_got(got.size()), device_flags(count);
  ASSERT_TRUE(device_values->CopyToHost(device_got.data(), device_got.size()).ok());
  ASSERT_TRUE(device_found->CopyToHost(device_flags.data(), count).ok());
  EXPECT_EQ(device_got, got);
  EXPECT_EQ(device_flags, found);

  // The tile kernel on the same pool gives the same answers.
  harness.CloseTable();
  GpuTableOptions gpu_options;
  gpu_options.index_mode = param.mode;
  gpu_options.tile_index_gets = true;
  auto tiles = GpuBackend::Open(harness.pool(), "t", harness.root(), gpu_options, nullptr);
  ASSERT_TRUE(tiles.ok()) << tiles.status().ToString();
  std::vector<uint8_t> tile_got, tile_found;
  GetAll(**tiles, get_keys, count, value_size, &tile_got, &tile_found);
  EXPECT_EQ(tile_got, got);
  EXPECT_EQ(tile_found, found);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, GphashGpuIndexGet,
    ::testing::Values(IndexGetCase{"mirror_k8_v8", GpuIndexMode::kMirror, 8, 8, 8, 2, 2},
                      IndexGetCase{"mirror_k8_v3_4S_3H_3L", GpuIndexMode::kMirror, 8, 3, 4, 3, 3},
                      IndexGetCase{"mirror_k16_v8_16S_1H_2L", GpuIndexMode::kMirror, 16, 8, 16, 1,
                                   2},
                      IndexGetCase{"mirror_k32_v5", GpuIndexMode::kMirror, 32, 5, 8, 2, 2},
                      IndexGetCase{"staged_k8_v8_16S_4H_1L", GpuIndexMode::kStaged, 8, 8, 16, 4, 1},
                      IndexGetCase{"staged_k32_v8_4S_2H_2L", GpuIndexMode::kStaged, 32, 8, 4, 2, 2},
                      IndexGetCase{"mirror_k8_v64_cells", GpuIndexMode::kMirror, 8, 64, 8, 2, 2}),
    [](const ::testing::TestParamInfo<IndexGetCase>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace gpkv::gphash::gpu
