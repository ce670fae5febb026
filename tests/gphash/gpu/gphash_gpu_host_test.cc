// Host batches of gpu::GpuBackend (tables/gphash/gpu/host_staging.h): the
// chunked copy / kernel pipeline answers as one chunk does, whatever memory
// the arrays are in (pageable, registered, pinned, device, mixed); small
// write batches' one-kernel duplicate pass; puts that need a resize in the
// middle of a pipeline; concurrent callers; and DB::RegisterHostMemory.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gpkv/db.h"
#include "gpu/device_memory.h"
#include "gpu/host_memory.h"
#include "gpu_test_util.h"
#include "tables/gphash/gpu/host_staging.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::DeviceBytes;
using gpkv::gpu::InRegisteredRange;
using gpkv::gpu::PinnedBytes;
using gpkv::gpu::RegisterHostMemory;
using gpkv::gpu::UnregisterHostMemory;

namespace {

using gpu_test::Bytes;
using gpu_test::ModeName;
using gpu_test::RandomKeys;
using gpu_test::TableHarness;

// Where a test places one batch array.
enum class Memory { kPageable, kRegistered, kPinned, kDevice };

const char* MemoryName(Memory memory) {
  switch (memory) {
    case Memory::kPageable:
      return "pageable";
    case Memory::kRegistered:
      return "registered";
    case Memory::kPinned:
      return "pinned";
    case Memory::kDevice:
      return "device";
  }
  return "?";
}

// A buffer of `size` bytes in `memory`, with host-side copies in and out.
class Buffer {
 public:
  Buffer(Memory memory, size_t size) : memory_(memory), size_(size) {
    switch (memory) {
      case Memory::kPageable:
        host_.assign(size + 1, 0);
        break;
      case Memory::kRegistered:
        host_.assign(size + 1, 0);
        registered_ = RegisterHostMemory(host_.data(), host_.size()).ok();
        EXPECT_TRUE(registered_);
        break;
      case Memory::kPinned: {
        auto pinned = PinnedBytes::Allocate(size + 1);
        EXPECT_TRUE(pinned.ok());
        if (pinned.ok()) pinned_ = std::move(*pinned);
        break;
      }
      case Memory::kDevice: {
        auto device = DeviceBytes::Allocate(size + 1);
        EXPECT_TRUE(device.ok());
        if (device.ok()) device_ = std::move(*device);
        break;
      }
    }
  }
  ~Buffer() {
    if (registered_) EXPECT_TRUE(UnregisterHostMemory(host_.data()).ok());
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint8_t* data() {
    switch (memory_) {
      case Memory::kPageable:
      case Memory::kRegistered:
        return host_.data();
      case Memory::kPinned:
        return pinned_.data();
      case Memory::kDevice:
        return device_.data();
    }
    return nullptr;
  }
  void Write(const std::vector<uint8_t>& bytes) {
    ASSERT_LE(bytes.size(), size_);
    if (memory_ == Memory::kDevice) {
      ASSERT_TRUE(device_.CopyFromHost(bytes.data(), bytes.size()).ok());
    } else {
      std::memcpy(data(), bytes.data(), bytes.size());
    }
  }
  std::vector<uint8_t> Read(size_t bytes) {
    std::vector<uint8_t> out(bytes);
    if (memory_ == Memory::kDevice) {
      EXPECT_TRUE(device_.CopyToHost(out.data(), bytes).ok());
    } else {
      std::memcpy(out.data(), data(), bytes);
    }
    return out;
  }

 private:
  Memory memory_;
  size_t size_;
  std::vector<uint8_t> host_;
  bool registered_ = false;
  PinnedBytes pinned_;
  DeviceBytes device_;
};

// The batch semantics, on the host: puts in order (the last one wins),
// erases in order (the first one reports).
class Oracle {
 public:
  void Put(const std::vector<uint8_t>& keys, const std::vector<uint8_t>& values, uint32_t key_size,
           uint32_t value_size) {
    const size_t n = keys.size() / key_size;
    for (size_t i = 0; i < n; ++i) {
      map_[Bytes(&keys[i * key_size], key_size)] = Bytes(&values[i * value_size], value_size);
    }
  }
  std::vector<uint8_t> Erase(const std::vector<uint8_t>& keys, uint32_t key_size) {
    const size_t n = keys.size() / key_size;
    std::vector<uint8_t> erased(n);
    for (size_t i = 0; i < n; ++i) erased[i] = map_.erase(Bytes(&keys[i * key_size], key_size));
    return erased;
  }
  void Get(const std::vector<uint8_t>& keys, uint32_t key_size, uint32_t value_size,
           std::vector<uint8_t>* values, std::vector<uint8_t>* found) const {
    const size_t n = keys.size() / key_size;
    values->assign(n * value_size, 0);
    found->assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      auto it = map_.find(Bytes(&keys[i * key_size], key_size));
      if (it == map_.end()) continue;
      (*found)[i] = 1;
      std::memcpy(values->data() + i * value_size, it->second.data(), value_size);
    }
  }
  size_t size() const { return map_.size(); }

