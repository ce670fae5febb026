// Logged hash tables (TableOptions::hash_log) on the CUDA backend: the index
// is the GPU slab hash, write batches come from host memory. The
// unordered_map oracle through checkpoints and reopens on either backend; the
// same batches on the CPU and CUDA backends leave the same bytes in root, log
// and image (the CUDA backend's images sorted and checksummed on the
// device), whether the CUDA backend's puts and erases come from host or
// from device memory (their records then written from the device) or from
// host memory copied to device memory first, and whether mixed batches
// come from host or from device memory; gets take device memory; device
// batches given a stream start after the work on it;
// batches whose arrays lie partly in host and partly in device memory are
// Unsupported; a device batch whose record copy or Sync fails leaves the
// table refusing reads and writes until a reopen, which keeps every
// acknowledged batch.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "format/pool_layout.h"
#include "gphash/logged_table_bytes.h"
#include "gpkv/db.h"
#include "gpu_test_util.h"
#include "pm/persist_hook.h"
#include "recovery/verify.h"
#include "tables/gphash/logged/core.h"
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
    bytes[side] = testutil::LoggedTableBytes(pool.path());
  }
  ASSERT_EQ(bytes[0].size(), bytes[1].size());
  EXPECT_TRUE(bytes[0] == bytes[1]) << "the CPU and CUDA backends wrote different table bytes";
}

TEST(GphashLoggedGpu, BothBackendsWriteTheSameBytesThroughPendingCheckpoints) {
  // M = 16 (halves of 20 KiB, a checkpoint published from the 12th batch of
  // its half on), batches of 1..60 keys: several checkpoints start and stay
  // pending across batches, published whenever their image is written
  // (the worker's pace differs between the backends), at a half's end or
  // at the close; the bytes after the close are the same.
  SKIP_WITHOUT_DEVICE();
  std::mt19937_64 random(9);
  std::vector<Batch> batches(240);
  for (size_t b = 0; b < batches.size(); ++b) {
    batches[b].erase = b % 5 == 4;
    const size_t n = 1 + random() % 60;
    for (size_t i = 0; i < n; ++i) {
      batches[b].keys.push_back(random() % 3000);
      batches[b].values.push_back(random());
    }
  }
  TableOptions options = LoggedOptions();
  options.hash_log.log_batches = 16;
  std::vector<uint8_t> bytes[2];
  for (int side = 0; side < 2; ++side) {
    testutil::TempPool pool(side == 0 ? "gphash-logged-pending-cpu" : "gphash-logged-pending-gpu");
    {
      auto db = DB::Open(pool.path(), PoolOptions(side == 0 ? Backend::kCpu : Backend::kCuda));
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      auto table = (*db)->CreateTable("h", options);
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      Oracle oracle;
      for (const Batch& batch : batches) RunBatch(**table, batch, oracle);
      auto stats = (*table)->Stats();
      ASSERT_TRUE(stats.ok());
      EXPECT_GE(
          *stats->Property("gphash.checkpoints") + *stats->Property("gphash.checkpoint-pending"),
          4);
      ExpectMatches(**table, oracle);
    }
    bytes[side] = testutil::LoggedTableBytes(pool.path());
  }
  ASSERT_EQ(bytes[0].size(), bytes[1].size());
  EXPECT_TRUE(bytes[0] == bytes[1]) << "the CPU and CUDA backends wrote different table bytes";
}

