// gpu::GpuBackend against an oracle (std::unordered_map) through resizes and
// reopens, in direct, mirror and staged mode, with inline values and value
// cells (value_size > 8); host vs device batch memory; Async batches; the
// BktCache; read-only open; kAuto's choice of mode. Value-cell tables beyond
// the oracle (full values at any alignment, recycled cells, Async batches)
// are in gphash_gpu_cells_test.cc. Device tests: skipped when no CUDA device
// is usable (label `gpu`).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gpu/device_memory.h"
#include "gpu_test_util.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/gpu/backend.h"
#include "tables/gphash/layout.h"
#include "test_util.h"

namespace gpkv::gphash::gpu::gpu_test {

using gpkv::gpu::DeviceBytes;
using gpkv::gpu::DeviceStream;

namespace {

struct OracleCase {
  const char* name;
  GpuIndexMode mode;
  uint32_t key_size;
  uint32_t value_size;
  uint8_t slots_per_bucket = 8;
  uint8_t hash_locations = 2;
  uint8_t levels = 2;
  bool warp_puts = false;        // mirror / staged: GpuTableOptions::warp_puts
  bool tile_index_gets = false;  // mirror / staged: GpuTableOptions::tile_index_gets
  // Direct mode: BktCache reloads every this many operations (0: the
  // default, which these small runs never reach).
  uint64_t bkt_cache_reload_ops = 0;
  bool sort_all_gets = false;  // direct: sorted gets also for small batches
};

class GphashGpuOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(GphashGpuOracle, MatchesUnorderedMapThroughResizesAndReopens) {
  SKIP_WITHOUT_DEVICE();
  const OracleCase& param = GetParam();
  const uint32_t key_size = param.key_size;
  const uint32_t value_size = param.value_size;
  TableOptions options;
  options.key_size = key_size;
  options.value_size = value_size;
  options.expected_keys = 2000;  // small: the puts below force several resizes
  options.hash.slots_per_bucket = param.slots_per_bucket;
  options.hash.hash_locations = param.hash_locations;
  options.hash.levels = param.levels;
  GpuTableOptions gpu_options;
  gpu_options.index_mode = param.mode;
  if (param.bkt_cache_reload_ops != 0) {
    gpu_options.bkt_cache_reload_ops = param.bkt_cache_reload_ops;
    gpu_options.bkt_cache_fraction = 0.3;
  }
  if (param.sort_all_gets) gpu_options.sorted_get_min_ops = 0;
  gpu_options.warp_puts = param.warp_puts;
  gpu_options.tile_index_gets = param.tile_index_gets;
  TableHarness harness(std::string("oracle-") + param.name, options, gpu_options);
  ASSERT_TRUE(harness.ok());

  std::mt19937_64 rng(20251123);
  const size_t universe_size = 60000;
  std::vector<uint8_t> universe = RandomKeys(rng, universe_size, key_size);
  std::unordered_map<std::string, std::string> oracle;  // key bytes -> value bytes
  auto key_at = [&](size_t i) { return &universe[i * key_size]; };
  auto name_of = [&](const uint8_t* key) { return Bytes(key, key_size); };
  const std::string absent(value_size, '\0');  // what a get of a missing key leaves