 private:
  std::unordered_map<std::string, std::string> map_;
};

// Keys drawn from a small pool, so batches repeat keys (also across chunks).
std::vector<uint8_t> KeysFromPool(std::mt19937_64& rng, const std::vector<uint8_t>& pool,
                                  size_t count, uint32_t key_size) {
  std::vector<uint8_t> keys(count * key_size);
  const size_t pool_keys = pool.size() / key_size;
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(&keys[i * key_size], &pool[(rng() % pool_keys) * key_size], key_size);
  }
  return keys;
}

struct PipelineCase {
  GpuIndexMode mode;
  Memory keys;
  Memory values;  // values in and out
  Memory flags;   // found and erased
  uint32_t key_size;
};

std::string CaseName(const testing::TestParamInfo<PipelineCase>& info) {
  return std::string(ModeName(info.param.mode)) + "_" + MemoryName(info.param.keys) + "_" +
         MemoryName(info.param.values) + "_" + MemoryName(info.param.flags) + "_k" +
         std::to_string(info.param.key_size);
}

class HostPipeline : public testing::TestWithParam<PipelineCase> {};

// Batches of 0, 1, chunk - 1, chunk, chunk + 1 and several chunks plus a
// bit, with repeated keys across chunks, through a table of 1000-op chunks
// over 3 lanes: puts, gets and erases answer as the oracle.
TEST_P(HostPipeline, ChunksAnswerAsOneBatch) {
  SKIP_WITHOUT_DEVICE();
  const PipelineCase& param = GetParam();
  TableOptions options;
  options.key_size = param.key_size;
  options.value_size = 8;
  options.expected_keys = 4000;
  GpuTableOptions gpu_options;
  gpu_options.index_mode = param.mode;
  gpu_options.host_chunk_ops = 1000;
  gpu_options.host_lanes = 3;
  TableHarness harness(std::string("host-pipeline-") + CaseName({param, 0}), options, gpu_options);
  ASSERT_TRUE(harness.ok());
  const uint32_t ks = param.key_size, vs = 8;
  std::mt19937_64 rng(11);
  const std::vector<uint8_t> pool = RandomKeys(rng, 6000, ks);
  Oracle oracle;
  const size_t kMax = 7777;
  Buffer keys(param.keys, kMax * ks), values(param.values, kMax * vs), flags(param.flags, kMax);
  for (size_t count : {size_t{0}, size_t{1}, size_t{999}, size_t{1000}, size_t{1001}, size_t{3500},
                       size_t{7777}}) {
    SCOPED_TRACE("batch of " + std::to_string(count));
    // Put.
    std::vector<uint8_t> put_keys = KeysFromPool(rng, pool, count, ks);
    std::vector<uint8_t> put_values = RandomKeys(rng, count, vs);
    keys.Write(put_keys);
    values.Write(put_values);
    ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), count).ok());
    oracle.Put(put_keys, put_values, ks, vs);
    EXPECT_EQ(harness.table().Stats().keys, oracle.size());
    // Get (keys of the pool: some present, some not).
    std::vector<uint8_t> get_keys = KeysFromPool(rng, pool, count, ks);
    keys.Write(get_keys);
    ASSERT_TRUE(harness.table().Get(keys.data(), values.data(), flags.data(), count).ok());
    std::vector<uint8_t> want_values, want_found;
    oracle.Get(get_keys, ks, vs, &want_values, &want_found);
    EXPECT_EQ(values.Read(count * vs), want_values);
    EXPECT_EQ(flags.Read(count), want_found);
    // Get without found flags.
    ASSERT_TRUE(harness.table().Get(keys.data(), values.data(), nullptr, count).ok());
    EXPECT_EQ(values.Read(count * vs), want_values);
    // Erase a third as many (repeats included).
    std::vector<uint8_t> erase_keys = KeysFromPool(rng, pool, count / 3, ks);
    keys.Write(erase_keys);
    ASSERT_TRUE(harness.table().Erase(keys.data(), flags.data(), count / 3).ok());
    EXPECT_EQ(flags.Read(count / 3), oracle.Erase(erase_keys, ks));
    EXPECT_EQ(harness.table().Stats().keys, oracle.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Memories, HostPipeline,
                         testing::Values(PipelineCase{GpuIndexMode::kMirror, Memory::kPageable,
                                                      Memory::kPageable, Memory::kPageable, 8},
                                         PipelineCase{GpuIndexMode::kMirror, Memory::kRegistered,
                                                      Memory::kRegistered, Memory::kRegistered, 8},
                                         PipelineCase{GpuIndexMode::kMirror, Memory::kPinned,
                                                      Memory::kPinned, Memory::kPinned, 8},
                                         PipelineCase{GpuIndexMode::kMirror, Memory::kDevice,
                                                      Memory::kPageable, Memory::kPinned, 8},
                                         PipelineCase{GpuIndexMode::kMirror, Memory::kPageable,
                                                      Memory::kDevice, Memory::kRegistered, 16},
                                         PipelineCase{GpuIndexMode::kMirror, Memory::kRegistered,
                                                      Memory::kPageable, Memory::kDevice, 32},
                                         PipelineCase{GpuIndexMode::kDirect, Memory::kPageable,
                                                      Memory::kPageable, Memory::kPageable, 8},
                                         PipelineCase{GpuIndexMode::kDirect, Memory::kPinned,
                                                      Memory::kRegistered, Memory::kPageable, 16},
                                         PipelineCase{GpuIndexMode::kStaged, Memory::kPageable,
                                                      Memory::kPageable, Memory::kPageable, 8},
                                         PipelineCase{GpuIndexMode::kStaged, Memory::kRegistered,
                                                      Memory::kPinned, Memory::kRegistered, 8}),
                         CaseName);

