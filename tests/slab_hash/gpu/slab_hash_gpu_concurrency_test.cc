// slab_hash::gpu::GpuBackend called from several host threads at once: each
// thread on its own keys against its own oracle (so that every answer is
// known; small gets from pinned memory among its batches, run in place or
// copied), and threads that share keys, where every value read must be one a
// writer wrote for that key, whole (never a mix of two writes). Device
// tests: skipped when no CUDA device is usable (label `gpu`).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/device_memory.h"
#include "gpu/host_memory.h"
#include "slab_hash_gpu_test_util.h"
#include "tables/slab_hash/gpu/backend.h"

namespace gpkv::slab_hash::gpu_test {
namespace {

constexpr int kThreads = 4;

// Keys of thread t: its number in the top byte, so threads never share one.
void ThreadKey(int thread, uint64_t index, uint8_t* key, uint32_t key_size) {
  const uint64_t word0 = (uint64_t(thread) << 56) | (Mix(index) >> 8);
  std::memcpy(key, &word0, 8);
  for (uint32_t at = 8; at < key_size; at += 8) {
    const uint64_t word = Mix(index * 31 + at);
    std::memcpy(key + at, &word, 8);
  }
}

class SlabHashGpuThreads : public ::testing::TestWithParam<std::pair<uint32_t, uint32_t>> {};

TEST_P(SlabHashGpuThreads, ThreadsOnTheirOwnKeysEachMatchTheirOracle) {
  SKIP_WITHOUT_DEVICE();
  const auto [key_size, value_size] = GetParam();
  auto table = MakeTable(key_size, value_size, 1 << 12);  // grows while the threads run
  ASSERT_NE(table, nullptr);
  std::vector<Oracle> oracles(kThreads, Oracle(key_size, value_size));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t]() {
      Oracle& oracle = oracles[t];
      std::mt19937_64 random(900 + t);
      auto stream = gpkv::gpu::DeviceStream::Create();
      if (!stream.ok()) {
        ++failures;
        return;
      }
      void* on = t % 2 == 0 ? stream->get() : nullptr;  // half order after a stream
      auto pinned = gpkv::gpu::PinnedBytes::Allocate(4096 * (key_size + value_size + 1));
      if (!pinned.ok()) {
        ++failures;
        return;
      }
      constexpr uint64_t kUniverse = 300000;
      constexpr size_t kBatch = 50000;
      auto pick = [&](size_t count) {
        std::vector<uint8_t> keys(count * key_size);
        for (size_t i = 0; i < count; ++i) {
          ThreadKey(t, random() % kUniverse, &keys[i * key_size], key_size);
        }
        return keys;
      };
      for (int round = 0; round < 12; ++round) {
        const std::string what = "thread " + std::to_string(t) + " round " + std::to_string(round);
        std::vector<uint8_t> keys = pick(kBatch), values(kBatch * value_size);
        for (size_t i = 0; i < kBatch; ++i)
          FillValue(random(), &values[i * value_size], value_size);
        if (!table->Put(keys.data(), values.data(), kBatch, on).ok()) ++failures;
        oracle.Put(keys, values);
        keys = pick(kBatch / 4);
        std::vector<uint8_t> erased(kBatch / 4);
        if (!table->Erase(keys.data(), erased.data(), erased.size(), on).ok()) ++failures;
        if (erased != oracle.Erase(keys)) {
          ++failures;
          ADD_FAILURE() << what << ": erased flags";
        }
        if (round % 3 == 2) {
          // A mixed batch of distinct keys (answers known whatever the order).
          std::vector<uint64_t> indices(kUniverse);
          std::iota(indices.begin(), indices.end(), 0);
          std::shuffle(indices.begin(), indices.end(), random);
          constexpr size_t kMixed = 20000;
          std::vector<uint8_t> ops(kMixed), mixed_keys(kMixed * key_size),
              mixed_values(kMixed * value_size), results(kMixed);
          for (size_t i = 0; i < kMixed; ++i) {
            ops[i] = static_cast<uint8_t>(i % 3);  // search, replace, delete
            ThreadKey(t, indices[i], &mixed_keys[i * key_size], key_size);
            FillValue(random(), &mixed_values[i * value_size], value_size);
          }
          const std::vector<uint8_t> written = mixed_values;
          if (!table
                   ->Mixed(ops.data(), mixed_keys.data(), mixed_values.data(), results.data(),
                           kMixed, on)
                   .ok()) {
            ++failures;
          }
          std::vector<uint8_t> put_keys, put_values, erase_keys, search_keys, search_values,
              search_found;
          for (size_t i = 0; i < kMixed; ++i) {
            const uint8_t* key = &mixed_keys[i * key_size];
            if (ops[i] == 0) {
              search_keys.insert(search_keys.end(), key, key + key_size);
              search_values.insert(search_values.end(), &mixed_values[i * value_size],
                                   &mixed_values[(i + 1) * value_size]);
              search_found.push_back(results[i]);
            } else if (ops[i] == 1) {
              put_keys.insert(put_keys.end(), key, key + key_size);
              put_values.insert(put_values.end(), &written[i * value_size],
                                &written[(i + 1) * value_size]);
            } else {
              erase_keys.insert(erase_keys.end(), key, key + key_size);
            }
          }
          oracle.ExpectGets(search_keys, search_values, search_found, what + " mixed searches");
          oracle.Put(put_keys, put_values);
          oracle.Erase(erase_keys);
        }
        keys = pick(kBatch);
        std::vector<uint8_t> got(kBatch * value_size), found(kBatch);
        if (!table->Get(keys.data(), got.data(), found.data(), kBatch, on).ok()) ++failures;
        oracle.ExpectGets(keys, got, found, what);
        // Small gets from pinned memory: in place when no other get is in
        // flight, copied when one is.
        for (int small = 0; small < 8; ++small) {
          constexpr size_t kSmall = 4096;
          keys = pick(kSmall);
          uint8_t* pinned_keys = pinned->data();
          uint8_t* pinned_got = pinned_keys + kSmall * key_size;
          uint8_t* pinned_found = pinned_got + kSmall * value_size;
          std::memcpy(pinned_keys, keys.data(), keys.size());
          if (!table->Get(pinned_keys, pinned_got, pinned_found, kSmall, on).ok()) ++failures;
          oracle.ExpectGets(keys, std::vector<uint8_t>(pinned_got, pinned_found),
                            std::vector<uint8_t>(pinned_found, pinned_found + kSmall),
                            what + " small pinned gets");
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  // The table holds the union of the oracles.
  Oracle all(key_size, value_size);
  for (const Oracle& oracle : oracles) {
    std::vector<uint8_t> keys, values;
    for (const auto& [key, value] : oracle.map()) {
      keys.insert(keys.end(), key.begin(), key.end());
      values.insert(values.end(), value.begin(), value.end());
    }
    all.Put(keys, values);
  }
  all.ExpectScan(*table, "after the threads");
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, all.size());
  EXPECT_GE(stats->rehashes, 1u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SlabHashGpuThreads,
                         ::testing::Values(std::make_pair(8u, 8u), std::make_pair(16u, 40u),
                                           std::make_pair(8u, 128u)));

// ---- shared keys

// The value writer `writer` writes for a key in its round `round`: the first
// word names (writer, round), every other byte follows from it and the key,
// so a reader can tell a whole value from a mix of two.
void SharedValue(const uint8_t* key, uint32_t key_size, uint32_t writer, uint32_t round,
                 uint8_t* value, uint32_t value_size) {
  uint64_t key_word = 0;
  std::memcpy(&key_word, key, 8);
  const uint64_t name = (uint64_t{writer} << 32) | round;
  uint8_t full[128];
  FillValue(Mix(key_word ^ name), full, 128);
  if (value_size >= 16) {
    std::memcpy(full, &name, 8);
  } else {
    // Short values: the name in the high half, a check of key and name below.
    const uint64_t word = (uint64_t{writer} << 56) | (uint64_t{round & 0xffffff} << 32) |
                          (Mix(key_word ^ name) & 0xffffffffULL);
    std::memcpy(full, &word, 8);
  }
  std::memcpy(value, full, value_size);
  (void)key_size;
}

// True if `value` is one SharedValue wrote for `key`.
bool IsWrittenValue(const uint8_t* key, uint32_t key_size, const uint8_t* value,
                    uint32_t value_size) {
  uint64_t word = 0;
  std::memcpy(&word, value, std::min<uint32_t>(8, value_size));
  uint32_t writer, round;
  if (value_size >= 16) {
    writer = static_cast<uint32_t>(word >> 32);
    round = static_cast<uint32_t>(word);
  } else {
    writer = static_cast<uint32_t>(word >> 56);
    round = static_cast<uint32_t>(word >> 32) & 0xffffff;
  }
  uint8_t expected[128];
  SharedValue(key, key_size, writer, round, expected, value_size);
  return std::memcmp(expected, value, value_size) == 0;
}

class SlabHashGpuSharedKeys : public ::testing::TestWithParam<std::pair<uint32_t, uint32_t>> {};

TEST_P(SlabHashGpuSharedKeys, ReadersSeeAWholeValueSomeWriterWrote) {
  SKIP_WITHOUT_DEVICE();
  const auto [key_size, value_size] = GetParam();
  auto table = MakeTable(key_size, value_size, 1 << 14);
  ASSERT_NE(table, nullptr);
  constexpr size_t kKeys = 20000;
  std::vector<uint8_t> keys(kKeys * key_size), values(kKeys * value_size);
  for (size_t i = 0; i < kKeys; ++i) {
    UniverseKey(23, i, &keys[i * key_size], key_size);
    SharedValue(&keys[i * key_size], key_size, 0, 0, &values[i * value_size], value_size);
  }
  ASSERT_TRUE(table->Put(keys.data(), values.data(), kKeys, nullptr).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> reads{0};
  // Writers start once both readers have read, so reads overlap the writes
  // however the threads are scheduled.
  std::atomic<int> readers_started{0};
  auto wait_for_readers = [&] {
    while (readers_started.load() < 2) std::this_thread::yield();
  };
  std::vector<std::thread> threads;
  // Writers: Put batches of every key (in their own order, with repeats).
  for (uint32_t writer = 1; writer <= 2; ++writer) {
    threads.emplace_back([&, writer]() {
      wait_for_readers();
      std::mt19937_64 random(writer);
      std::vector<uint8_t> batch_keys(kKeys * key_size), batch_values(kKeys * value_size);
      for (uint32_t round = 1; round <= 30; ++round) {
        for (size_t i = 0; i < kKeys; ++i) {
          const size_t pick = random() % kKeys;
          std::memcpy(&batch_keys[i * key_size], &keys[pick * key_size], key_size);
          SharedValue(&keys[pick * key_size], key_size, writer, round,
                      &batch_values[i * value_size], value_size);
        }
        if (!table->Put(batch_keys.data(), batch_values.data(), kKeys, nullptr).ok()) ++failures;
      }
    });
  }
  // A mixed writer: searches and replaces of distinct shared keys in one launch.
  threads.emplace_back([&]() {
    wait_for_readers();
    std::mt19937_64 random(3);
    std::vector<size_t> order(kKeys);
    std::iota(order.begin(), order.end(), 0);
    std::vector<uint8_t> ops(kKeys), batch_keys(kKeys * key_size), batch_values(kKeys * value_size),
        results(kKeys);
    for (uint32_t round = 1; round <= 30; ++round) {
      std::shuffle(order.begin(), order.end(), random);
      for (size_t i = 0; i < kKeys; ++i) {
        ops[i] = static_cast<uint8_t>(i % 2 == 0 ? gpu::MixedOp::kSearch : gpu::MixedOp::kReplace);
        std::memcpy(&batch_keys[i * key_size], &keys[order[i] * key_size], key_size);
        SharedValue(&batch_keys[i * key_size], key_size, 3, round, &batch_values[i * value_size],
                    value_size);
      }
      if (!table
               ->Mixed(ops.data(), batch_keys.data(), batch_values.data(), results.data(), kKeys,
                       nullptr)
               .ok()) {
        ++failures;
      }
      for (size_t i = 0; i < kKeys; i += 2) {
        if (results[i] != 1 || !IsWrittenValue(&batch_keys[i * key_size], key_size,
                                               &batch_values[i * value_size], value_size)) {
          ++failures;
        }
      }
    }
  });
  // Readers: every key is always there, with a whole value.
  for (int reader = 0; reader < 2; ++reader) {
    threads.emplace_back([&]() {
      std::vector<uint8_t> got(kKeys * value_size), found(kKeys);
      bool counted = false;  // this reader has told the writers it started
      while (!stop.load()) {
        if (!table->Get(keys.data(), got.data(), found.data(), kKeys, nullptr).ok()) ++failures;
        for (size_t i = 0; i < kKeys; ++i) {
          if (found[i] != 1 ||
              !IsWrittenValue(&keys[i * key_size], key_size, &got[i * value_size], value_size)) {
            ++failures;
          }
        }
        reads += kKeys;
        if (!counted) {
          readers_started.fetch_add(1);
          counted = true;
        }
        if (!table->Stats().ok()) ++failures;
      }
    });
  }
  for (size_t i = 0; i < 3; ++i) threads[i].join();
  stop = true;
  for (size_t i = 3; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(reads.load(), 0u);
  size_t scanned = 0, wrong = 0;
  ASSERT_TRUE(table
                  ->Scan([&](const uint8_t* key, const uint8_t* value) {
                    ++scanned;
                    if (!IsWrittenValue(key, key_size, value, value_size)) ++wrong;
                    return true;
                  })
                  .ok());
  EXPECT_EQ(scanned, kKeys);
  EXPECT_EQ(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SlabHashGpuSharedKeys,
                         ::testing::Values(std::make_pair(8u, 8u), std::make_pair(8u, 32u),
                                           std::make_pair(32u, 100u)));

}  // namespace
}  // namespace gpkv::slab_hash::gpu_test