  uint64_t cache_reloads = 0, cache_loaded = 0, cache_reads = 0;  // over the reopens
  for (int round = 0; round < 60; ++round) {
    size_t count = 1 + rng() % 8192;
    std::vector<uint8_t> keys(count * key_size);
    for (size_t i = 0; i < count; ++i) {
      // Draw from a growing prefix so batches hold repeats and known keys.
      size_t limit = std::min(universe_size, 2000 + static_cast<size_t>(round) * 1000);
      std::memcpy(&keys[i * key_size], key_at(rng() % limit), key_size);
    }
    int kind = static_cast<int>(rng() % 10);
    if (kind < 5) {
      std::vector<uint8_t> values(count * value_size);
      for (size_t i = 0; i < count; ++i) RandomValue(rng, &values[i * value_size], value_size);
      ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), count).ok());
      for (size_t i = 0; i < count; ++i) {
        oracle[name_of(&keys[i * key_size])] = Bytes(&values[i * value_size], value_size);
      }
    } else if (kind < 7) {
      std::vector<uint8_t> erased(count, 7);
      ASSERT_TRUE(harness.table().Erase(keys.data(), erased.data(), count).ok());
      for (size_t i = 0; i < count; ++i) {
        bool present = oracle.erase(name_of(&keys[i * key_size])) == 1;
        ASSERT_EQ(erased[i], present ? 1 : 0) << "round " << round << " op " << i;
      }
    } else {
      std::vector<uint8_t> values(count * value_size, 0xee);
      std::vector<uint8_t> found(count, 7);
      ASSERT_TRUE(harness.table().Get(keys.data(), values.data(), found.data(), count).ok());
      for (size_t i = 0; i < count; ++i) {
        auto it = oracle.find(name_of(&keys[i * key_size]));
        ASSERT_EQ(found[i], it != oracle.end() ? 1 : 0) << "round " << round << " op " << i;
        const std::string& expected = it != oracle.end() ? it->second : absent;
        ASSERT_EQ(Bytes(&values[i * value_size], value_size), expected)
            << "round " << round << " op " << i;
      }
    }
    if (round % 20 == 19) {
      const BktCacheStats cache = harness.table().bkt_cache_stats();
      cache_reloads += cache.reloads;
      cache_loaded += cache.buckets_loaded;
      cache_reads += cache.get_cache_reads;
      harness.Reopen();
      ASSERT_TRUE(harness.ok());
    }
  }

  gphash::Stats stats = harness.table().Stats();
  EXPECT_EQ(stats.keys, oracle.size());
  EXPECT_GT(stats.resizes, 0u);
  EXPECT_FALSE(stats.resizing);
  EXPECT_EQ(stats.levels, param.levels);
  if (value_size > 8) {
    // Every live key holds a cell of its own.
    EXPECT_GE(stats.value_bytes, oracle.size() * gphash::CellSizeFor(value_size));
  } else {
    EXPECT_EQ(stats.value_bytes, 0u);
  }
  ExpectScanFindsExactly(harness.table(), oracle, key_size, value_size);
  if (param.bkt_cache_reload_ops != 0) {
    EXPECT_GT(cache_reloads, 0u);
    EXPECT_GT(cache_loaded, 0u);
    EXPECT_GT(cache_reads, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, GphashGpuOracle,
    ::testing::Values(
        OracleCase{"direct_k8_v8", GpuIndexMode::kDirect, 8, 8},
        OracleCase{"mirror_k8_v8", GpuIndexMode::kMirror, 8, 8},
        OracleCase{"direct_k16_v4", GpuIndexMode::kDirect, 16, 4},
        OracleCase{"mirror_k32_v3", GpuIndexMode::kMirror, 32, 3},
        OracleCase{"staged_k8_v8", GpuIndexMode::kStaged, 8, 8},
        OracleCase{"staged_k32_v3", GpuIndexMode::kStaged, 32, 3},
        OracleCase{"mirror_k16_v8_tile_gets", GpuIndexMode::kMirror, 16, 8, 8, 2, 2, false, true},
        OracleCase{"direct_k8_v8_3L_3H_4S", GpuIndexMode::kDirect, 8, 8, 4, 3, 3},
        OracleCase{"mirror_k8_v8_1L_4H_16S", GpuIndexMode::kMirror, 8, 8, 16, 4, 1},
        OracleCase{"staged_k16_v8_2L_1H_16S", GpuIndexMode::kStaged, 16, 8, 16, 1, 2},
        OracleCase{"staged_k32_v5_tile_gets", GpuIndexMode::kStaged, 32, 5, 8, 2, 2, false, true},
        OracleCase{"mirror_k8_v8_warp_puts", GpuIndexMode::kMirror, 8, 8, 8, 2, 2, true},
        OracleCase{"direct_k8_v8_bktcache_reloads_sorted_gets", GpuIndexMode::kDirect, 8, 8, 8, 2,
                   2, false, false, 2048, true},
        OracleCase{"direct_k16_v8_sorted_gets", GpuIndexMode::kDirect, 16, 8, 8, 2, 2, false, false,
                   0, true},
        OracleCase{"direct_k32_v5_3L_3H_4S_bktcache_reloads", GpuIndexMode::kDirect, 32, 5, 4, 3, 3,
                   false, false, 2048},
        // Value cells (value_size > 8): the slot's value word is a cell's offset.
        OracleCase{"direct_k8_v16", GpuIndexMode::kDirect, 8, 16},
        OracleCase{"mirror_k8_v128", GpuIndexMode::kMirror, 8, 128},
        OracleCase{"staged_k16_v100", GpuIndexMode::kStaged, 16, 100},
        OracleCase{"direct_k32_v128_bktcache_reloads_sorted_gets", GpuIndexMode::kDirect, 32, 128,
                   8, 2, 2, false, false, 2048, true},
        OracleCase{"mirror_k8_v64_warp_puts", GpuIndexMode::kMirror, 8, 64, 8, 2, 2, true},
        OracleCase{"direct_k8_v24", GpuIndexMode::kDirect, 8, 24},
        OracleCase{"staged_k8_v9_3L_3H_4S", GpuIndexMode::kStaged, 8, 9, 4, 3, 3}),
    [](const ::testing::TestParamInfo<OracleCase>& info) { return std::string(info.param.name); });

TEST(GphashGpu, DeviceBatchesAnswerLikeHostBatches) {
  SKIP_WITHOUT_DEVICE();
  TableOptions options;
  options.expected_keys = 50000;
  TableHarness harness("device-batches", options, GpuIndexMode::kDirect);
  ASSERT_TRUE(harness.ok());
  std::mt19937_64 rng(7);
  const size_t count = 40000;
  std::vector<uint8_t> keys = RandomKeys(rng, count, 8);
  std::vector<uint8_t> values = RandomKeys(rng, count, 8);

  // Put the first half from host memory, the second half from device memory.
  const size_t half = count / 2;
  ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), half).ok());
  auto device_keys = DeviceBytes::Allocate(count * 8);
  auto device_values = DeviceBytes::Allocate(count * 8);
  auto device_found = DeviceBytes::Allocate(count);
  ASSERT_TRUE(device_keys.ok() && device_values.ok() && device_found.ok());
  ASSERT_TRUE(device_keys->CopyFromHost(keys.data(), count * 8).ok());
  ASSERT_TRUE(device_values->CopyFromHost(values.data(), count * 8).ok());
  ASSERT_TRUE(
      harness.table()
          .Put(device_keys->data() + half * 8, device_values->data() + half * 8, count - half)
          .ok());

  // Get everything into device memory, and into host memory.
  auto device_out = DeviceBytes::Allocate(count * 8);
  ASSERT_TRUE(device_out.ok());
  ASSERT_TRUE(harness.table()
                  .Get(device_keys->data(), device_out->data(), device_found->data(), count)
                  .ok());
  std::vector<uint8_t> from_device(count * 8), found_device(count);
  ASSERT_TRUE(device_out->CopyToHost(from_device.data(), count * 8).ok());
  ASSERT_TRUE(device_found->CopyToHost(found_device.data(), count).ok());
  std::vector<uint8_t> from_host(count * 8), found_host(count);
  ASSERT_TRUE(harness.table().Get(keys.data(), from_host.data(), found_host.data(), count).ok());
  EXPECT_EQ(from_device, values);
  EXPECT_EQ(from_host, values);
  EXPECT_EQ(found_device, std::vector<uint8_t>(count, 1));
  EXPECT_EQ(found_host, std::vector<uint8_t>(count, 1));

  // Keys at an odd device address are staged, not misread.
  auto odd = DeviceBytes::Allocate(8 * 10 + 1);
  ASSERT_TRUE(odd.ok());
  ASSERT_TRUE(odd->CopyFromHost(keys.data(), 80, 1).ok());
  std::vector<uint8_t> odd_values(80);
  ASSERT_TRUE(harness.table().Get(odd->data() + 1, odd_values.data(), nullptr, 10).ok());
  EXPECT_EQ(std::vector<uint8_t>(values.begin(), values.begin() + 80), odd_values);

  // Erase from device memory with the flags in device memory.
  ASSERT_TRUE(harness.table().Erase(device_keys->data(), device_found->data(), half).ok());
  ASSERT_TRUE(device_found->CopyToHost(found_device.data(), half).ok());
  EXPECT_EQ(std::vector<uint8_t>(found_device.begin(), found_device.begin() + half),
            std::vector<uint8_t>(half, 1));
  EXPECT_EQ(harness.table().Stats().keys, count - half);
}