// Small write batches resolve duplicates with one kernel: the last put and
// the first erase of a key count, for every key size, in mirror mode (thread
// puts) and direct mode (warp puts), with the arrays in pageable memory (read
// from the pinned staging) and in registered memory (read in place).
// Stats().keys checks the counters, which the duplicate pass zeroes and the
// put kernel hands to the host.
TEST(HostPipelineSmall, DuplicatesInSmallBatchesResolveLikeTheSort) {
  SKIP_WITHOUT_DEVICE();
  for (const GpuIndexMode mode : {GpuIndexMode::kMirror, GpuIndexMode::kDirect}) {
    for (const bool registered : {false, true}) {
      for (uint32_t ks : {8u, 16u, 32u}) {
        SCOPED_TRACE("key size " + std::to_string(ks) +
                     (registered ? ", registered" : ", pageable") +
                     (mode == GpuIndexMode::kMirror ? ", mirror" : ", direct"));
        TableOptions options;
        options.key_size = ks;
        options.value_size = 8;
        options.expected_keys = 10000;
        TableHarness harness("host-small-" + std::to_string(ks) + (registered ? "-reg" : "") +
                                 (mode == GpuIndexMode::kMirror ? "" : "-direct"),
                             options, mode);
        ASSERT_TRUE(harness.ok());
        std::mt19937_64 rng(ks);
        const std::vector<uint8_t> pool = RandomKeys(rng, 300, ks);
        Oracle oracle;
        for (size_t count : {size_t{1}, size_t{2}, size_t{64}, size_t{4095}, size_t{4096}}) {
          std::vector<uint8_t> keys = KeysFromPool(rng, pool, count, ks);
          std::vector<uint8_t> values = RandomKeys(rng, count, 8);
          if (registered) {
            ASSERT_TRUE(RegisterHostMemory(keys.data(), keys.size()).ok());
            ASSERT_TRUE(RegisterHostMemory(values.data(), values.size()).ok());
          }
          const Status put = harness.table().Put(keys.data(), values.data(), count);
          if (registered) {
            EXPECT_TRUE(UnregisterHostMemory(keys.data()).ok());
            EXPECT_TRUE(UnregisterHostMemory(values.data()).ok());
          }
          ASSERT_TRUE(put.ok()) << put.ToString();
          oracle.Put(keys, values, ks, 8);
          std::vector<uint8_t> got(pool.size() / ks * 8), found(pool.size() / ks);
          std::vector<uint8_t> want, want_found;
          ASSERT_TRUE(
              harness.table().Get(pool.data(), got.data(), found.data(), pool.size() / ks).ok());
          oracle.Get(pool, ks, 8, &want, &want_found);
          EXPECT_EQ(got, want);
          EXPECT_EQ(found, want_found);
          std::vector<uint8_t> erase_keys = KeysFromPool(rng, pool, count / 2, ks);
          std::vector<uint8_t> erased(count / 2);
          ASSERT_TRUE(harness.table().Erase(erase_keys.data(), erased.data(), count / 2).ok());
          EXPECT_EQ(erased, oracle.Erase(erase_keys, ks));
        }
        EXPECT_EQ(harness.table().Stats().keys, oracle.size());
      }
    }
  }
}

