// The resident get kernel of small host batches (tables/gphash/gpu/
// resident_gets.h): it answers as a launched kernel does, from pageable,
// pinned and registered arrays; it exits when idle and starts again; a
// resize (a new view) restarts it; readers see whole values while writers
// update them; and a CUDA call that may wait for the whole device (cudaFree)
// still returns while callers keep the kernel busy.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/host_memory.h"
#include "gpu_test_util.h"

namespace gpkv::gpu {
namespace {

using gpu_test::TableHarness;

constexpr uint32_t kValueSize = 8;

// The value a test stores for `key` in round `round`: both halves name the
// key, so a reader can tell a whole value from a torn or foreign one.
uint64_t ValueOf(uint64_t key, uint32_t round) {
  return (key * 0x9E3779B97F4A7C15ull) ^ (uint64_t{round} << 32) ^ round;
}
uint32_t RoundOf(uint64_t key, uint64_t value) {
  return static_cast<uint32_t>((value ^ (key * 0x9E3779B97F4A7C15ull)) & 0xffffffffu);
}
bool IsValueOf(uint64_t key, uint64_t value) {
  const uint32_t round = RoundOf(key, value);
  return value == ValueOf(key, round);
}

// Keys 1..count (even keys only: odd keys stay absent), in batches.
void Load(GphashGpu& table, uint64_t count, uint32_t round = 0) {
  std::vector<uint64_t> keys(count), values(count);
  for (uint64_t i = 0; i < count; ++i) {
    keys[i] = 2 * (i + 1);
    values[i] = ValueOf(keys[i], round);
  }
  ASSERT_TRUE(table
                  .Put(reinterpret_cast<const uint8_t*>(keys.data()),
                       reinterpret_cast<const uint8_t*>(values.data()), count)
                  .ok());
}

// Gets `count` random keys of [1, 2 * loaded] from pageable vectors and
// checks every answer: even keys present with round `round`, odd absent.
void CheckGets(GphashGpu& table, std::mt19937_64& rng, uint64_t loaded, size_t count,
               uint32_t round, uint8_t* keys_at = nullptr, uint8_t* values_at = nullptr,
               uint8_t* found_at = nullptr) {
  std::vector<uint64_t> keys(count), values(count, ~0ull);
  std::vector<uint8_t> found(count, 7);
  for (size_t i = 0; i < count; ++i) keys[i] = 1 + rng() % (2 * loaded);
  auto* k = keys_at != nullptr ? keys_at : reinterpret_cast<uint8_t*>(keys.data());
  auto* v = values_at != nullptr ? values_at : reinterpret_cast<uint8_t*>(values.data());
  auto* f = found_at != nullptr ? found_at : found.data();
  if (keys_at != nullptr) std::memcpy(keys_at, keys.data(), count * 8);
  ASSERT_TRUE(table.Get(k, v, f, count).ok());
  if (values_at != nullptr) std::memcpy(values.data(), values_at, count * 8);
  if (found_at != nullptr) std::memcpy(found.data(), found_at, count);
  for (size_t i = 0; i < count; ++i) {
    const bool present = keys[i] % 2 == 0;
    ASSERT_EQ(found[i], present ? 1 : 0) << "key " << keys[i];
    ASSERT_EQ(values[i], present ? ValueOf(keys[i], round) : 0) << "key " << keys[i];
  }
}

TableOptions Options(uint64_t expected_keys) {
  TableOptions options;
  options.key_size = 8;
  options.value_size = kValueSize;
  options.expected_keys = expected_keys;
  return options;
}

class ResidentGets : public testing::TestWithParam<GpuIndexMode> {};

// Batches of 1 .. 8192 gets from pageable, pinned and registered arrays
// answer right, and go to the resident kernel (it launched); with the option
// off, nothing launches it.
TEST_P(ResidentGets, AnswersSmallHostBatches) {
  SKIP_WITHOUT_DEVICE();
  TableHarness harness(std::string("resident-answers-") + gpu_test::ModeName(GetParam()),
                       Options(50000), GetParam());
  ASSERT_TRUE(harness.ok());
  GphashGpu& table = harness.table();
  const uint64_t loaded = 40000;
  Load(table, loaded);
  std::mt19937_64 rng(1);
  for (size_t count : {1, 2, 63, 64, 65, 1000, 4096, 8191, 8192}) {
    CheckGets(table, rng, loaded, count, 0);
  }
  EXPECT_GE(table.resident_get_launches(), 1u);
  auto pinned = PinnedBytes::Allocate(8192 * 17);
  ASSERT_TRUE(pinned.ok());
  uint8_t* base = pinned->data();
  for (size_t count : {1, 4096, 8192}) {
    CheckGets(table, rng, loaded, count, 0, base, base + 8192 * 8, base + 8192 * 16);
  }
  std::vector<uint8_t> registered(8192 * 17 + 8);
  ASSERT_TRUE(RegisterHostMemory(registered.data(), registered.size()).ok());
  uint8_t* r = registered.data();
  CheckGets(table, rng, loaded, 4096, 0, r, r + 8192 * 8, r + 8192 * 16);
  ASSERT_TRUE(UnregisterHostMemory(registered.data()).ok());

  harness.gpu_options().resident_gets = false;
  harness.Reopen();
  CheckGets(harness.table(), rng, loaded, 4096, 0);
  EXPECT_EQ(harness.table().resident_get_launches(), 0u);
}

// The kernel exits after its idle time; the next batch starts it again.
TEST_P(ResidentGets, StartsAgainAfterItsIdleTime) {
  SKIP_WITHOUT_DEVICE();
  TableHarness harness(std::string("resident-idle-") + gpu_test::ModeName(GetParam()),
                       Options(20000), GetParam());
  ASSERT_TRUE(harness.ok());
  GphashGpu& table = harness.table();
  Load(table, 10000);
  std::mt19937_64 rng(2);
  CheckGets(table, rng, 10000, 4096, 0);
  const uint64_t first = table.resident_get_launches();
  EXPECT_GE(first, 1u);
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    CheckGets(table, rng, 10000, 4096, 0);
  }
  EXPECT_GE(table.resident_get_launches(), first + 5);
}

// Puts that grow the table (resizes: new levels, a new view) between small
// get batches: the kernel restarts with the new view and answers right.
TEST_P(ResidentGets, FollowsResizes) {
  SKIP_WITHOUT_DEVICE();
  TableHarness harness(std::string("resident-resize-") + gpu_test::ModeName(GetParam()),
                       Options(2000), GetParam());
  ASSERT_TRUE(harness.ok());
  GphashGpu& table = harness.table();
  std::mt19937_64 rng(3);
  uint64_t loaded = 1000;
  Load(table, loaded);
  CheckGets(table, rng, loaded, 2000, 0);
  const uint64_t resizes_before = table.Stats().resizes;
  for (int step = 0; step < 4; ++step) {
    loaded *= 2;
    Load(table, loaded);
    CheckGets(table, rng, loaded, 4096, 0);
  }
  EXPECT_GT(table.Stats().resizes, resizes_before);
}

// The same positions of consecutive batches run on the same multiprocessor
// of one resident kernel: a batch misses keys, a put inserts them, the same
// batch again finds them; an erase, and it misses them again. No answer
// comes from what an earlier batch left in a cache.
TEST_P(ResidentGets, SeesEveryAcknowledgedInsertAndErase) {
  SKIP_WITHOUT_DEVICE();
  TableHarness harness(std::string("resident-visible-") + gpu_test::ModeName(GetParam()),
                       Options(100000), GetParam());
  ASSERT_TRUE(harness.ok());
  GphashGpu& table = harness.table();
  Load(table, 20000);
  const uint64_t launches_before = table.resident_get_launches();
  std::vector<uint64_t> keys(4096), values(4096), answers(4096);
  std::vector<uint8_t> found(4096), erased(4096);
  auto get = [&] {
    ASSERT_TRUE(table
                    .Get(reinterpret_cast<const uint8_t*>(keys.data()),
                         reinterpret_cast<uint8_t*>(answers.data()), found.data(), keys.size())
                    .ok());
  };
  for (uint32_t round = 0; round < 20; ++round) {
    for (size_t i = 0; i < keys.size(); ++i) {
      keys[i] = (uint64_t{round + 1} << 40) + 2 * i + 1;  // odd: never loaded
      values[i] = ValueOf(keys[i], round);
    }
    get();
    for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(found[i], 0) << "round " << round;
    ASSERT_TRUE(table
                    .Put(reinterpret_cast<const uint8_t*>(keys.data()),
                         reinterpret_cast<const uint8_t*>(values.data()), keys.size())
                    .ok());
    get();
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(found[i], 1) << "round " << round << ", key " << i;
      ASSERT_EQ(answers[i], values[i]) << "round " << round << ", key " << i;
    }
    ASSERT_TRUE(
        table.Erase(reinterpret_cast<const uint8_t*>(keys.data()), erased.data(), keys.size())
            .ok());
    get();
    for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(found[i], 0) << "round " << round;
  }
  EXPECT_GT(table.resident_get_launches(), launches_before);
}