TEST(GphashGpu, WaitingBatchesOrderedAfterACallerStreamAnswerTheSame) {
  SKIP_WITHOUT_DEVICE();
  auto stream = DeviceStream::Create();
  ASSERT_TRUE(stream.ok());
  TableOptions options;
  options.expected_keys = 4000;
  TableHarness harness("order-after", options, GpuIndexMode::kDirect);
  ASSERT_TRUE(harness.ok());
  std::mt19937_64 rng(13);
  const size_t count = 10000;  // past a resize
  std::vector<uint8_t> keys = RandomKeys(rng, count, 8);
  std::vector<uint8_t> values = RandomKeys(rng, count, 8);
  ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), count, stream->get()).ok());
  std::vector<uint8_t> out(count * 8), found(count);
  ASSERT_TRUE(
      harness.table().Get(keys.data(), out.data(), found.data(), count, stream->get()).ok());
  EXPECT_EQ(out, values);
  EXPECT_EQ(found, std::vector<uint8_t>(count, 1));
  std::vector<uint8_t> erased(count);
  ASSERT_TRUE(harness.table().Erase(keys.data(), erased.data(), count, stream->get()).ok());
  EXPECT_EQ(erased, std::vector<uint8_t>(count, 1));
  EXPECT_EQ(harness.table().Stats().keys, 0u);
}