// Small put batches of several writers at once: each one-chunk batch runs
// its duplicate kernel before it takes the write lock, beside another
// caller's put kernel, and its put kernel after. Each writer on keys of its
// own drawn with repeats, in batches of 1..4096 from pageable and registered
// arrays, 60 rounds: every key ends with its writer's last value, and the
// key count (the counters the kernels hand to the host) matches.
TEST(HostPipelineSmall, SmallPutsOfSeveralWritersKeepEachKeysLastValue) {
  SKIP_WITHOUT_DEVICE();
  for (uint32_t ks : {8u, 32u}) {
    SCOPED_TRACE("key size " + std::to_string(ks));
    TableOptions options;
    options.key_size = ks;
    options.value_size = 8;
    options.expected_keys = 20000;
    TableHarness harness("host-small-writers-" + std::to_string(ks), options,
                         GpuIndexMode::kMirror);
    ASSERT_TRUE(harness.ok());
    constexpr int kWriters = 3, kRounds = 60;
    std::vector<std::vector<uint8_t>> pools(kWriters);
    std::vector<Oracle> oracles(kWriters);
    std::mt19937_64 seed_rng(ks);
    for (int w = 0; w < kWriters; ++w) pools[w] = RandomKeys(seed_rng, 2000, ks);
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w) {
      threads.emplace_back([&, w] {
        std::mt19937_64 rng(100 + w);
        const size_t sizes[] = {1, 2, 33, 700, 2048, 4095, 4096};
        for (int round = 0; round < kRounds; ++round) {
          const size_t count = sizes[(round + w) % 7];
          std::vector<uint8_t> keys = KeysFromPool(rng, pools[w], count, ks);
          std::vector<uint8_t> values = RandomKeys(rng, count, 8);
          const bool registered = round % 2 == 1;
          if (registered && (!RegisterHostMemory(keys.data(), keys.size()).ok() ||
                             !RegisterHostMemory(values.data(), values.size()).ok())) {
            ++errors;
            return;
          }
          if (!harness.table().Put(keys.data(), values.data(), count).ok()) ++errors;
          if (registered && (!UnregisterHostMemory(keys.data()).ok() ||
                             !UnregisterHostMemory(values.data()).ok())) {
            ++errors;
          }
          oracles[w].Put(keys, values, ks, 8);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_EQ(errors.load(), 0);
    size_t total = 0;
    for (int w = 0; w < kWriters; ++w) {
      const size_t n = pools[w].size() / ks;
      std::vector<uint8_t> got(n * 8), found(n), want, want_found;
      ASSERT_TRUE(harness.table().Get(pools[w].data(), got.data(), found.data(), n).ok());
      oracles[w].Get(pools[w], ks, 8, &want, &want_found);
      EXPECT_EQ(got, want) << "writer " << w;
      EXPECT_EQ(found, want_found) << "writer " << w;
      total += oracles[w].size();
    }
    EXPECT_EQ(harness.table().Stats().keys, total);
  }
}

// A pipelined put batch that outgrows the table (puts find no room in a late
// chunk) is completed by kicks and resizes, with the last value of every key;
// so is a small (zero-copy) one.
TEST(HostPipelineResize, PutsThatNeedAResizeKeepTheirLastValues) {
  SKIP_WITHOUT_DEVICE();
  struct Case {
    GpuIndexMode mode;
    size_t pool_keys, batch;
  };
  for (Case test :
       {Case{GpuIndexMode::kMirror, 40000, 60000}, Case{GpuIndexMode::kDirect, 40000, 60000},
        Case{GpuIndexMode::kMirror, 6000, 8000}}) {
    SCOPED_TRACE(std::string(ModeName(test.mode)) + " batch " + std::to_string(test.batch));
    TableOptions options;
    options.expected_keys = 1000;
    GpuTableOptions gpu_options;
    gpu_options.index_mode = test.mode;
    gpu_options.host_chunk_ops = 5000;
    gpu_options.host_zero_copy_ops = 8192;
    if (test.batch <= gpu_options.host_zero_copy_ops) gpu_options.host_chunk_ops = test.batch;
    TableHarness harness(
        std::string("host-resize-") + ModeName(test.mode) + std::to_string(test.batch), options,
        gpu_options);
    ASSERT_TRUE(harness.ok());
    std::mt19937_64 rng(5);
    const std::vector<uint8_t> pool = RandomKeys(rng, test.pool_keys, 8);
    std::vector<uint8_t> keys = KeysFromPool(rng, pool, test.batch, 8);
    std::vector<uint8_t> values = RandomKeys(rng, test.batch, 8);
    ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), test.batch).ok());
    Oracle oracle;
    oracle.Put(keys, values, 8, 8);
    EXPECT_GT(harness.table().Stats().resizes, 0u);
    EXPECT_EQ(harness.table().Stats().keys, oracle.size());
    std::vector<uint8_t> got(test.pool_keys * 8), found(test.pool_keys), want, want_found;
    ASSERT_TRUE(harness.table().Get(pool.data(), got.data(), found.data(), test.pool_keys).ok());
    oracle.Get(pool, 8, 8, &want, &want_found);
    EXPECT_EQ(got, want);
    EXPECT_EQ(found, want_found);
  }
}