// Batches in the bytes of a table of key_size / value_size: key k is the
// word k then words of k's pattern, values random bytes. Some erase batches
// ask no erased flags; some batches are larger than the whole log.
struct ShapedBatch {
  bool erase = false;
  bool flags = true;
  uint64_t count = 0;
  std::vector<uint8_t> keys, values;
};
struct Shape {
  uint32_t key_size;
  uint32_t value_size;
};
std::vector<ShapedBatch> ShapedWorkload(const Shape& shape, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<ShapedBatch> batches(48);
  for (size_t b = 0; b < batches.size(); ++b) {
    ShapedBatch& batch = batches[b];
    batch.erase = b % 4 == 3;
    batch.flags = b % 8 != 7;
    batch.count = b % 9 == 0 ? 1500 : 1 + random() % 200;
    for (uint64_t i = 0; i < batch.count; ++i) {
      const uint64_t key = random() % 3000;
      for (uint32_t word = 0; word < shape.key_size / 8; ++word) {
        const uint64_t bytes = word == 0 ? key : key * 0x9e3779b97f4a7c15ULL + word;
        const uint8_t* from = reinterpret_cast<const uint8_t*>(&bytes);
        batch.keys.insert(batch.keys.end(), from, from + 8);
      }
      if (!batch.erase) {
        for (uint32_t at = 0; at < shape.value_size; ++at) {
          batch.values.push_back(static_cast<uint8_t>(random()));
        }
      }
    }
  }
  return batches;
}

using ShapedOracle = std::map<std::string, std::string>;