class GphashGpuAsync : public ::testing::TestWithParam<GpuIndexMode> {};

TEST_P(GphashGpuAsync, AsyncBatchesAreCompleteAfterSynchronize) {
  SKIP_WITHOUT_DEVICE();
  auto stream = DeviceStream::Create();  // outlives the table
  ASSERT_TRUE(stream.ok());
  TableOptions options;
  options.expected_keys = 1000;  // PutAsync overflows: Synchronize resizes
  TableHarness harness("async", options, GetParam());
  ASSERT_TRUE(harness.ok());
  EXPECT_EQ(harness.table().staged(), GetParam() == GpuIndexMode::kStaged);
  std::mt19937_64 rng(11);
  const size_t count = 30000;
  std::vector<uint8_t> keys = RandomKeys(rng, count, 8);
  std::vector<uint8_t> values = RandomKeys(rng, count, 8);
  ASSERT_TRUE(harness.table().PutAsync(keys.data(), values.data(), count, stream->get()).ok());
  ASSERT_TRUE(harness.table().Synchronize(stream->get()).ok());
  std::vector<uint8_t> out(count * 8);
  std::vector<uint8_t> found(count);
  ASSERT_TRUE(
      harness.table().GetAsync(keys.data(), out.data(), found.data(), count, stream->get()).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(out, values);
  EXPECT_EQ(found, std::vector<uint8_t>(count, 1));
  EXPECT_GT(harness.table().Stats().resizes, 0u);

  std::vector<uint8_t> erased(count);
  ASSERT_TRUE(harness.table().EraseAsync(keys.data(), erased.data(), count, stream->get()).ok());
  ASSERT_TRUE(harness.table().Synchronize(stream->get()).ok());
  EXPECT_EQ(erased, std::vector<uint8_t>(count, 1));
  EXPECT_EQ(harness.table().Stats().keys, 0u);
  EXPECT_TRUE(harness.table().ForgetStream(stream->get()).ok());
}

INSTANTIATE_TEST_SUITE_P(Modes, GphashGpuAsync,
                         ::testing::Values(GpuIndexMode::kMirror, GpuIndexMode::kStaged),
                         [](const ::testing::TestParamInfo<GpuIndexMode>& info) {
                           return std::string(ModeName(info.param));
                         });

// Keys i of a table of `count` keys: key i -> value i * 3 + salt.
void KeysAndValues(uint64_t first, size_t count, uint64_t salt, std::vector<uint8_t>* keys,
                   std::vector<uint8_t>* values) {
  keys->resize(count * 8);
  values->resize(count * 8);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t key = (first + i) * 0x9E3779B97F4A7C15ull + 1;
    const uint64_t value = (first + i) * 3 + salt;
    std::memcpy(&(*keys)[i * 8], &key, 8);
    std::memcpy(&(*values)[i * 8], &value, 8);
  }
}