// One-chunk batches of pageable arrays run on the pinned staging in place
// (zero copy) up to host_zero_copy_ops, copied beyond: both answer alike.
TEST(HostPipelineZeroCopy, ZeroCopyAndCopiedSmallBatchesAnswerAlike) {
  SKIP_WITHOUT_DEVICE();
  for (uint64_t zero_copy_ops : {uint64_t{0}, uint64_t{8192}}) {
    SCOPED_TRACE("host_zero_copy_ops " + std::to_string(zero_copy_ops));
    TableOptions options;
    options.expected_keys = 20000;
    GpuTableOptions gpu_options;
    gpu_options.index_mode = GpuIndexMode::kMirror;
    gpu_options.host_zero_copy_ops = zero_copy_ops;
    TableHarness harness("host-zero-copy-" + std::to_string(zero_copy_ops), options, gpu_options);
    ASSERT_TRUE(harness.ok());
    std::mt19937_64 rng(21);
    const std::vector<uint8_t> pool = RandomKeys(rng, 5000, 8);
    Oracle oracle;
    for (size_t count : {size_t{1}, size_t{100}, size_t{4096}, size_t{8192}, size_t{9000}}) {
      SCOPED_TRACE("batch of " + std::to_string(count));
      std::vector<uint8_t> keys = KeysFromPool(rng, pool, count, 8);
      std::vector<uint8_t> values = RandomKeys(rng, count, 8);
      ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), count).ok());
      oracle.Put(keys, values, 8, 8);
      std::vector<uint8_t> get_keys = KeysFromPool(rng, pool, count, 8);
      std::vector<uint8_t> got(count * 8), found(count), want, want_found;
      ASSERT_TRUE(harness.table().Get(get_keys.data(), got.data(), found.data(), count).ok());
      oracle.Get(get_keys, 8, 8, &want, &want_found);
      EXPECT_EQ(got, want);
      EXPECT_EQ(found, want_found);
      std::vector<uint8_t> erase_keys = KeysFromPool(rng, pool, count / 4, 8);
      std::vector<uint8_t> erased(count / 4);
      ASSERT_TRUE(harness.table().Erase(erase_keys.data(), erased.data(), count / 4).ok());
      EXPECT_EQ(erased, oracle.Erase(erase_keys, 8));
    }
    EXPECT_EQ(harness.table().Stats().keys, oracle.size());
  }
}

