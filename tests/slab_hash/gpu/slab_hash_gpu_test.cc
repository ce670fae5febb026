// slab_hash::gpu::GpuBackend against an oracle (std::unordered_map) over millions
// of operations in batches, for every kind of geometry (8/16/32-byte keys;
// one-word, several-word and out-of-line values); duplicates within a batch;
// growth from a tiny table; flushes; device-memory batches (also
// misaligned); host-memory gets of several pipeline chunks; small batches of
// pinned or registered memory (used in place); Mixed; Scan; ScanIntoDevice; full
// device memory. Device tests: skipped when no CUDA device is usable (label `gpu`). Concurrent
// callers: slab_hash_gpu_concurrency_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/device_memory.h"
#include "gpu/host_memory.h"
#include "slab_hash_gpu_test_util.h"
#include "tables/slab_hash/gpu/backend.h"
#include "tables/slab_hash/layout.h"

namespace gpkv::slab_hash::gpu_test {
namespace {

struct OracleCase {
  const char* name;
  uint32_t key_size;
  uint32_t value_size;
  uint64_t expected_keys;
  uint64_t universe;  // distinct keys the batches draw from (with repeats)
  int rounds;
  size_t batch;
};

class SlabHashGpuOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(SlabHashGpuOracle, MatchesUnorderedMapOverPutEraseAndGetBatches) {
  SKIP_WITHOUT_DEVICE();
  const OracleCase& param = GetParam();
  const uint32_t key_size = param.key_size;
  const uint32_t value_size = param.value_size;
  auto table = MakeTable(key_size, value_size, param.expected_keys);
  ASSERT_NE(table, nullptr);
  Oracle oracle(key_size, value_size);
  std::mt19937_64 random(1400 + key_size * 131 + value_size);
  const uint64_t salt = random();
  auto pick_keys = [&](size_t count) {
    std::vector<uint8_t> keys(count * key_size);
    for (size_t i = 0; i < count; ++i) {
      UniverseKey(salt, random() % param.universe, &keys[i * key_size], key_size);
    }
    return keys;
  };
  for (int round = 0; round < param.rounds; ++round) {
    const std::string what = std::string(param.name) + " round " + std::to_string(round);
    // Puts (batches drawn with repeats: some keys twice in a batch).
    std::vector<uint8_t> keys = pick_keys(param.batch);
    std::vector<uint8_t> values(param.batch * value_size);
    for (size_t i = 0; i < param.batch; ++i)
      FillValue(random(), &values[i * value_size], value_size);
    Status status = table->Put(keys.data(), values.data(), param.batch, nullptr);
    ASSERT_TRUE(status.ok()) << what << ": " << status.ToString();
    oracle.Put(keys, values);
    // Erases.
    const size_t erase_count = param.batch / 3;
    keys = pick_keys(erase_count);
    std::vector<uint8_t> erased(erase_count, 7);
    status = table->Erase(keys.data(), erased.data(), erase_count, nullptr);
    ASSERT_TRUE(status.ok()) << what << ": " << status.ToString();
    EXPECT_EQ(erased, oracle.Erase(keys)) << what << ": erased flags";
    // Gets.
    keys = pick_keys(param.batch);
    std::vector<uint8_t> got(param.batch * value_size, 0xee);
    std::vector<uint8_t> found(param.batch, 7);
    status = table->Get(keys.data(), got.data(), found.data(), param.batch, nullptr);
    ASSERT_TRUE(status.ok()) << what << ": " << status.ToString();
    oracle.ExpectGets(keys, got, found, what);
    auto stats = table->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->keys, oracle.size()) << what;
  }
  oracle.ExpectScan(*table, param.name);
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_GT(stats->memory_utilisation, 0.0);
  EXPECT_LE(stats->load_factor, 1.0);
  if (GeometryFor(key_size, value_size).value_out_of_line) {
    EXPECT_GE(stats->slabs, stats->buckets + stats->keys) << "a value slab per key";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, SlabHashGpuOracle,
    ::testing::Values(
        // 8-byte pairs, sized: 12 rounds of 250k puts, 83k erases, 250k gets.
        OracleCase{"k8v8", 8, 8, uint64_t{1} << 20, uint64_t{1} << 20, 12, 250000},
        // Growth by rehash from a tiny table.
        OracleCase{"k8v8_growing", 8, 8, 64, 600000, 8, 200000},
        OracleCase{"k8v4", 8, 4, 1 << 16, 200000, 5, 60000},
        OracleCase{"k8v1", 8, 1, 1 << 10, 100000, 4, 40000},
        OracleCase{"k8v12", 8, 12, 1 << 16, 200000, 5, 60000},
        OracleCase{"k16v8", 16, 8, 1 << 10, 200000, 5, 60000},
        OracleCase{"k16v24", 16, 24, 1 << 16, 200000, 5, 60000},
        OracleCase{"k32v8", 32, 8, 1 << 16, 200000, 5, 60000},
        OracleCase{"k32v88", 32, 88, 1 << 12, 100000, 4, 40000},
        OracleCase{"k8v112", 8, 112, 1 << 12, 100000, 4, 40000},
        // Out-of-line values.
        OracleCase{"k8v128", 8, 128, 1 << 12, 200000, 5, 60000},
        OracleCase{"k32v100", 32, 100, 1 << 16, 200000, 5, 60000},
        OracleCase{"k16v113", 16, 113, 1 << 10, 100000, 4, 40000}),
    [](const ::testing::TestParamInfo<OracleCase>& info) { return std::string(info.param.name); });

// ---- duplicates within a batch

class SlabHashGpuDuplicates : public ::testing::TestWithParam<std::pair<uint32_t, uint32_t>> {};

TEST_P(SlabHashGpuDuplicates, LastPutWinsAndFirstEraseReports) {
  SKIP_WITHOUT_DEVICE();
  const auto [key_size, value_size] = GetParam();
  auto table = MakeTable(key_size, value_size, 1 << 12);
  ASSERT_NE(table, nullptr);
  std::mt19937_64 random(77);
  constexpr size_t kKeys = 20000;
  constexpr int kCopies = 5;
  // Each key kCopies times with different values, shuffled.
  std::vector<size_t> order(kKeys * kCopies);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), random);
  std::vector<uint8_t> keys(order.size() * key_size), values(order.size() * value_size);
  for (size_t i = 0; i < order.size(); ++i) {
    UniverseKey(5, order[i] % kKeys, &keys[i * key_size], key_size);
    FillValue(random(), &values[i * value_size], value_size);
  }
  ASSERT_TRUE(table->Put(keys.data(), values.data(), order.size(), nullptr).ok());
  Oracle oracle(key_size, value_size);
  oracle.Put(keys, values);
  ASSERT_EQ(oracle.size(), kKeys);
  // Again over the same keys: duplicates that replace.
  for (size_t i = 0; i < order.size(); ++i)
    FillValue(random(), &values[i * value_size], value_size);
  ASSERT_TRUE(table->Put(keys.data(), values.data(), order.size(), nullptr).ok());
  oracle.Put(keys, values);
  std::vector<uint8_t> got(order.size() * value_size), found(order.size());
  ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), order.size(), nullptr).ok());
  oracle.ExpectGets(keys, got, found, "after duplicate puts");

  // Erases: every key three times plus absent keys, shuffled.
  std::vector<uint8_t> erase_keys;
  std::vector<size_t> erase_order(kKeys * 3 + 5000);
  std::iota(erase_order.begin(), erase_order.end(), 0);
  std::shuffle(erase_order.begin(), erase_order.end(), random);
  erase_keys.resize(erase_order.size() * key_size);
  for (size_t i = 0; i < erase_order.size(); ++i) {
    const size_t index =
        erase_order[i] < kKeys * 3 ? erase_order[i] % kKeys : kKeys + erase_order[i];
    UniverseKey(5, index, &erase_keys[i * key_size], key_size);
  }
  std::vector<uint8_t> erased(erase_order.size());
  ASSERT_TRUE(table->Erase(erase_keys.data(), erased.data(), erase_order.size(), nullptr).ok());
  EXPECT_EQ(erased, oracle.Erase(erase_keys));
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, 0u);
  oracle.ExpectScan(*table, "after duplicate erases");
}