// Two writers rewrite every value round after round while two readers send
// small batches: each answer is a whole value of its key, of a round that
// is not older than the last round completed before the batch started.
TEST_P(ResidentGets, ReadersSeeWholeValuesWhileWritersUpdate) {
  SKIP_WITHOUT_DEVICE();
  TableHarness harness(std::string("resident-writers-") + gpu_test::ModeName(GetParam()),
                       Options(20000), GetParam());
  ASSERT_TRUE(harness.ok());
  GphashGpu& table = harness.table();
  const uint64_t loaded = 8000;
  Load(table, loaded);
  std::atomic<uint32_t> completed_round{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0}, batches{0};
  std::thread writer([&] {
    for (uint32_t round = 1; round <= 40; ++round) {
      // Two halves from two threads: a round is complete when both are.
      std::thread half([&] {
        std::vector<uint64_t> keys, values;
        for (uint64_t i = 0; i < loaded / 2; ++i) {
          keys.push_back(2 * (i + 1));
          values.push_back(ValueOf(keys.back(), round));
        }
        EXPECT_TRUE(table
                        .Put(reinterpret_cast<const uint8_t*>(keys.data()),
                             reinterpret_cast<const uint8_t*>(values.data()), keys.size())
                        .ok());
      });
      std::vector<uint64_t> keys, values;
      for (uint64_t i = loaded / 2; i < loaded; ++i) {
        keys.push_back(2 * (i + 1));
        values.push_back(ValueOf(keys.back(), round));
      }
      EXPECT_TRUE(table
                      .Put(reinterpret_cast<const uint8_t*>(keys.data()),
                           reinterpret_cast<const uint8_t*>(values.data()), keys.size())
                      .ok());
      half.join();
      completed_round = round;
    }
    stop = true;
  });
  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> keys(4096), values(4096);
    std::vector<uint8_t> found(4096);
    while (!stop) {
      const uint32_t floor = completed_round;
      for (auto& key : keys) key = 2 * (1 + rng() % loaded);
      if (!table
               .Get(reinterpret_cast<const uint8_t*>(keys.data()),
                    reinterpret_cast<uint8_t*>(values.data()), found.data(), keys.size())
               .ok()) {
        ++bad;
        return;
      }
      for (size_t i = 0; i < keys.size(); ++i) {
        if (found[i] != 1 || !IsValueOf(keys[i], values[i]) ||
            RoundOf(keys[i], values[i]) < floor) {
          ++bad;
        }
      }
      ++batches;
    }
  };
  std::thread reader_a(reader, 10), reader_b(reader, 11);
  writer.join();
  reader_a.join();
  reader_b.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(batches.load(), 10u);
  EXPECT_GE(table.resident_get_launches(), 1u);
}