// Several threads run host batches on one table at once (gets on pageable
// and registered buffers, puts of their own keys): every answer is right.
TEST(HostPipelineConcurrency, ConcurrentCallersAnswerRight) {
  SKIP_WITHOUT_DEVICE();
  TableOptions options;
  options.expected_keys = 200000;
  GpuTableOptions gpu_options;
  gpu_options.index_mode = GpuIndexMode::kMirror;
  gpu_options.host_chunk_ops = 4096;
  TableHarness harness("host-concurrent", options, gpu_options);
  ASSERT_TRUE(harness.ok());
  std::mt19937_64 rng(3);
  const size_t kLoaded = 100000;
  std::vector<uint8_t> keys = RandomKeys(rng, kLoaded, 8);
  std::vector<uint8_t> values = RandomKeys(rng, kLoaded, 8);
  ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), kLoaded).ok());
  constexpr int kReaders = 4, kWriters = 2, kRounds = 20;
  std::atomic<int> wrong{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&, t] {
      Buffer out(t % 2 == 0 ? Memory::kPageable : Memory::kRegistered, kLoaded * 8);
      Buffer found(t % 2 == 0 ? Memory::kRegistered : Memory::kPageable, kLoaded);
      for (int round = 0; round < kRounds; ++round) {
        const size_t count = size_t{1000} << (round % 7);  // 1000 .. 64000
        if (!harness.table().Get(keys.data(), out.data(), found.data(), count).ok()) {
          ++errors;
          continue;
        }
        if (std::memcmp(out.data(), values.data(), count * 8) != 0 ||
            found.Read(count) != std::vector<uint8_t>(count, 1)) {
          ++wrong;
        }
      }
    });
  }
  std::vector<std::vector<uint8_t>> writer_keys(kWriters), writer_values(kWriters);
  for (int t = 0; t < kWriters; ++t) {
    writer_keys[t] = RandomKeys(rng, 20000, 8);
    writer_values[t] = RandomKeys(rng, 20000, 8);
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        const size_t count = 1000 * (round + 1);
        if (!harness.table()
                 .Put(writer_keys[t].data(), writer_values[t].data(),
                      std::min<size_t>(count, 20000))
                 .ok()) {
          ++errors;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  for (int t = 0; t < kWriters; ++t) {
    std::vector<uint8_t> got(20000 * 8), found(20000);
    ASSERT_TRUE(harness.table().Get(writer_keys[t].data(), got.data(), found.data(), 20000).ok());
    EXPECT_EQ(got, writer_values[t]);
  }
}

// The staging copy splits large copies over threads: every byte lands, none
// past the end, on any number of threads (no device needed; 8 threads and
// 3 MiB + 7 bytes once lost the last 7 bytes).
TEST(HostStagingCopy, CopiesEveryByteOfAnySize) {
  // The slicing on 3 and 8 threads: tests/concurrency/copy_pool_test.cc.
  std::mt19937_64 rng(17);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{4097}, (size_t{1} << 19) - 1,
                       size_t{1} << 19, (size_t{1} << 19) + 65, (size_t{3} << 20) + 7}) {
    SCOPED_TRACE(std::to_string(bytes) + " bytes");
    std::vector<uint8_t> source = RandomKeys(rng, bytes / 8 + 1, 8);
    source.resize(bytes);
    std::vector<uint8_t> target(bytes + 64, 0xa5);
    CopyHost(target.data(), source.data(), bytes);
    EXPECT_EQ(std::vector<uint8_t>(target.begin(), target.begin() + bytes), source);
    EXPECT_EQ(std::vector<uint8_t>(target.begin() + bytes, target.end()),
              std::vector<uint8_t>(64, 0xa5));
  }
}