INSTANTIATE_TEST_SUITE_P(Sizes, SlabHashGpuDuplicates,
                         ::testing::Values(std::make_pair(8u, 8u), std::make_pair(16u, 24u),
                                           std::make_pair(8u, 128u), std::make_pair(32u, 100u),
                                           std::make_pair(32u, 3u)));

// ---- growth

TEST(SlabHashGpu, GrowsFromATinyTableToMillionsOfKeys) {
  SKIP_WITHOUT_DEVICE();
  auto table = MakeTable(8, 8, 1);
  ASSERT_NE(table, nullptr);
  constexpr size_t kBatch = 1 << 18;
  constexpr int kBatches = 16;  // 4M keys
  std::vector<uint8_t> keys(kBatch * 8), values(kBatch * 8);
  // A small first batch (the table sizes itself for a first batch).
  std::vector<uint8_t> small_keys(1000 * 8), small_values(1000 * 8);
  for (size_t i = 0; i < 1000; ++i) UniverseKey(10, i, &small_keys[i * 8], 8);
  ASSERT_TRUE(table->Put(small_keys.data(), small_values.data(), 1000, nullptr).ok());
  for (int b = 0; b < kBatches; ++b) {
    for (size_t i = 0; i < kBatch; ++i) {
      const uint64_t index = static_cast<uint64_t>(b) * kBatch + i;
      UniverseKey(9, index, &keys[i * 8], 8);
      FillValue(index, &values[i * 8], 8);
    }
    ASSERT_TRUE(table->Put(keys.data(), values.data(), kBatch, nullptr).ok()) << b;
  }
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, kBatch * kBatches + 1000);
  EXPECT_GE(stats->rehashes, 2u);
  EXPECT_GT(stats->rehash_seconds, 0.0);
  EXPECT_GT(stats->super_blocks, 0u);
  // Every key, with its value.
  std::vector<uint8_t> got(kBatch * 8), found(kBatch), expected(kBatch * 8);
  for (int b = 0; b < kBatches; ++b) {
    for (size_t i = 0; i < kBatch; ++i) {
      const uint64_t index = static_cast<uint64_t>(b) * kBatch + i;
      UniverseKey(9, index, &keys[i * 8], 8);
      FillValue(index, &expected[i * 8], 8);
    }
    ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), kBatch, nullptr).ok());
    EXPECT_EQ(std::count(found.begin(), found.end(), 1), static_cast<long>(kBatch)) << b;
    EXPECT_EQ(got, expected) << b;
  }
}

TEST(SlabHashGpu, ReserveSizesAnEmptyTableAndRehashesAFullOne) {
  SKIP_WITHOUT_DEVICE();
  auto table = MakeTable(16, 8, 1);
  ASSERT_NE(table, nullptr);
  ASSERT_TRUE(table->Reserve(1 << 20, nullptr).ok());
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_GE(stats->buckets, BucketsFor(1 << 20, GeometryFor(16, 8).slots_per_slab));
  EXPECT_EQ(stats->rehashes, 0u);  // nothing to move
  Oracle oracle(16, 8);
  std::vector<uint8_t> keys(100000 * 16), values(100000 * 8);
  for (size_t i = 0; i < 100000; ++i) {
    UniverseKey(3, i, &keys[i * 16], 16);
    FillValue(i, &values[i * 8], 8);
  }
  ASSERT_TRUE(table->Put(keys.data(), values.data(), 100000, nullptr).ok());
  oracle.Put(keys, values);
  ASSERT_TRUE(table->Reserve(1 << 23, nullptr).ok());
  stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->rehashes, 1u);
  EXPECT_EQ(stats->keys, 100000u);
  oracle.ExpectScan(*table, "after Reserve");
}

// ---- flush