// A reader keeps the kernel busy without pause while this thread frees and
// allocates device memory (cudaFree may wait for the whole device): every
// call returns, because the kernel ends its life after kLifetimeNs anyway.
TEST_P(ResidentGets, CudaFreeReturnsWhileReadersKeepItBusy) {
  SKIP_WITHOUT_DEVICE();
  TableHarness harness(std::string("resident-free-") + gpu_test::ModeName(GetParam()),
                       Options(20000), GetParam());
  ASSERT_TRUE(harness.ok());
  GphashGpu& table = harness.table();
  Load(table, 10000);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> batches{0};
  std::thread reader([&] {
    std::mt19937_64 rng(5);
    while (!stop) {
      CheckGets(table, rng, 10000, 1024, 0);
      ++batches;
    }
  });
  while (batches < 10) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) {
    void* memory = nullptr;
    ASSERT_EQ(cudaMalloc(&memory, 1 << 20), cudaSuccess);
    ASSERT_EQ(cudaFree(memory), cudaSuccess);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop = true;
  reader.join();
  // Each free waits at most one lifetime (2 ms) plus a launch; 50 of them
  // stay far below this bound, which only catches a hang.
  EXPECT_LT(seconds, 20.0);
  std::printf("50 cudaMalloc + cudaFree beside a busy resident kernel: %.1f ms; %llu batches\n",
              seconds * 1e3, static_cast<unsigned long long>(batches.load()));
}

INSTANTIATE_TEST_SUITE_P(Modes, ResidentGets,
                         testing::Values(GpuIndexMode::kMirror, GpuIndexMode::kStaged),
                         [](const testing::TestParamInfo<GpuIndexMode>& info) {
                           return std::string(gpu_test::ModeName(info.param));
                         });

}  // namespace
}  // namespace gpkv::gpu