// Small get batches launch graphs of their kernel (LaunchGetGraph), one per
// kernel, with each batch's parameters: gets of 1, 100 and 4096 keys (tile
// and one-per-thread kernels) from registered and pageable arrays answer
// right in mirror and direct mode while puts resize the table under them
// (the view in the parameters changes).
TEST(HostPipelineGraphs, SmallGetGraphsFollowTheTable) {
  SKIP_WITHOUT_DEVICE();
  for (const GpuIndexMode mode : {GpuIndexMode::kMirror, GpuIndexMode::kDirect}) {
    SCOPED_TRACE(mode == GpuIndexMode::kMirror ? "mirror" : "direct");
    TableOptions options;
    options.expected_keys = 1000;  // the puts below resize it several times
    TableHarness harness(
        std::string("host-graphs-") + (mode == GpuIndexMode::kMirror ? "mirror" : "direct"),
        options, mode);
    ASSERT_TRUE(harness.ok());
    const uint64_t first_slots = harness.table().Stats().slots;
    std::mt19937_64 rng(31);
    Oracle oracle;
    std::vector<uint8_t> all;
    for (int round = 0; round < 6; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      std::vector<uint8_t> keys = RandomKeys(rng, 3000, 8);
      std::vector<uint8_t> values = RandomKeys(rng, 3000, 8);
      ASSERT_TRUE(harness.table().Put(keys.data(), values.data(), 3000).ok());
      oracle.Put(keys, values, 8, 8);
      all.insert(all.end(), keys.begin(), keys.end());
      for (const bool registered : {false, true}) {
        for (size_t count : {size_t{1}, size_t{100}, size_t{4096}}) {
          SCOPED_TRACE(std::to_string(count) + (registered ? " registered" : " pageable"));
          std::vector<uint8_t> get_keys = KeysFromPool(rng, all, count, 8);
          std::vector<uint8_t> got(count * 8), found(count), want, want_found;
          if (registered) {
            ASSERT_TRUE(RegisterHostMemory(get_keys.data(), get_keys.size()).ok());
            ASSERT_TRUE(RegisterHostMemory(got.data(), got.size()).ok());
            ASSERT_TRUE(RegisterHostMemory(found.data(), found.size()).ok());
          }
          const Status status =
              harness.table().Get(get_keys.data(), got.data(), found.data(), count);
          if (registered) {
            EXPECT_TRUE(UnregisterHostMemory(get_keys.data()).ok());
            EXPECT_TRUE(UnregisterHostMemory(got.data()).ok());
            EXPECT_TRUE(UnregisterHostMemory(found.data()).ok());
          }
          ASSERT_TRUE(status.ok()) << status.ToString();
          oracle.Get(get_keys, 8, 8, &want, &want_found);
          EXPECT_EQ(got, want);
          EXPECT_EQ(found, want_found);
        }
      }
    }
    EXPECT_GT(harness.table().Stats().slots, first_slots);  // it resized
  }
}