TEST(SlabHashGpu, FlushDropsDeadSlotsAndKeepsTheContents) {
  SKIP_WITHOUT_DEVICE();
  // 2000 expected keys: lists of about two slabs at 5000 keys, no rehash yet.
  auto table = MakeTable(8, 8, 2000);
  ASSERT_NE(table, nullptr);
  Oracle oracle(8, 8);
  constexpr size_t kKeys = 5000;
  std::vector<uint8_t> keys(kKeys * 8), values(kKeys * 8);
  for (size_t i = 0; i < kKeys; ++i) {
    UniverseKey(11, i, &keys[i * 8], 8);
    FillValue(i + 1, &values[i * 8], 8);
  }
  // In two batches: a first batch larger than the table would size it for
  // itself (a bulk build).
  ASSERT_TRUE(table->Put(keys.data(), values.data(), 2000, nullptr).ok());
  ASSERT_TRUE(
      table->Put(keys.data() + 2000 * 8, values.data() + 2000 * 8, kKeys - 2000, nullptr).ok());
  oracle.Put(keys, values);
  // Erase every other key: few dead slots, below the automatic flush.
  std::vector<uint8_t> erase_keys;
  for (size_t i = 0; i < kKeys; i += 2) {
    erase_keys.insert(erase_keys.end(), &keys[i * 8], &keys[i * 8] + 8);
  }
  std::vector<uint8_t> erased(erase_keys.size() / 8);
  ASSERT_TRUE(table->Erase(erase_keys.data(), erased.data(), erased.size(), nullptr).ok());
  EXPECT_EQ(erased, oracle.Erase(erase_keys));
  auto before = table->Stats();
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->dead_slots, kKeys / 2);
  EXPECT_EQ(before->rehashes, 0u);
  ASSERT_TRUE(table->Flush(nullptr).ok());
  auto after = table->Stats();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->dead_slots, 0u);
  EXPECT_EQ(after->flushes, before->flushes + 1);
  EXPECT_EQ(after->keys, kKeys / 2);
  EXPECT_LT(after->slabs, before->slabs) << "emptied chained slabs go back";
  std::vector<uint8_t> got(kKeys * 8), found(kKeys);
  ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), kKeys, nullptr).ok());
  oracle.ExpectGets(keys, got, found, "after flush");
  oracle.ExpectScan(*table, "after flush");
  // The compacted lists take inserts again (the prefix property holds).
  for (size_t i = 0; i < kKeys; ++i) FillValue(i + 99, &values[i * 8], 8);
  ASSERT_TRUE(table->Put(keys.data(), values.data(), kKeys, nullptr).ok());
  oracle.Put(keys, values);
  ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), kKeys, nullptr).ok());
  oracle.ExpectGets(keys, got, found, "after puts into flushed lists");
  auto last = table->Stats();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->keys, kKeys);
}