// Device memory holding a copy of `bytes` (or `bytes` zeroes when from is
// null) once constructed; freed at scope exit.
class DeviceArray {
 public:
  DeviceArray(const void* from, size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(cudaMalloc(&data_, std::max<size_t>(bytes, 1)), cudaSuccess);
    if (from != nullptr) {
      EXPECT_EQ(cudaMemcpy(data_, from, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    } else {
      EXPECT_EQ(cudaMemset(data_, 0, std::max<size_t>(bytes, 1)), cudaSuccess);
    }
    // cudaMemset returns before the device has run it, and cudaMemcpy from
    // pageable memory may return before its last DMA: the batches take no
    // stream (they order after nothing of the caller's), so the array must
    // be complete before they start. Without this wait, a zeroing of erased
    // flags still queued when the erase's kernels ran could clear the flag
    // of a key it erased: a live key reported absent.
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }
  std::vector<uint8_t> Read() const {
    std::vector<uint8_t> out(bytes_);
    EXPECT_EQ(cudaMemcpy(out.data(), data_, bytes_, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  void* data_ = nullptr;
  size_t bytes_;
};

// Runs `batch` on `table` from host memory or, with `device`, from device
// memory, and checks the erased flags against the oracle.
void RunShapedBatch(Table& table, const Shape& shape, const ShapedBatch& batch, bool device,
                    ShapedOracle& oracle) {
  const size_t key_bytes = batch.count * shape.key_size;
  auto key_at = [&](uint64_t i) {
    return std::string(reinterpret_cast<const char*>(batch.keys.data()) + i * shape.key_size,
                       shape.key_size);
  };
  if (batch.erase) {
    std::vector<uint8_t> erased(batch.count);
    if (device) {
      DeviceArray keys(batch.keys.data(), key_bytes);
      DeviceArray flags(nullptr, batch.count);
      Status status =
          table.Erase(ConstBytes(keys.data(), key_bytes),
                      batch.flags ? MutableBytes(flags.data(), batch.count) : MutableBytes());
      ASSERT_TRUE(status.ok()) << status.ToString();
      erased = flags.Read();
    } else {
      Status status =
          table.Erase(ConstBytes(batch.keys.data(), key_bytes),
                      batch.flags ? MutableBytes(erased.data(), batch.count) : MutableBytes());
      ASSERT_TRUE(status.ok()) << status.ToString();
    }
    for (uint64_t i = 0; i < batch.count; ++i) {
      const size_t was_live = oracle.erase(key_at(i));
      if (batch.flags) ASSERT_EQ(erased[i], was_live) << i;
    }
    return;
  }
  const size_t value_bytes = batch.count * shape.value_size;
  if (device) {
    DeviceArray keys(batch.keys.data(), key_bytes);
    DeviceArray values(batch.values.data(), value_bytes);
    Status status =
        table.Put(ConstBytes(keys.data(), key_bytes), ConstBytes(values.data(), value_bytes));
    ASSERT_TRUE(status.ok()) << status.ToString();
  } else {
    Status status = table.Put(ConstBytes(batch.keys.data(), key_bytes),
                              ConstBytes(batch.values.data(), value_bytes));
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  for (uint64_t i = 0; i < batch.count; ++i) {
    oracle[key_at(i)] =
        std::string(reinterpret_cast<const char*>(batch.values.data()) + i * shape.value_size,
                    shape.value_size);
  }
}

// Every pair of the table (its scan) equals the oracle.
void ExpectShapedMatches(Table& table, const ShapedOracle& oracle) {
  ShapedOracle scanned;
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  const size_t key_size = oracle.empty() ? 0 : oracle.begin()->first.size();
  const size_t value_size = oracle.empty() ? 0 : oracle.begin()->second.size();
  ASSERT_TRUE(table
                  .Scan([&](const uint8_t* key, const uint8_t* value) {
                    scanned[std::string(reinterpret_cast<const char*>(key), key_size)] =
                        std::string(reinterpret_cast<const char*>(value), value_size);
                    return true;
                  })
                  .ok());
  EXPECT_EQ(stats->keys, oracle.size());
  EXPECT_TRUE(scanned == oracle) << "the table's pairs differ from the oracle's";
}

class GphashLoggedDeviceBatches : public ::testing::TestWithParam<Shape> {};

// The pool's registration reported done, which the first record from
// device memory waited for (polled for up to a minute, in case the table
// took none), and no record copied through pageable memory: a pool on
// /dev/shm registers.
void ExpectRegistrationDone(Table& table) {
  auto stats = table.Stats();
  ASSERT_TRUE(stats.ok());
  for (int wait = 0; wait < 600 && *stats->Property("gphash.registration-ns") == 0; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stats = table.Stats();
    ASSERT_TRUE(stats.ok());
  }
  EXPECT_GT(*stats->Property("gphash.registration-ns"), 0);
  EXPECT_EQ(*stats->Property("gphash.pageable-records"), 0);
}

// The same put and erase batches: from host memory on the CPU backend, from
// device memory on the CUDA backend (records checksummed on the device and
// copied from there, batches larger than the log checkpointed), and from host
// memory on the CUDA backend copied to device memory and written from there
// (HashGpuOptions::logged_device_copy_min_ops 1), leave the same bytes in
// root, log and image; the tables written on CUDA then reopen on the CPU with
// every pair, and verify clean.
TEST_P(GphashLoggedDeviceBatches, WriteTheBytesOfHostBatchesOnTheCpu) {
  SKIP_WITHOUT_DEVICE();
  const Shape shape = GetParam();
  const std::vector<ShapedBatch> batches = ShapedWorkload(shape, 6);
  TableOptions options = LoggedOptions();
  options.key_size = shape.key_size;
  options.value_size = shape.value_size;
  enum Side { kCpu, kDeviceArrays, kHostArraysCopied, kSides };
  const char* const names[kSides] = {"host batches on the CPU", "device batches on CUDA",
                                     "host batches copied to the device on CUDA"};
  std::vector<uint8_t> bytes[kSides];
  for (int side = kCpu; side < kSides; ++side) {
    SCOPED_TRACE(names[side]);
    const bool cuda = side != kCpu;
    testutil::TempPool pool(cuda ? "gphash-logged-dev-gpu" : "gphash-logged-dev-cpu");
    ShapedOracle oracle;
    {
      Options db_options = PoolOptions(cuda ? Backend::kCuda : Backend::kCpu);
      if (side == kHostArraysCopied) db_options.hash_gpu.logged_device_copy_min_ops = 1;
      auto db = DB::Open(pool.path(), db_options);
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      auto table = (*db)->CreateTable("h", options);
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      for (const ShapedBatch& batch : batches) {
        RunShapedBatch(**table, shape, batch, side == kDeviceArrays, oracle);
        if (HasFatalFailure()) return;
      }
      ExpectShapedMatches(**table, oracle);
      auto stats = (*table)->Stats();
      ASSERT_TRUE(stats.ok());
      EXPECT_GE(*stats->Property("gphash.checkpoints"), 2);
      if (cuda) ExpectRegistrationDone(**table);
    }
    bytes[side] = testutil::LoggedTableBytes(pool.path());
    if (cuda) {
      auto db = DB::Open(pool.path(), PoolOptions(Backend::kCpu));
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      auto table = (*db)->OpenTable("h");
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      ExpectShapedMatches(**table, oracle);
    }
    auto report = recovery::VerifyPool(pool.path(), nullptr);
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
  }
  for (int side = kDeviceArrays; side < kSides; ++side) {
    ASSERT_EQ(bytes[kCpu].size(), bytes[side].size()) << names[side];
    EXPECT_TRUE(bytes[kCpu] == bytes[side])
        << names[side] << " wrote other bytes than " << names[kCpu];
  }
}

// Mixed batches (Table::Write) in the bytes of a table of key_size /
// value_size: random puts and erases of keys of ShapedWorkload's pattern,
// many keys more than once in a batch; some ask no erased flags; some are
// larger than the whole log.
struct MixedBatch {
  bool flags = true;
  uint64_t count = 0;
  std::vector<uint8_t> keys, values, ops;
};
std::vector<MixedBatch> MixedWorkload(const Shape& shape, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<MixedBatch> batches(40);
  for (size_t b = 0; b < batches.size(); ++b) {
    MixedBatch& batch = batches[b];
    batch.flags = b % 8 != 7;
    batch.count = b % 9 == 0 ? 1500 : 1 + random() % 200;
    const uint64_t key_range = b % 2 == 0 ? 3000 : 100;  // duplicates in a batch
    for (uint64_t i = 0; i < batch.count; ++i) {
      const uint64_t key = random() % key_range;
      for (uint32_t word = 0; word < shape.key_size / 8; ++word) {
        const uint64_t bytes = word == 0 ? key : key * 0x9e3779b97f4a7c15ULL + word;
        const uint8_t* from = reinterpret_cast<const uint8_t*>(&bytes);
        batch.keys.insert(batch.keys.end(), from, from + 8);
      }
      for (uint32_t at = 0; at < shape.value_size; ++at) {
        batch.values.push_back(static_cast<uint8_t>(random()));
      }
      batch.ops.push_back(
          static_cast<uint8_t>(random() % 3 == 0 ? Table::WriteOp::kErase : Table::WriteOp::kPut));
    }
  }
  return batches;
}

// Runs `batch` on `table` with keys, values and erased flags in host memory
// or, with `device`, in device memory (the operation codes in host memory),
// and checks the erased flags against the oracle, in batch order.
void RunMixedBatch(Table& table, const Shape& shape, const MixedBatch& batch, bool device,
                   ShapedOracle& oracle) {
  const size_t key_bytes = batch.count * shape.key_size;
  const size_t value_bytes = batch.count * shape.value_size;
  const ConstBytes ops(batch.ops.data(), batch.count);
  std::vector<uint8_t> erased(batch.count);
  if (device) {
    DeviceArray keys(batch.keys.data(), key_bytes);
    DeviceArray values(batch.values.data(), value_bytes);
    DeviceArray flags(nullptr, batch.count);
    Status status =
        table.Write(ConstBytes(keys.data(), key_bytes), ConstBytes(values.data(), value_bytes), ops,
                    batch.flags ? MutableBytes(flags.data(), batch.count) : MutableBytes());
    ASSERT_TRUE(status.ok()) << status.ToString();
    erased = flags.Read();
  } else {
    Status status = table.Write(
        ConstBytes(batch.keys.data(), key_bytes), ConstBytes(batch.values.data(), value_bytes), ops,
        batch.flags ? MutableBytes(erased.data(), batch.count) : MutableBytes());
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  for (uint64_t i = 0; i < batch.count; ++i) {
    const std::string key(reinterpret_cast<const char*>(batch.keys.data()) + i * shape.key_size,
                          shape.key_size);
    if (batch.ops[i] == static_cast<uint8_t>(Table::WriteOp::kErase)) {
      const size_t was_live = oracle.erase(key);
      if (batch.flags) ASSERT_EQ(erased[i], was_live) << i;
    } else {
      oracle[key] =
          std::string(reinterpret_cast<const char*>(batch.values.data()) + i * shape.value_size,
                      shape.value_size);
    }
  }
}

// The same mixed batches from host memory on the CPU backend and from
// device memory on the CUDA backend give the same erased flags and leave the
// same bytes in root, log and image (duplicate keys, probes of keys live
// before the batch, batches larger than the log); the table written from
// device memory verifies clean.
TEST_P(GphashLoggedDeviceBatches, MixedBatchesWriteTheBytesOfHostMixedBatches) {
  SKIP_WITHOUT_DEVICE();
  const Shape shape = GetParam();
  const std::vector<MixedBatch> batches = MixedWorkload(shape, 8);
  TableOptions options = LoggedOptions();
  options.key_size = shape.key_size;
  options.value_size = shape.value_size;
  std::vector<uint8_t> bytes[2];
  for (int side = 0; side < 2; ++side) {
    const bool device = side == 1;
    testutil::TempPool pool(device ? "gphash-logged-mixed-gpu" : "gphash-logged-mixed-cpu");
    ShapedOracle oracle;
    {
      auto db = DB::Open(pool.path(), PoolOptions(device ? Backend::kCuda : Backend::kCpu));
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      auto table = (*db)->CreateTable("h", options);
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      for (const MixedBatch& batch : batches) {
        RunMixedBatch(**table, shape, batch, device, oracle);
        if (HasFatalFailure()) return;
      }
      ExpectShapedMatches(**table, oracle);
      auto stats = (*table)->Stats();
      ASSERT_TRUE(stats.ok());
      EXPECT_GE(*stats->Property("gphash.checkpoints"), 2);
      if (device) ExpectRegistrationDone(**table);
    }
    bytes[side] = testutil::LoggedTableBytes(pool.path());
    auto report = recovery::VerifyPool(pool.path(), nullptr);
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
  }
  ASSERT_EQ(bytes[0].size(), bytes[1].size());
  EXPECT_TRUE(bytes[0] == bytes[1])
      << "mixed batches from device memory wrote other bytes than from host memory";
}

INSTANTIATE_TEST_SUITE_P(Shapes, GphashLoggedDeviceBatches,
                         ::testing::Values(Shape{8, 8}, Shape{16, 3}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return "K" + std::to_string(info.param.key_size) + "V" +
                                  std::to_string(info.param.value_size);
                         });

// Host and device batches interleaved on one CUDA table, through reopens:
// the oracle holds.
TEST(GphashLoggedGpu, HostAndDeviceBatchesInterleave) {
  SKIP_WITHOUT_DEVICE();
  const Shape shape{8, 8};
  const std::vector<ShapedBatch> batches = ShapedWorkload(shape, 7);
  testutil::TempPool pool("gphash-logged-interleave");
  ShapedOracle oracle;
  for (int round = 0; round < 3; ++round) {
    auto db = DB::Open(pool.path(), PoolOptions(Backend::kCuda));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = round == 0 ? (*db)->CreateTable("h", LoggedOptions()) : (*db)->OpenTable("h");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    if (!oracle.empty()) ExpectShapedMatches(**table, oracle);
    for (size_t b = round * 16; b < (round + 1) * 16u; ++b) {
      RunShapedBatch(**table, shape, batches[b], /*device=*/b % 3 != 0, oracle);
      if (HasFatalFailure()) return;
    }
    ExpectShapedMatches(**table, oracle);
  }
}

// What fails in ExpectFailedBatchBreaksTheTable: a device batch's record
// copy or pool Sync, or the pool Sync of a host batch whose record was
// written while its index apply ran.
enum class BatchFailure { kDeviceCopy, kDeviceSync, kHostSync };

// A put batch whose record copy or pool Sync fails after its index apply
// ran beside the record: the call fails, gets (host and device memory),
// scans and writes are refused, and a reopen holds every acknowledged batch
// (and not the batch whose copy failed: its record was never published).
void ExpectFailedBatchBreaksTheTable(BatchFailure failure) {
  const bool copy_fails = failure == BatchFailure::kDeviceCopy;
  const bool host = failure == BatchFailure::kHostSync;
  testutil::TempPool pool(copy_fails ? "gphash-logged-copy-fails"
                          : host     ? "gphash-logged-host-sync-fails"
                                     : "gphash-logged-sync-fails");
  std::vector<uint64_t> keys(100), values(100), failed_keys(20), failed_values(20);
  for (uint64_t i = 0; i < keys.size(); ++i) {
    keys[i] = i + 1;
    values[i] = i + 1000;
  }
  for (uint64_t i = 0; i < failed_keys.size(); ++i) {
    failed_keys[i] = i + 5000;
    failed_values[i] = i + 6000;
  }
  const size_t half = keys.size() / 2;
  {
    auto db = DB::Open(pool.path(), PoolOptions(Backend::kCuda));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->CreateTable("h", LoggedOptions());
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    DeviceArray device_keys(keys.data(), keys.size() * 8);
    DeviceArray device_values(values.data(), values.size() * 8);
    for (size_t first : {size_t{0}, half}) {
      const uint8_t* put_keys =
          host ? reinterpret_cast<const uint8_t*>(keys.data()) : device_keys.data();
      const uint8_t* put_values =
          host ? reinterpret_cast<const uint8_t*>(values.data()) : device_values.data();
      Status put = (*table)->Put(ConstBytes(put_keys + first * 8, half * 8),
                                 ConstBytes(put_values + first * 8, half * 8));
      ASSERT_TRUE(put.ok()) << put.ToString();
    }
    DeviceArray device_failed_keys(failed_keys.data(), failed_keys.size() * 8);
    DeviceArray device_failed_values(failed_values.data(), failed_values.size() * 8);
    if (copy_fails) {
      logged::TEST_FailNextDeviceRecords(1);
    } else {
      pm::TEST_FailNextSyncs(1);
    }
    const Status failed =
        host ? (*table)->Put(failed_keys, failed_values)
             : (*table)->Put(ConstBytes(device_failed_keys.data(), failed_keys.size() * 8),
                             ConstBytes(device_failed_values.data(), failed_values.size() * 8));
    logged::TEST_FailNextDeviceRecords(0);
    pm::TEST_FailNextSyncs(0);
    EXPECT_TRUE(failed.IsIOError()) << failed.ToString();
    std::vector<uint64_t> got(keys.size());
    std::vector<uint8_t> found(keys.size());
    const Status get = (*table)->Get(keys, got, found);
    EXPECT_TRUE(get.IsIOError()) << get.ToString();
    DeviceArray device_got(nullptr, keys.size() * 8), device_found(nullptr, keys.size());
    EXPECT_FALSE((*table)
                     ->Get(ConstBytes(device_keys.data(), keys.size() * 8),
                           MutableBytes(device_got.data(), keys.size() * 8),
                           MutableBytes(device_found.data(), keys.size()))
                     .ok());
    EXPECT_FALSE((*table)->Scan([](const uint8_t*, const uint8_t*) { return true; }).ok());
    EXPECT_FALSE((*table)->Put(keys, values).ok());
    EXPECT_FALSE((*table)
                     ->Put(ConstBytes(device_keys.data(), keys.size() * 8),
                           ConstBytes(device_values.data(), values.size() * 8))
                     .ok());
  }
  {
    auto db = DB::Open(pool.path(), PoolOptions(Backend::kCuda));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->OpenTable("h");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    std::vector<uint64_t> got(keys.size());
    std::vector<uint8_t> found(keys.size());
    ASSERT_TRUE((*table)->Get(keys, got, found).ok());
    EXPECT_EQ(found, std::vector<uint8_t>(keys.size(), 1));
    EXPECT_EQ(got, values);
    if (copy_fails) {
      got.assign(failed_keys.size(), 0);
      found.assign(failed_keys.size(), 0);
      ASSERT_TRUE((*table)->Get(failed_keys, got, found).ok());
      EXPECT_EQ(found, std::vector<uint8_t>(failed_keys.size(), 0));
    }
  }
  // Closed first: verify opens the pool itself, and the pool lock admits one
  // writer.
  auto report = recovery::VerifyPool(pool.path(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
}

TEST(GphashLoggedGpu, ADeviceBatchWhoseCopyFailsBreaksReadsAndWritesUntilReopened) {
  SKIP_WITHOUT_DEVICE();
  ExpectFailedBatchBreaksTheTable(BatchFailure::kDeviceCopy);
}

TEST(GphashLoggedGpu, ADeviceBatchWhoseSyncFailsBreaksReadsAndWritesUntilReopened) {
  SKIP_WITHOUT_DEVICE();
  ExpectFailedBatchBreaksTheTable(BatchFailure::kDeviceSync);
}

// A small host put batch's record is written while the index applies it.
TEST(GphashLoggedGpu, AHostBatchWhoseSyncFailsBreaksReadsAndWritesUntilReopened) {
  SKIP_WITHOUT_DEVICE();
  ExpectFailedBatchBreaksTheTable(BatchFailure::kHostSync);
}

TEST(GphashLoggedGpu, GetsAndMixedBatchesTakeDeviceMemorySplitBatchesDoNot) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool pool("gphash-logged-device");
  auto db = DB::Open(pool.path(), PoolOptions(Backend::kCuda));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("h", LoggedOptions());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> keys = {1, 2, 3}, values = {10, 20, 30};
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  DeviceArray device_keys(keys.data(), 3 * 8);
  DeviceArray device_values(nullptr, 3 * 8);
  DeviceArray device_found(nullptr, 3);
  ASSERT_TRUE((*table)
                  ->Get(ConstBytes(device_keys.data(), 3 * 8),
                        MutableBytes(device_values.data(), 3 * 8),
                        MutableBytes(device_found.data(), 3))
                  .ok());
  std::vector<uint64_t> got(3);
  ASSERT_EQ(cudaMemcpy(got.data(), device_values.data(), 3 * 8, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(got, values);
  // Keys in device memory, values in host memory: refused, nothing changed.
  const std::vector<uint64_t> other_values = {11, 21, 31};
  Status put =
      (*table)->Put(ConstBytes(device_keys.data(), 3 * 8), ConstBytes(other_values.data(), 3 * 8));
  EXPECT_TRUE(put.IsUnsupported()) << put.ToString();
  const std::vector<uint8_t> put_ops(3, static_cast<uint8_t>(Table::WriteOp::kPut));
  Status split_write = (*table)->Write(ConstBytes(device_keys.data(), 3 * 8),
                                       ConstBytes(other_values.data(), 3 * 8), put_ops);
  EXPECT_TRUE(split_write.IsUnsupported()) << split_write.ToString();
  std::vector<uint64_t> after(3);
  std::vector<uint8_t> found(3);
  ASSERT_TRUE((*table)->Get(keys, after, found).ok());
  EXPECT_EQ(after, values);
  // A mixed batch with keys, values and erased flags in device memory (its
  // ops in host memory): key 1 erased (found), key 2 put, key 4 erased (not
  // found), key 3 put then erased (found: put earlier in the batch).
  const std::vector<uint64_t> batch_keys = {1, 2, 4, 3, 3};
  const std::vector<uint64_t> batch_values = {0, 22, 0, 33, 0};
  const auto kPut = static_cast<uint8_t>(Table::WriteOp::kPut);
  const auto kErase = static_cast<uint8_t>(Table::WriteOp::kErase);
  const std::vector<uint8_t> ops = {kErase, kPut, kErase, kPut, kErase};
  DeviceArray write_keys(batch_keys.data(), 5 * 8);
  DeviceArray write_values(batch_values.data(), 5 * 8);
  DeviceArray write_erased(nullptr, 5);
  Status write =
      (*table)->Write(ConstBytes(write_keys.data(), 5 * 8), ConstBytes(write_values.data(), 5 * 8),
                      ops, MutableBytes(write_erased.data(), 5));
  ASSERT_TRUE(write.ok()) << write.ToString();
  EXPECT_EQ(write_erased.Read(), (std::vector<uint8_t>{1, 0, 0, 0, 1}));
  ASSERT_TRUE((*table)->Get(keys, after, found).ok());
  EXPECT_EQ(found, (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(after[1], 22u);
}

// Device batches given a stream read their arrays after the work enqueued
// on it: here the copies of the keys and values, held back on the stream
// behind a host function that sleeps. A batch that read its arrays at once
// would find them zeroed.
TEST(GphashLoggedGpu, DeviceBatchesStartAfterTheWorkOnTheirStream) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool pool("gphash-logged-stream");
  auto db = DB::Open(pool.path(), PoolOptions(Backend::kCuda));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("h", LoggedOptions());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  constexpr size_t kCount = 200;
  uint64_t* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 2 * kCount * 8), cudaSuccess);
  for (size_t i = 0; i < kCount; ++i) {
    pinned[i] = i + 1;                   // keys
    pinned[kCount + i] = (i + 1) * 100;  // values
  }
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto held_back_copy = [&](void* to, const void* from, size_t bytes) {
    ASSERT_EQ(
        cudaLaunchHostFunc(
            stream, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); },
            nullptr),
        cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream), cudaSuccess);
  };
  BatchOptions options;
  options.stream = stream;
  {
    DeviceArray keys(nullptr, kCount * 8);
    DeviceArray values(nullptr, kCount * 8);
    held_back_copy(keys.data(), pinned, kCount * 8);
    held_back_copy(values.data(), pinned + kCount, kCount * 8);
    Status put = (*table)->Put(ConstBytes(keys.data(), kCount * 8),
                               ConstBytes(values.data(), kCount * 8), options);
    ASSERT_TRUE(put.ok()) << put.ToString();
  }
  std::vector<uint64_t> keys(pinned, pinned + kCount), values(kCount);
  std::vector<uint8_t> found(kCount);
  ASSERT_TRUE((*table)->Get(keys, values, found).ok());
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(found[i], 1) << i;
    ASSERT_EQ(values[i], pinned[kCount + i]) << i;
  }
  {
    DeviceArray device_keys(nullptr, kCount * 8);
    DeviceArray erased(nullptr, kCount);
    held_back_copy(device_keys.data(), pinned, kCount * 8);
    Status erase = (*table)->Erase(ConstBytes(device_keys.data(), kCount * 8),
                                   MutableBytes(erased.data(), kCount), options);
    ASSERT_TRUE(erase.ok()) << erase.ToString();
    EXPECT_EQ(erased.Read(), std::vector<uint8_t>(kCount, 1));
  }
  {
    // A mixed batch of puts, from device memory.
    DeviceArray device_keys(nullptr, kCount * 8);
    DeviceArray device_values(nullptr, kCount * 8);
    held_back_copy(device_keys.data(), pinned, kCount * 8);
    held_back_copy(device_values.data(), pinned + kCount, kCount * 8);
    const std::vector<uint8_t> ops(kCount, static_cast<uint8_t>(Table::WriteOp::kPut));
    Status write =
        (*table)->Write(ConstBytes(device_keys.data(), kCount * 8),
                        ConstBytes(device_values.data(), kCount * 8), ops, MutableBytes(), options);
    ASSERT_TRUE(write.ok()) << write.ToString();
  }
  ASSERT_TRUE((*table)->Get(keys, values, found).ok());
  EXPECT_EQ(found, std::vector<uint8_t>(kCount, 1));
  EXPECT_EQ(values, std::vector<uint64_t>(pinned + kCount, pinned + 2 * kCount));
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

}  // namespace
}  // namespace gpkv