// Direct mode with a BktCache of `fraction` of the buckets, reloaded every
// `reload_ops` operations.
GpuTableOptions CacheOptions(double fraction, uint64_t reload_ops) {
  GpuTableOptions options;
  options.index_mode = GpuIndexMode::kDirect;
  options.bkt_cache_fraction = fraction;
  options.bkt_cache_reload_ops = reload_ops;
  return options;
}

TableOptions ExpectedKeys(uint64_t expected_keys) {
  TableOptions options;
  options.expected_keys = expected_keys;
  return options;
}

TEST(GphashGpuBktCache, HotGetsReadTheCacheAndWritesReachThePool) {
  SKIP_WITHOUT_DEVICE();
  TableHarness harness("bktcache-hot", ExpectedKeys(100000), CacheOptions(0.2, 20000));
  ASSERT_TRUE(harness.ok());
  std::vector<uint8_t> keys, values;
  KeysAndValues(0, 100000, 0, &keys, &values);
  ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), 100000).ok());
  const BktCacheStats empty = harness.table().bkt_cache_stats();
  EXPECT_GT(empty.capacity_buckets, 0u);
  EXPECT_LE(empty.capacity_buckets, empty.table_buckets / 5 + 1);

  // 1000 hot keys read over and over: after a reload their buckets are cached.
  const size_t hot = 1000;
  std::vector<uint8_t> out(hot * 8), found(hot);
  for (int round = 0; round < 60; ++round) {
    ASSERT_TRUE(harness.table().Get(keys.data(), out.data(), found.data(), hot).ok());
    ASSERT_EQ(found, std::vector<uint8_t>(hot, 1)) << "round " << round;
    ASSERT_EQ(0, std::memcmp(out.data(), values.data(), hot * 8)) << "round " << round;
  }
  const BktCacheStats before = harness.table().bkt_cache_stats();
  EXPECT_GT(before.reloads, 0u);
  EXPECT_GT(before.buckets_loaded, 0u);
  ASSERT_TRUE(harness.table().Get(keys.data(), out.data(), found.data(), hot).ok());
  const BktCacheStats after = harness.table().bkt_cache_stats();
  const uint64_t cache_reads = after.get_cache_reads - before.get_cache_reads;
  const uint64_t pool_reads = after.get_pool_reads - before.get_pool_reads;
  EXPECT_GE(cache_reads + pool_reads, hot);
  EXPECT_GE(cache_reads, 9 * (cache_reads + pool_reads) / 10)
      << cache_reads << " cache reads, " << pool_reads << " pool reads";

  // Updates and erases of cached keys reach the pool: a table opened without
  // a cache reads them there.
  std::vector<uint8_t> new_values;
  KeysAndValues(0, hot, 7, &keys, &new_values);
  ASSERT_TRUE(harness.table().Put(keys.data(), new_values.data(), hot).ok());
  std::vector<uint8_t> erased(hot / 2);
  ASSERT_TRUE(harness.table().Erase(keys.data() + hot / 2 * 8, erased.data(), hot / 2).ok());
  EXPECT_EQ(erased, std::vector<uint8_t>(hot / 2, 1));
  for (bool cached : {true, false}) {
    if (!cached) {
      harness.gpu_options().bkt_cache_fraction = 0;
      recovery::Report report;
      harness.Reopen(false, &report);
      ASSERT_TRUE(harness.ok());
      EXPECT_EQ(report.slots_cleared, 0u);
      EXPECT_EQ(report.duplicates_removed, 0u);
      EXPECT_EQ(harness.table().bkt_cache_stats().capacity_buckets, 0u);
    }
    ASSERT_TRUE(harness.table().Get(keys.data(), out.data(), found.data(), hot).ok());
    for (size_t i = 0; i < hot; ++i) {
      ASSERT_EQ(found[i], i < hot / 2 ? 1 : 0) << (cached ? "cached" : "pool") << " key " << i;
      if (i < hot / 2) {
        ASSERT_EQ(0, std::memcmp(&out[i * 8], &new_values[i * 8], 8)) << "key " << i;
      }
    }
  }
  EXPECT_EQ(harness.table().Stats().keys, 100000 - hot / 2);
}