TEST(SlabHashGpu, ScanIntoDeviceGathersEveryLivePairOnce) {
  SKIP_WITHOUT_DEVICE();
  // Two-word keys and values of 12 bytes (two words a value in the arrays).
  constexpr uint32_t kKeySize = 16, kValueSize = 12, kValueWords = 2;
  auto table = MakeTable(kKeySize, kValueSize, 1000);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->cuda_device(), 0);
  Oracle oracle(kKeySize, kValueSize);
  constexpr size_t kKeys = 3000;
  std::vector<uint8_t> keys(kKeys * kKeySize), values(kKeys * kValueSize);
  for (size_t i = 0; i < kKeys; ++i) {
    UniverseKey(23, i, &keys[i * kKeySize], kKeySize);
    FillValue(i + 5, &values[i * kValueSize], kValueSize);
  }
  ASSERT_TRUE(table->Put(keys.data(), values.data(), kKeys, nullptr).ok());
  oracle.Put(keys, values);
  std::vector<uint8_t> erase_keys(keys.begin(), keys.begin() + 700 * kKeySize);
  std::vector<uint8_t> erased(700);
  ASSERT_TRUE(table->Erase(erase_keys.data(), erased.data(), erased.size(), nullptr).ok());
  oracle.Erase(erase_keys);
  // Too little room: the count, so that the caller can call again.
  auto small_keys = gpkv::gpu::DeviceBytes::Allocate(10 * kKeySize);
  auto small_values = gpkv::gpu::DeviceBytes::Allocate(10 * kValueWords * 8);
  ASSERT_TRUE(small_keys.ok() && small_values.ok());
  uint64_t pairs = 0;
  ASSERT_TRUE(table
                  ->ScanIntoDevice(reinterpret_cast<uint64_t*>(small_keys->data()),
                                   reinterpret_cast<uint64_t*>(small_values->data()), 10, &pairs)
                  .ok());
  EXPECT_EQ(pairs, oracle.size());
  auto device_keys = gpkv::gpu::DeviceBytes::Allocate(kKeys * kKeySize);
  auto device_values = gpkv::gpu::DeviceBytes::Allocate(kKeys * kValueWords * 8);
  ASSERT_TRUE(device_keys.ok() && device_values.ok());
  ASSERT_TRUE(table
                  ->ScanIntoDevice(reinterpret_cast<uint64_t*>(device_keys->data()),
                                   reinterpret_cast<uint64_t*>(device_values->data()), kKeys,
                                   &pairs)
                  .ok());
  ASSERT_EQ(pairs, oracle.size());
  std::vector<uint8_t> got_keys(pairs * kKeySize), got_values(pairs * kValueWords * 8);
  ASSERT_TRUE(device_keys->CopyToHost(got_keys.data(), got_keys.size()).ok());
  ASSERT_TRUE(device_values->CopyToHost(got_values.data(), got_values.size()).ok());
  std::unordered_map<std::string, int> seen;
  size_t wrong = 0;
  for (uint64_t i = 0; i < pairs; ++i) {
    const std::string key(reinterpret_cast<const char*>(&got_keys[i * kKeySize]), kKeySize);
    const std::string value(reinterpret_cast<const char*>(&got_values[i * kValueWords * 8]),
                            kValueSize);
    auto it = oracle.map().find(key);
    if (it == oracle.map().end() || it->second != value || ++seen[key] > 1) ++wrong;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(SlabHashGpu, ManyErasesAreFlushedByTheNextPut) {
  SKIP_WITHOUT_DEVICE();
  auto table = MakeTable(8, 128, 1 << 18);  // out-of-line values: their slabs go back too
  ASSERT_NE(table, nullptr);
  Oracle oracle(8, 128);
  constexpr size_t kKeys = 400000;
  std::vector<uint8_t> keys(kKeys * 8), values(kKeys * 128);
  for (size_t i = 0; i < kKeys; ++i) {
    UniverseKey(12, i, &keys[i * 8], 8);
    FillValue(i, &values[i * 128], 128);
  }
  ASSERT_TRUE(table->Put(keys.data(), values.data(), kKeys, nullptr).ok());
  oracle.Put(keys, values);
  auto full = table->Stats();
  ASSERT_TRUE(full.ok());
  std::vector<uint8_t> erase_keys(keys.begin(), keys.begin() + (kKeys * 3 / 4) * 8);
  std::vector<uint8_t> erased(kKeys * 3 / 4);
  ASSERT_TRUE(table->Erase(erase_keys.data(), erased.data(), erased.size(), nullptr).ok());
  EXPECT_EQ(erased, oracle.Erase(erase_keys));
  auto erased_stats = table->Stats();
  ASSERT_TRUE(erased_stats.ok());
  EXPECT_EQ(erased_stats->flushes, full->flushes) << "erases leave dead slots to the next put";
  EXPECT_EQ(erased_stats->dead_slots, kKeys * 3 / 4);
  // The next put flushes before it appends past the dead slots.
  std::vector<uint8_t> one_key(keys.end() - 8, keys.end());
  std::vector<uint8_t> one_value(values.end() - 128, values.end());
  ASSERT_TRUE(table->Put(one_key.data(), one_value.data(), 1, nullptr).ok());
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_GE(stats->flushes, 1u);
  EXPECT_EQ(stats->dead_slots, 0u);
  EXPECT_EQ(stats->keys, kKeys / 4);
  EXPECT_LT(stats->slabs, full->slabs - kKeys / 2) << "erased values' slabs are free";
  oracle.ExpectScan(*table, "after erasing three quarters");
}

// ---- device-memory batches

class SlabHashGpuDeviceBatches : public ::testing::TestWithParam<std::pair<uint32_t, uint32_t>> {};

TEST_P(SlabHashGpuDeviceBatches, AnswerAsHostBatchesDo) {
  SKIP_WITHOUT_DEVICE();
  const auto [key_size, value_size] = GetParam();
  auto table = MakeTable(key_size, value_size, 1 << 16);
  ASSERT_NE(table, nullptr);
  Oracle oracle(key_size, value_size);
  auto stream = gpkv::gpu::DeviceStream::Create();
  ASSERT_TRUE(stream.ok());
  std::mt19937_64 random(31);
  constexpr size_t kCount = 100000;
  for (const size_t offset : {size_t{0}, size_t{1}, size_t{3}}) {  // 1, 3: misaligned arrays
    const std::string what = "offset " + std::to_string(offset);
    std::vector<uint8_t> keys(kCount * key_size), values(kCount * value_size);
    for (size_t i = 0; i < kCount; ++i) {
      UniverseKey(13, random() % 150000, &keys[i * key_size], key_size);
      FillValue(random(), &values[i * value_size], value_size);
    }
    DeviceCopy device_keys = DeviceCopy::Of(keys, offset);
    DeviceCopy device_values = DeviceCopy::Of(values, offset);
    ASSERT_TRUE(table
                    ->Put(device_keys.bytes.data() + offset, device_values.bytes.data() + offset,
                          kCount, stream->get())
                    .ok());
    oracle.Put(keys, values);
    // Erase a third through device memory.
    std::vector<uint8_t> erase_keys(keys.begin(), keys.begin() + kCount / 3 * key_size);
    DeviceCopy device_erase = DeviceCopy::Of(erase_keys, offset);
    DeviceCopy device_erased = DeviceCopy::Of(std::vector<uint8_t>(kCount / 3), offset);
    ASSERT_TRUE(table
                    ->Erase(device_erase.bytes.data() + offset, device_erased.bytes.data() + offset,
                            kCount / 3, stream->get())
                    .ok());
    std::vector<uint8_t> erased(kCount / 3);
    ASSERT_TRUE(device_erased.bytes.CopyToHost(erased.data(), erased.size(), offset).ok());
    EXPECT_EQ(erased, oracle.Erase(erase_keys)) << what;
    // Gets into device memory, and the same through host memory.
    DeviceCopy device_got = DeviceCopy::Of(std::vector<uint8_t>(kCount * value_size), offset);
    DeviceCopy device_found = DeviceCopy::Of(std::vector<uint8_t>(kCount), offset);
    ASSERT_TRUE(table
                    ->Get(device_keys.bytes.data() + offset, device_got.bytes.data() + offset,
                          device_found.bytes.data() + offset, kCount, stream->get())
                    .ok());
    std::vector<uint8_t> got(kCount * value_size), found(kCount);
    ASSERT_TRUE(device_got.bytes.CopyToHost(got.data(), got.size(), offset).ok());
    ASSERT_TRUE(device_found.bytes.CopyToHost(found.data(), found.size(), offset).ok());
    oracle.ExpectGets(keys, got, found, what + " (device)");
    std::vector<uint8_t> host_got(kCount * value_size), host_found(kCount);
    ASSERT_TRUE(table->Get(keys.data(), host_got.data(), host_found.data(), kCount, nullptr).ok());
    EXPECT_EQ(host_got, got) << what;
    EXPECT_EQ(host_found, found) << what;
  }
  oracle.ExpectScan(*table, "device batches");
}

// Gets of several chunks of the host pipeline (backend_impl.h's
// kHostChunkOps, 2^17 operations) from pinned host memory (pipelined) and
// from pageable host memory (copied whole), aligned and not, with and without
// found flags, give the answers of the same gets from device memory; a third
// of the keys are absent. Run twice, so that the pipeline's lanes are
// workspaces used before.
TEST_P(SlabHashGpuDeviceBatches, HostGetsOfManyChunksAnswerAsDeviceGetsDo) {
  SKIP_WITHOUT_DEVICE();
  const auto [key_size, value_size] = GetParam();
  constexpr size_t kCount = 4 * (size_t{1} << 17) + 12345;
  auto table = MakeTable(key_size, value_size, kCount);
  ASSERT_NE(table, nullptr);
  std::vector<uint8_t> keys(kCount * key_size), values(kCount * value_size);
  for (size_t i = 0; i < kCount; ++i) {
    UniverseKey(17, i, &keys[i * key_size], key_size);
    FillValue(i, &values[i * value_size], value_size);
  }
  const size_t live = kCount / 3 * 2;
  ASSERT_TRUE(table->Put(keys.data(), values.data(), live, nullptr).ok());
  // Every key, reversed, so that the absent ones are spread over chunks.
  std::vector<uint8_t> probe(kCount * key_size);
  for (size_t i = 0; i < kCount; ++i) {
    std::memcpy(&probe[i * key_size], &keys[(kCount - 1 - i) * key_size], key_size);
  }
  DeviceCopy device_keys = DeviceCopy::Of(probe);
  DeviceCopy device_got = DeviceCopy::Of(std::vector<uint8_t>(kCount * value_size));
  DeviceCopy device_found = DeviceCopy::Of(std::vector<uint8_t>(kCount));
  ASSERT_TRUE(table
                  ->Get(device_keys.bytes.data(), device_got.bytes.data(),
                        device_found.bytes.data(), kCount, nullptr)
                  .ok());
  std::vector<uint8_t> want(kCount * value_size), want_found(kCount);
  ASSERT_TRUE(device_got.bytes.CopyToHost(want.data(), want.size()).ok());
  ASSERT_TRUE(device_found.bytes.CopyToHost(want_found.data(), want_found.size()).ok());
  EXPECT_EQ(std::count(want_found.begin(), want_found.end(), 1), static_cast<long>(live));
  for (const bool pinned : {false, true, true}) {
    for (const size_t offset : {size_t{0}, size_t{3}}) {
      const std::string what =
          std::string(pinned ? "pinned" : "pageable") + ", offset " + std::to_string(offset);
      const size_t bytes = offset + probe.size() + want.size() + want_found.size();
      std::vector<uint8_t> pageable;
      gpkv::gpu::PinnedBytes pinned_bytes;
      uint8_t* base = nullptr;
      if (pinned) {
        auto allocated = gpkv::gpu::PinnedBytes::Allocate(bytes);
        ASSERT_TRUE(allocated.ok()) << allocated.status().ToString();
        pinned_bytes = std::move(*allocated);
        base = pinned_bytes.data();
      } else {
        pageable.resize(bytes);
        base = pageable.data();
      }
      uint8_t* host_keys = base + offset;
      uint8_t* host_got = host_keys + probe.size();
      uint8_t* host_found = host_got + want.size();
      std::memcpy(host_keys, probe.data(), probe.size());
      std::memset(host_found, 7, kCount);
      ASSERT_TRUE(table->Get(host_keys, host_got, host_found, kCount, nullptr).ok()) << what;
      EXPECT_EQ(std::memcmp(host_got, want.data(), want.size()), 0) << what;
      EXPECT_EQ(std::memcmp(host_found, want_found.data(), kCount), 0) << what;
      std::memset(host_got, 0, want.size());
      ASSERT_TRUE(table->Get(host_keys, host_got, nullptr, kCount, nullptr).ok()) << what;
      EXPECT_EQ(std::memcmp(host_got, want.data(), want.size()), 0) << what << ", no flags";
    }
  }
}

// Small batches (up to kInPlaceMaxOps operations, and one past it) whose
// arrays lie in pinned or registered host memory, aligned and not: puts with
// repeated keys (the last put wins), erases with their flags (the first of a
// repeated key reports it) and gets with and without found flags give the
// oracle's answers, as the same batches from pageable memory do.
TEST_P(SlabHashGpuDeviceBatches, SmallBatchesOfPinnedOrRegisteredMemoryAnswerAsTheOracle) {
  SKIP_WITHOUT_DEVICE();
  const auto [key_size, value_size] = GetParam();
  auto table = MakeTable(key_size, value_size, 1 << 14);
  ASSERT_NE(table, nullptr);
  Oracle oracle(key_size, value_size);
  std::mt19937_64 random(77);
  enum class Memory { kPageable, kPinned, kRegistered };
  for (const size_t count : {size_t{1}, size_t{100}, size_t{4096}, size_t{8192}, size_t{8193}}) {
    for (const Memory memory : {Memory::kPinned, Memory::kRegistered, Memory::kPageable}) {
      for (const size_t offset : {size_t{0}, size_t{3}}) {
        const std::string what = std::to_string(count) + " ops, " +
                                 (memory == Memory::kPinned       ? "pinned"
                                  : memory == Memory::kRegistered ? "registered"
                                                                  : "pageable") +
                                 ", offset " + std::to_string(offset);
        std::vector<uint8_t> keys(count * key_size), values(count * value_size);
        for (size_t i = 0; i < count; ++i) {
          UniverseKey(19, random() % (count + count / 4 + 1), &keys[i * key_size], key_size);
          FillValue(random(), &values[i * value_size], value_size);
        }
        const size_t erases = count / 3;
        // One block: keys, values, erased flags, gotten values, found flags.
        const size_t values_at = offset + keys.size(), erased_at = values_at + values.size();
        const size_t got_at = erased_at + erases, found_at = got_at + values.size();
        const size_t bytes = found_at + count;
        std::vector<uint8_t> pageable;
        gpkv::gpu::PinnedBytes pinned;
        uint8_t* base = nullptr;
        if (memory == Memory::kPinned) {
          auto allocated = gpkv::gpu::PinnedBytes::Allocate(bytes);
          ASSERT_TRUE(allocated.ok()) << allocated.status().ToString();
          pinned = std::move(*allocated);
          base = pinned.data();
        } else {
          pageable.resize(bytes);
          base = pageable.data();
          if (memory == Memory::kRegistered) {
            ASSERT_TRUE(gpkv::gpu::RegisterHostMemory(base, bytes).ok()) << what;
          }
        }
        std::memcpy(base + offset, keys.data(), keys.size());
        std::memcpy(base + values_at, values.data(), values.size());
        ASSERT_TRUE(table->Put(base + offset, base + values_at, count, nullptr).ok()) << what;
        oracle.Put(keys, values);
        std::memset(base + erased_at, 7, erases);
        ASSERT_TRUE(table->Erase(base + offset, base + erased_at, erases, nullptr).ok()) << what;
        const std::vector<uint8_t> erase_keys(keys.begin(), keys.begin() + erases * key_size);
        const std::vector<uint8_t> want_erased = oracle.Erase(erase_keys);
        EXPECT_EQ(std::memcmp(base + erased_at, want_erased.data(), erases), 0) << what;
        std::memset(base + got_at, 7, values.size());
        std::memset(base + found_at, 7, count);
        ASSERT_TRUE(table->Get(base + offset, base + got_at, base + found_at, count, nullptr).ok())
            << what;
        const std::vector<uint8_t> got(base + got_at, base + got_at + values.size());
        const std::vector<uint8_t> found(base + found_at, base + found_at + count);
        oracle.ExpectGets(keys, got, found, what);
        std::memset(base + got_at, 7, values.size());
        ASSERT_TRUE(table->Get(base + offset, base + got_at, nullptr, count, nullptr).ok()) << what;
        EXPECT_EQ(std::memcmp(base + got_at, got.data(), got.size()), 0) << what << ", no flags";
        if (memory == Memory::kRegistered) {
          ASSERT_TRUE(gpkv::gpu::UnregisterHostMemory(base).ok()) << what;
        }
      }
    }
  }
  oracle.ExpectScan(*table, "small host batches");
}

INSTANTIATE_TEST_SUITE_P(Sizes, SlabHashGpuDeviceBatches,
                         ::testing::Values(std::make_pair(8u, 8u), std::make_pair(16u, 12u),
                                           std::make_pair(32u, 100u), std::make_pair(8u, 128u)));

// ---- Mixed

// Where a mixed batch's arrays lie: pageable host memory, device memory, or
// pinned host memory (batches small enough to be used in place, over the
// link).
enum class MixedArrays { kPageable, kDevice, kPinned };

struct MixedCase {
  const char* name;
  uint32_t key_size;
  uint32_t value_size;
  MixedArrays arrays;
};

class SlabHashGpuMixed : public ::testing::TestWithParam<MixedCase> {};

// Batches of distinct keys, so that each operation's answer is the oracle's
// before the batch whatever order the launch ran them in.
TEST_P(SlabHashGpuMixed, SearchesReplacesAndDeletesOfDistinctKeysMatchTheOracle) {
  SKIP_WITHOUT_DEVICE();
  const MixedCase& param = GetParam();
  const uint32_t key_size = param.key_size;
  const uint32_t value_size = param.value_size;
  auto table = MakeTable(key_size, value_size, 1 << 15);
  ASSERT_NE(table, nullptr);
  Oracle oracle(key_size, value_size);
  std::mt19937_64 random(55);
  constexpr size_t kUniverse = 300000;
  // Pinned batches are small enough to run in place (kInPlaceMaxOps).
  const size_t kBatch = param.arrays == MixedArrays::kPinned ? 8000 : 100000;
  std::vector<size_t> universe(kUniverse);
  std::iota(universe.begin(), universe.end(), 0);
  for (int round = 0; round < 8; ++round) {
    const std::string what = std::string(param.name) + " round " + std::to_string(round);
    std::shuffle(universe.begin(), universe.end(), random);
    std::vector<uint8_t> ops(kBatch), keys(kBatch * key_size), values(kBatch * value_size);
    for (size_t i = 0; i < kBatch; ++i) {
      const uint64_t pick = random() % 10;  // the mix, without the misses' split
      ops[i] = static_cast<uint8_t>(pick < 4   ? gpu::MixedOp::kSearch
                                    : pick < 8 ? gpu::MixedOp::kReplace
                                               : gpu::MixedOp::kDelete);
      UniverseKey(21, universe[i], &keys[i * key_size], key_size);
      FillValue(random(), &values[i * value_size], value_size);
    }
    std::vector<uint8_t> results(kBatch, 7);
    std::vector<uint8_t> in_values = values;
    if (param.arrays == MixedArrays::kDevice) {
      DeviceCopy device_ops = DeviceCopy::Of(ops);
      DeviceCopy device_keys = DeviceCopy::Of(keys);
      DeviceCopy device_values = DeviceCopy::Of(values);
      DeviceCopy device_results = DeviceCopy::Of(results);
      ASSERT_TRUE(table
                      ->Mixed(device_ops.bytes.data(), device_keys.bytes.data(),
                              device_values.bytes.data(), device_results.bytes.data(), kBatch,
                              nullptr)
                      .ok());
      ASSERT_TRUE(device_values.bytes.CopyToHost(values.data(), values.size()).ok());
      ASSERT_TRUE(device_results.bytes.CopyToHost(results.data(), results.size()).ok());
    } else if (param.arrays == MixedArrays::kPinned) {
      // One pinned block, the keys at an odd offset: misaligned in place.
      const size_t keys_at = ops.size() + 3, values_at = keys_at + keys.size();
      const size_t results_at = values_at + values.size();
      auto pinned = gpkv::gpu::PinnedBytes::Allocate(results_at + results.size());
      ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
      uint8_t* base = pinned->data();
      std::memcpy(base, ops.data(), ops.size());
      std::memcpy(base + keys_at, keys.data(), keys.size());
      std::memcpy(base + values_at, values.data(), values.size());
      std::memcpy(base + results_at, results.data(), results.size());
      ASSERT_TRUE(
          table->Mixed(base, base + keys_at, base + values_at, base + results_at, kBatch, nullptr)
              .ok());
      std::memcpy(values.data(), base + values_at, values.size());
      std::memcpy(results.data(), base + results_at, results.size());
    } else {
      ASSERT_TRUE(
          table->Mixed(ops.data(), keys.data(), values.data(), results.data(), kBatch, nullptr)
              .ok());
    }
    size_t wrong = 0;
    const std::string zeros(value_size, '\0');
    for (size_t i = 0; i < kBatch; ++i) {
      const std::string key = Bytes(&keys[i * key_size], key_size);
      auto it = oracle.map().find(key);
      const bool present = it != oracle.map().end();
      const gpu::MixedOp op = static_cast<gpu::MixedOp>(ops[i]);
      if (op == gpu::MixedOp::kSearch) {
        const std::string got = Bytes(&values[i * value_size], value_size);
        if (results[i] != (present ? 1 : 0) || got != (present ? it->second : zeros)) ++wrong;
      } else if (op == gpu::MixedOp::kReplace) {
        if (results[i] != 1) ++wrong;
      } else if (results[i] != (present ? 1 : 0)) {
        ++wrong;
      }
    }
    EXPECT_EQ(wrong, 0u) << what;
    // Apply the batch to the oracle.
    std::vector<uint8_t> put_keys, put_values, erase_keys;
    for (size_t i = 0; i < kBatch; ++i) {
      if (ops[i] == static_cast<uint8_t>(gpu::MixedOp::kReplace)) {
        put_keys.insert(put_keys.end(), &keys[i * key_size], &keys[(i + 1) * key_size]);
        put_values.insert(put_values.end(), &in_values[i * value_size],
                          &in_values[(i + 1) * value_size]);
      } else if (ops[i] == static_cast<uint8_t>(gpu::MixedOp::kDelete)) {
        erase_keys.insert(erase_keys.end(), &keys[i * key_size], &keys[(i + 1) * key_size]);
      }
    }
    oracle.Put(put_keys, put_values);
    oracle.Erase(erase_keys);
    auto stats = table->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->keys, oracle.size()) << what;
  }
  oracle.ExpectScan(*table, param.name);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, SlabHashGpuMixed,
    ::testing::Values(MixedCase{"k8v8", 8, 8, MixedArrays::kPageable},
                      MixedCase{"k8v8_device", 8, 8, MixedArrays::kDevice},
                      MixedCase{"k8v8_pinned", 8, 8, MixedArrays::kPinned},
                      MixedCase{"k16v24_locked", 16, 24, MixedArrays::kPageable},
                      MixedCase{"k16v24_locked_pinned", 16, 24, MixedArrays::kPinned},
                      MixedCase{"k32v8_device", 32, 8, MixedArrays::kDevice},
                      MixedCase{"k8v128_out_of_line", 8, 128, MixedArrays::kPageable},
                      MixedCase{"k32v100_out_of_line", 32, 100, MixedArrays::kDevice},
                      MixedCase{"k32v100_out_of_line_pinned", 32, 100, MixedArrays::kPinned}),
    [](const ::testing::TestParamInfo<MixedCase>& info) { return std::string(info.param.name); });