// RegisterHostMemory remembers its ranges: InRegisteredRange answers for an
// array wholly inside one (as CUDA does, without asking it), and forgets the
// range when it is unregistered; ClassifyMemory uses it, in-place answer
// included.
TEST(HostMemoryRegistry, RegisteredRangesAreKnownUntilUnregistered) {
  SKIP_WITHOUT_DEVICE();
  std::vector<uint8_t> bytes(1 << 20);
  uint8_t* begin = bytes.data();
  const size_t size = bytes.size();
  EXPECT_FALSE(InRegisteredRange(begin, 8, nullptr));
  ASSERT_TRUE(RegisterHostMemory(begin, size).ok());
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, begin), cudaSuccess);
  const bool mapped_in_place = attributes.devicePointer == begin;
  bool in_place = !mapped_in_place;
  EXPECT_TRUE(InRegisteredRange(begin, size, &in_place));
  EXPECT_EQ(in_place, mapped_in_place);
  EXPECT_TRUE(InRegisteredRange(begin + 100, 50, nullptr));
  EXPECT_TRUE(InRegisteredRange(begin + size - 8, 8, nullptr));
  EXPECT_FALSE(InRegisteredRange(begin + size - 4, 8, nullptr));  // runs past the end
  EXPECT_FALSE(InRegisteredRange(begin + size, 1, nullptr));
  EXPECT_FALSE(InRegisteredRange(nullptr, 1, nullptr));
  bool classified_in_place = !mapped_in_place;
  EXPECT_EQ(ClassifyMemory(begin + 64, 4096, 0, &classified_in_place), MemoryKind::kPinned);
  EXPECT_EQ(classified_in_place, mapped_in_place);
  ASSERT_TRUE(UnregisterHostMemory(begin).ok());
  EXPECT_FALSE(InRegisteredRange(begin, 8, nullptr));
  EXPECT_EQ(ClassifyMemory(begin + 64, 4096, 0), MemoryKind::kPageable);
}

// DB::RegisterHostMemory on the CUDA backend: batches in registered memory
// answer right; double registration, overlaps and unknown ranges are errors.
TEST(HostPipelineEngine, RegisteredBuffersThroughTheEngine) {
  SKIP_WITHOUT_DEVICE();
  // The buffers outlive the DB, which unregisters what is still registered.
  const size_t n = 50000;
  std::mt19937_64 rng(9);
  std::vector<uint8_t> keys = RandomKeys(rng, n, 8), values = RandomKeys(rng, n, 8);
  std::vector<uint8_t> out(n * 8), found(n);
  testutil::TempPool temp("host-engine");
  Options db_options;
  db_options.create_if_missing = true;
  db_options.pool_size = uint64_t{256} << 20;
  db_options.backend = gpkv::Backend::kCuda;
  auto db = DB::Open(temp.path(), db_options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions options;
  options.expected_keys = 100000;
  auto table = (*db)->CreateTable("t", options);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_TRUE((*db)->RegisterHostMemory(keys.data(), keys.size()).ok());
  ASSERT_TRUE((*db)->RegisterHostMemory(out.data(), out.size()).ok());
  EXPECT_TRUE((*db)->RegisterHostMemory(keys.data(), keys.size()).IsInvalidArgument());
  EXPECT_TRUE((*db)->RegisterHostMemory(keys.data() + 8, 16).IsInvalidArgument());
  EXPECT_TRUE((*db)->RegisterHostMemory(nullptr, 16).IsInvalidArgument());
  EXPECT_TRUE((*db)->UnregisterHostMemory(values.data()).IsNotFound());
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  ASSERT_TRUE((*table)->Get(keys, out, found).ok());
  EXPECT_EQ(out, values);
  EXPECT_EQ(found, std::vector<uint8_t>(n, 1));
  ASSERT_TRUE((*db)->UnregisterHostMemory(keys.data()).ok());
  EXPECT_TRUE((*db)->UnregisterHostMemory(keys.data()).IsNotFound());
  // out stays registered: closing the DB unregisters it.
  db->reset();
}

}  // namespace
}  // namespace gpkv::gphash::gpu