// Gets on several threads (each its own stream) while the hot set moves, so
// reloads evict and load buckets under them, and a writer thread inserts
// (and resizes) meanwhile: no get may miss a key or read a wrong value.
TEST(GphashGpuBktCache, GetsDuringReloadsAndWritesAnswerRight) {
  SKIP_WITHOUT_DEVICE();
  TableHarness harness("bktcache-race", ExpectedKeys(150000), CacheOptions(0.1, 8192));
  ASSERT_TRUE(harness.ok());
  const size_t loaded = 100000;
  std::vector<uint8_t> keys, values;
  KeysAndValues(0, loaded, 0, &keys, &values);
  ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), loaded).ok());

  std::atomic<bool> failed{false};
  std::atomic<int> readers_done{0};
  auto reader = [&](int id) {
    std::mt19937_64 rng(100 + id);
    const size_t batch = 4096;
    std::vector<uint8_t> batch_keys(batch * 8), expected(batch * 8), out(batch * 8), found(batch);
    for (int round = 0; round < 150 && !failed; ++round) {
      // A window of 5000 hot keys that slides with the rounds.
      const size_t window = (static_cast<size_t>(round) * 600 + id * 20000) % (loaded - 5000);
      for (size_t i = 0; i < batch; ++i) {
        const size_t k = rng() % 10 < 9 ? window + rng() % 5000 : rng() % loaded;
        std::memcpy(&batch_keys[i * 8], &keys[k * 8], 8);
        std::memcpy(&expected[i * 8], &values[k * 8], 8);
      }
      Status got = harness.table().Get(batch_keys.data(), out.data(), found.data(), batch);
      if (!got.ok() || found != std::vector<uint8_t>(batch, 1) || out != expected) {
        ADD_FAILURE() << "reader " << id << " round " << round << ": " << got.ToString();
        failed = true;
      }
    }
    ++readers_done;
  };
  auto writer = [&]() {
    std::vector<uint8_t> fresh_keys, fresh_values;
    for (uint64_t first = loaded; readers_done < 3 && !failed && first < 1500000; first += 4096) {
      KeysAndValues(first, 4096, 0, &fresh_keys, &fresh_values);
      if (!harness.table().Put(fresh_keys.data(), fresh_values.data(), 4096).ok()) {
        ADD_FAILURE() << "put at " << first;
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < 3; ++id) threads.emplace_back(reader, id);
  threads.emplace_back(writer);
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(failed);
  const BktCacheStats stats = harness.table().bkt_cache_stats();
  EXPECT_GT(stats.reloads, 10u);
  EXPECT_GT(stats.buckets_loaded, stats.capacity_buckets);  // the hot set moved
  EXPECT_GT(stats.get_cache_reads, 0u);
  EXPECT_GT(harness.table().Stats().resizes, 0u);
}

TEST(GphashGpu, ReadOnlyPoolAnswersGetsAndRefusesWrites) {
  SKIP_WITHOUT_DEVICE();
  TableOptions options;
  TableHarness harness("read-only", options, GpuIndexMode::kAuto);
  ASSERT_TRUE(harness.ok());
  std::mt19937_64 rng(3);
  const size_t count = 1000;
  std::vector<uint8_t> keys = RandomKeys(rng, count, 8);
  std::vector<uint8_t> values = RandomKeys(rng, count, 8);
  ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), count).ok());
  harness.Reopen(/*read_only=*/true);
  ASSERT_TRUE(harness.ok());
  std::vector<uint8_t> out(count * 8);
  ASSERT_TRUE(harness.table().Get(keys.data(), out.data(), nullptr, count).ok());
  EXPECT_EQ(out, values);
  EXPECT_TRUE(harness.table().Put(keys.data(), values.data(), count).IsInvalidArgument());
}