// Operations on one key in one mixed batch take effect in some serial order:
// the key ends with one of the values its replaces wrote.
TEST(SlabHashGpu, MixedRepeatsOfAKeyEndWithOneOfTheirValues) {
  SKIP_WITHOUT_DEVICE();
  for (const uint32_t value_size : {8u, 24u, 128u}) {
    auto table = MakeTable(8, value_size, 1 << 12);
    ASSERT_NE(table, nullptr);
    constexpr size_t kKeys = 4000;
    constexpr size_t kCopies = 4;
    std::vector<uint8_t> ops(kKeys * kCopies, static_cast<uint8_t>(gpu::MixedOp::kReplace));
    std::vector<uint8_t> keys(kKeys * kCopies * 8), values(kKeys * kCopies * value_size);
    std::vector<uint8_t> results(kKeys * kCopies);
    for (size_t i = 0; i < kKeys * kCopies; ++i) {
      UniverseKey(41, i % kKeys, &keys[i * 8], 8);
      FillValue(i, &values[i * value_size], value_size);
      if (i / kKeys == kCopies - 1) ops[i] = static_cast<uint8_t>(gpu::MixedOp::kSearch);  // copy 4
    }
    const std::vector<uint8_t> written = values;
    ASSERT_TRUE(
        table->Mixed(ops.data(), keys.data(), values.data(), results.data(), ops.size(), nullptr)
            .ok());
    std::vector<uint8_t> got(kKeys * value_size), found(kKeys);
    ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), kKeys, nullptr).ok());
    size_t wrong = 0;
    for (size_t k = 0; k < kKeys; ++k) {
      bool one_of_them = false;
      for (size_t i = k; i < kKeys * kCopies; i += kKeys) {
        if (ops[i] == static_cast<uint8_t>(gpu::MixedOp::kReplace) &&
            std::memcmp(&got[k * value_size], &written[i * value_size], value_size) == 0) {
          one_of_them = true;
        }
      }
      if (found[k] != 1 || !one_of_them) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << value_size;
    auto stats = table->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->keys, kKeys) << "a key inserted twice";
  }
}

// The batch tags (11 bits) start over after 2047 write batches: the table
// clears every slab's tag first, and duplicates are still resolved.
TEST(SlabHashGpu, BatchTagsStartOverAndDuplicatesStayResolved) {
  SKIP_WITHOUT_DEVICE();
  auto table = MakeTable(8, 8, 1 << 10);
  ASSERT_NE(table, nullptr);
  Oracle oracle(8, 8);
  std::mt19937_64 random(61);
  constexpr size_t kBatch = 16;
  for (uint32_t batch = 0; batch < kTagCount + 100; ++batch) {
    std::vector<uint8_t> keys(kBatch * 8), values(kBatch * 8);
    for (size_t i = 0; i < kBatch; ++i) {
      // Keys from a small universe, so that batches repeat keys and later
      // batches meet the slabs (and tags) of earlier ones.
      UniverseKey(43, i < 2 ? 7 : random() % 3000, &keys[i * 8], 8);
      FillValue(random(), &values[i * 8], 8);
    }
    if (batch % 5 == 4) {
      std::vector<uint8_t> erased(kBatch);
      ASSERT_TRUE(table->Erase(keys.data(), erased.data(), kBatch, nullptr).ok());
      ASSERT_EQ(erased, oracle.Erase(keys)) << batch;
    } else {
      ASSERT_TRUE(table->Put(keys.data(), values.data(), kBatch, nullptr).ok());
      oracle.Put(keys, values);
    }
  }
  oracle.ExpectScan(*table, "after the tags started over");
}