TEST(GphashGpu, WithoutADeviceOpenIsUnsupportedNotACrash) {
  if (GpuBackend::DeviceUsable().ok()) GTEST_SKIP() << "a CUDA device is present";
  testutil::TempPool temp("no-device");
  auto pool = pm::Pool::Create(temp.path(), 16 << 20, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  TableOptions options;
  options.expected_keys = 1000;
  auto root = GpuBackend::Create(**pool, 1, options);  // host work only
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  auto table = GpuBackend::Open(**pool, "t", *root, GpuTableOptions{}, nullptr);
  ASSERT_TRUE(table.status().IsUnsupported()) << table.status().ToString();
  EXPECT_EQ(table.status().message().rfind("no usable CUDA device", 0), 0u)
      << table.status().message();
}

// A 64 MiB pool at `path` with the root of a table of 100000 keys: a few
// MiB of index.
void CreateRootOfAFewMiB(const std::string& path, std::unique_ptr<pm::Pool>* pool, uint64_t* root) {
  auto created = pm::Pool::Create(path, 64 << 20, SyncMode::kBatch);
  ASSERT_TRUE(created.ok());
  *pool = std::move(*created);
  TableOptions options;
  options.expected_keys = 100000;
  auto table_root = GpuBackend::Create(**pool, 1, options);
  ASSERT_TRUE(table_root.ok()) << table_root.status().ToString();
  *root = *table_root;
}

// kAuto without room for the mirror runs direct only up to
// direct_max_index_bytes; past it Open says Unsupported (the engine's kAuto
// then opens the table on the CPU backend).
TEST(GphashGpu, AutoModeRefusesDirectModePastTheIndexLimit) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("auto-limit");
  std::unique_ptr<pm::Pool> pool;
  uint64_t root = 0;
  ASSERT_NO_FATAL_FAILURE(CreateRootOfAFewMiB(temp.path(), &pool, &root));
  GpuTableOptions gpu_options;
  gpu_options.mirror_memory_fraction = 0;  // the mirror never fits
  gpu_options.direct_max_index_bytes = 1 << 20;
  auto refused = GpuBackend::Open(*pool, "t", root, gpu_options, nullptr);
  ASSERT_TRUE(refused.status().IsUnsupported()) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("direct_max_index_bytes"), std::string::npos);
  gpu_options.direct_max_index_bytes = 0;  // no limit: direct mode
  auto direct = GpuBackend::Open(*pool, "t", root, gpu_options, nullptr);
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_FALSE((*direct)->mirrored());
}

// kAuto with room for the mirror: mirror mode, or staged mode once the index
// passes staged_min_index_bytes (the host writes the pool faster than the
// GPU past the link's cliff).
TEST(GphashGpu, AutoModeStagesAnIndexPastTheStagedLimit) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("auto-staged");
  std::unique_ptr<pm::Pool> pool;
  uint64_t root = 0;
  ASSERT_NO_FATAL_FAILURE(CreateRootOfAFewMiB(temp.path(), &pool, &root));
  GpuTableOptions gpu_options;
  {
    auto table = GpuBackend::Open(*pool, "t", root, gpu_options, nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_TRUE((*table)->mirrored());
    EXPECT_FALSE((*table)->staged());
  }
  gpu_options.staged_min_index_bytes = 1 << 20;
  auto table = GpuBackend::Open(*pool, "t", root, gpu_options, nullptr);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_TRUE((*table)->staged());
  std::mt19937_64 rng(5);
  std::vector<uint8_t> keys = RandomKeys(rng, 1000, 8), values = RandomKeys(rng, 1000, 8);
  ASSERT_TRUE((*table)->Put(keys.data(), values.data(), 1000).ok());
  std::vector<uint8_t> out(1000 * 8);
  ASSERT_TRUE((*table)->Get(keys.data(), out.data(), nullptr, 1000).ok());
  EXPECT_EQ(out, values);
}

}  // namespace
}  // namespace gpkv::gphash::gpu::gpu_test