// ---- keys of every value

TEST(SlabHashGpu, EveryKeyValueIsLegalZerosAndOnesIncluded) {
  SKIP_WITHOUT_DEVICE();
  for (uint32_t key_size : {8u, 16u, 32u}) {
    auto table = MakeTable(key_size, 8, 16);
    ASSERT_NE(table, nullptr);
    std::vector<uint8_t> keys(4 * key_size, 0);
    std::fill(keys.begin() + key_size, keys.begin() + 2 * key_size, 0xff);
    keys[2 * key_size] = 1;         // 1, 0, 0, ...
    keys[4 * key_size - 1] = 0x80;  // ..., 0, 0x80
    std::vector<uint8_t> values = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
                                   3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_TRUE(table->Put(keys.data(), values.data(), 4, nullptr).ok());
    std::vector<uint8_t> got(32), found(4);
    ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), 4, nullptr).ok());
    EXPECT_EQ(found, std::vector<uint8_t>(4, 1)) << key_size;
    EXPECT_EQ(got, values) << key_size;
    std::vector<uint8_t> erased(4);
    ASSERT_TRUE(table->Erase(keys.data(), erased.data(), 2, nullptr).ok());
    ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), 4, nullptr).ok());
    EXPECT_EQ(found, (std::vector<uint8_t>{0, 0, 1, 1})) << key_size;
  }
}

// ---- full device memory

TEST(SlabHashGpu, FullDeviceMemoryFailsABatchAndKeepsTheTable) {
  SKIP_WITHOUT_DEVICE();
  auto table = MakeTable(8, 8, 1 << 20);
  ASSERT_NE(table, nullptr);
  constexpr size_t kBatch = 1 << 20;
  std::vector<uint8_t> keys(kBatch * 8), values(kBatch * 8);
  uint64_t next_key = 0;
  auto fill_batch = [&]() {
    for (size_t i = 0; i < kBatch; ++i) {
      UniverseKey(17, next_key + i, &keys[i * 8], 8);
      FillValue(next_key + i, &values[i * 8], 8);
    }
    next_key += kBatch;
  };
  fill_batch();
  ASSERT_TRUE(table->Put(keys.data(), values.data(), kBatch, nullptr).ok());
  // Take the device's memory: whole GiBs, then smaller pieces.
  std::vector<gpkv::gpu::DeviceBytes> hog;
  for (size_t piece : {size_t{1} << 30, size_t{1} << 26, size_t{1} << 22}) {
    while (true) {
      auto taken = gpkv::gpu::DeviceBytes::Allocate(piece);
      if (!taken.ok()) break;
      hog.push_back(std::move(taken.value()));
    }
  }
  // Puts until one fails: with an error, not a crash.
  uint64_t acknowledged = next_key;
  Status failure;
  for (int batch = 0; batch < 64 && failure.ok(); ++batch) {
    fill_batch();
    failure = table->Put(keys.data(), values.data(), kBatch, nullptr);
    if (failure.ok()) acknowledged = next_key;
  }
  ASSERT_FALSE(failure.ok()) << "64 batches of 2^20 keys fit in a full device";
  EXPECT_EQ(failure.code(), Code::kOutOfDeviceMemory) << failure.ToString();
  hog.clear();
  // Every acknowledged key is there; of the failed batch, each key whole or absent.
  std::vector<uint8_t> got(kBatch * 8), found(kBatch), expected(kBatch * 8);
  uint64_t present = 0;
  for (uint64_t first = 0; first < next_key; first += kBatch) {
    for (size_t i = 0; i < kBatch; ++i) {
      UniverseKey(17, first + i, &keys[i * 8], 8);
      FillValue(first + i, &expected[i * 8], 8);
    }
    ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), kBatch, nullptr).ok());
    for (size_t i = 0; i < kBatch; ++i) {
      if (found[i] == 0) {
        EXPECT_GE(first + i, acknowledged) << "an acknowledged key is gone";
        continue;
      }
      ++present;
      EXPECT_EQ(std::memcmp(&got[i * 8], &expected[i * 8], 8), 0) << first + i;
    }
  }
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, present);
  // With memory back, the table takes the batch.
  next_key -= kBatch;
  fill_batch();
  ASSERT_TRUE(table->Put(keys.data(), values.data(), kBatch, nullptr).ok());
  ASSERT_TRUE(table->Get(keys.data(), got.data(), found.data(), kBatch, nullptr).ok());
  EXPECT_EQ(std::count(found.begin(), found.end(), 1), static_cast<long>(kBatch));
}

TEST(SlabHashGpu, RejectsSizesOutsideTheLimits) {
  SKIP_WITHOUT_DEVICE();
  TableOptions options;
  options.key_size = 12;
  EXPECT_TRUE(gpu::GpuBackend::Create(options).status().IsInvalidArgument());
  options.key_size = 8;
  options.value_size = 129;
  EXPECT_TRUE(gpu::GpuBackend::Create(options).status().IsInvalidArgument());
}

}  // namespace
}  // namespace gpkv::slab_hash::gpu_test
