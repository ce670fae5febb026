// The GPU B-tree's calls with their arrays in device memory: every answer
// (Get, Count, Range, RangeOnDevice, Successor, Predecessor, Erase's
// liveness) equals the same call's from host memory on a twin table fed the
// same batches, and a std::map oracle's, for the current contents and for
// snapshots taken between rounds of mixed puts and erases (repeated keys in
// a batch included), at every key size; arrays the kernels cannot use in
// place (not 8-byte aligned) answer the same. Readers on several threads
// (each on its own stream) see whole write batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "btree/btree_test_util.h"
#include "btree/gpu/device_environment.h"
#include "gpu/device_memory.h"

namespace gpkv::btreetest {
namespace {

// A copy of `host` in device memory, `offset` bytes into its allocation
// (offset 4: an array the kernels cannot read in place).
struct OnDevice {
  OnDevice(const std::vector<uint8_t>& host, size_t offset = 0) : offset(offset) {
    auto allocated = gpu::DeviceBytes::Allocate(host.size() + offset + 8);
    EXPECT_TRUE(allocated.ok()) << allocated.status().ToString();
    bytes = std::move(*allocated);
    EXPECT_TRUE(bytes.Fill(0xee).ok());
    if (!host.empty()) EXPECT_TRUE(bytes.CopyFromHost(host.data(), host.size(), offset).ok());
    size = host.size();
  }
  uint8_t* data() const { return bytes.data() + offset; }
  ConstBytes in() const { return ConstBytes(data(), size); }
  MutableBytes out() const { return MutableBytes(data(), size); }
  std::vector<uint8_t> Host() const {
    std::vector<uint8_t> host(size);
    EXPECT_TRUE(bytes.CopyToHost(host.data(), size, offset).ok());
    return host;
  }
  gpu::DeviceBytes bytes;
  size_t offset;
  size_t size;
};

std::vector<uint8_t> KeyBytes(const std::vector<WideKey>& keys, uint32_t key_size) {
  std::vector<uint8_t> bytes(keys.size() * key_size);
  for (size_t i = 0; i < keys.size(); ++i)
    std::memcpy(&bytes[i * key_size], keys[i].data(), key_size);
  return bytes;
}

// Twin tables on the GPU: one fed device arrays, one host arrays.
class Twins {
 public:
  Twins(const std::string& tag, uint32_t key_size, uint32_t value_size)
      : temp_("btree-gpu-device-" + tag), key_size_(key_size), value_size_(value_size) {
    auto opened =
        DB::Open(temp_.path(), testutil::DbOptions(uint64_t{16} << 20, 2, Backend::kCuda));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    db_ = std::move(*opened);
    auto device = db_->CreateTable("device", VolatileOrdered(key_size, value_size));
    auto host = db_->CreateTable("host", VolatileOrdered(key_size, value_size));
    EXPECT_TRUE(device.ok() && host.ok());
    device_ = *device;
    host_ = *host;
  }

  Table& device() { return *device_; }
  Table& host() { return *host_; }

  // The batch on both tables; the oracle takes the last put of a key.
  void Put(const std::vector<WideKey>& keys, WideOracle* oracle, std::mt19937_64& random) {
    const std::vector<uint8_t> key_bytes = KeyBytes(keys, key_size_);
    std::vector<uint8_t> values(keys.size() * value_size_);
    for (auto& byte : values) byte = random() & 0xff;
    const OnDevice device_keys(key_bytes), device_values(values);
    ASSERT_TRUE(device_->Put(device_keys.in(), device_values.in()).ok());
    ASSERT_TRUE(host_->Put(key_bytes, values).ok());
    for (size_t i = 0; i < keys.size(); ++i) {
      (*oracle)[keys[i]].assign(&values[i * value_size_], &values[(i + 1) * value_size_]);
    }
  }

  // The batch on both tables; the first occurrence of a key reports
  // whether it was live, its repeats 0.
  void Erase(const std::vector<WideKey>& keys, WideOracle* oracle) {
    const std::vector<uint8_t> key_bytes = KeyBytes(keys, key_size_);
    const OnDevice device_keys(key_bytes), device_erased(std::vector<uint8_t>(keys.size()));
    std::vector<uint8_t> erased(keys.size());
    ASSERT_TRUE(device_->Erase(device_keys.in(), device_erased.out()).ok());
    ASSERT_TRUE(host_->Erase(key_bytes, erased).ok());
    const std::vector<uint8_t> from_device = device_erased.Host();
    WideOracle before = *oracle;
    for (size_t i = 0; i < keys.size(); ++i) {
      const bool first = std::find(keys.begin(), keys.begin() + i, keys[i]) == keys.begin() + i;
      const bool expected = first && before.count(keys[i]) == 1;
      ASSERT_EQ(erased[i], expected ? 1 : 0) << "host erase " << i;
      ASSERT_EQ(from_device[i], erased[i]) << "device erase " << i;
      oracle->erase(keys[i]);
    }
  }

  // Every read of `probes` from device arrays (at `offset` into their
  // allocations) and from host arrays, through the snapshots (null: the
  // current contents), against `oracle`.
  void Check(const WideOracle& oracle, const std::vector<WideKey>& probes, size_t offset,
             const Snapshot* device_snapshot, const Snapshot* host_snapshot) {
    const size_t n = probes.size();
    const uint32_t k = key_size_, v = value_size_;
    BatchOptions on_device, on_host;
    on_device.snapshot = device_snapshot;
    on_host.snapshot = host_snapshot;
    const std::vector<uint8_t> keys = KeyBytes(probes, k);
    const OnDevice device_keys(keys, offset);

    // Get.
    {
      std::vector<uint8_t> values(n * v), found(n);
      const OnDevice device_values(values, offset), device_found(found, offset);
      ASSERT_TRUE(
          device_->Get(device_keys.in(), device_values.out(), device_found.out(), on_device).ok());
      ASSERT_TRUE(host_->Get(keys, values, found, on_host).ok());
      ASSERT_EQ(device_values.Host(), values);
      ASSERT_EQ(device_found.Host(), found);
      for (size_t i = 0; i < n; ++i) {
        auto it = oracle.find(probes[i]);
        ASSERT_EQ(found[i], it != oracle.end() ? 1 : 0) << "get " << i;
        if (it != oracle.end()) ASSERT_EQ(0, std::memcmp(&values[i * v], it->second.data(), v));
      }
      // Without the found array.
      const OnDevice device_values_only(std::vector<uint8_t>(n * v), offset);
      ASSERT_TRUE(device_->Get(device_keys.in(), device_values_only.out(), {}, on_device).ok());
      ASSERT_EQ(device_values_only.Host(), values);
    }

    // Successor and predecessor.
    for (const bool successor : {true, false}) {
      std::vector<uint8_t> neighbours(n * k), values(n * v), found(n);
      const OnDevice device_neighbours(neighbours, offset), device_values(values, offset),
          device_found(found, offset);
      if (successor) {
        ASSERT_TRUE(device_
                        ->Successor(device_keys.in(), device_neighbours.out(), device_values.out(),
                                    device_found.out(), on_device)
                        .ok());
        ASSERT_TRUE(host_->Successor(keys, neighbours, values, found, on_host).ok());
      } else {
        ASSERT_TRUE(device_
                        ->Predecessor(device_keys.in(), device_neighbours.out(),
                                      device_values.out(), device_found.out(), on_device)
                        .ok());
        ASSERT_TRUE(host_->Predecessor(keys, neighbours, values, found, on_host).ok());
      }
      ASSERT_EQ(device_found.Host(), found);
      const std::vector<uint8_t> device_neighbour_bytes = device_neighbours.Host();
      const std::vector<uint8_t> device_value_bytes = device_values.Host();
      for (size_t i = 0; i < n; ++i) {
        auto it = successor ? oracle.lower_bound(probes[i]) : oracle.upper_bound(probes[i]);
        bool has = successor ? it != oracle.end() : it != oracle.begin();
        if (has && !successor) --it;
        ASSERT_EQ(found[i], has ? 1 : 0) << (successor ? "successor " : "predecessor ") << i;
        if (!has) continue;
        ASSERT_TRUE(LoadKey(&neighbours[i * k], k) == it->first) << i;
        ASSERT_TRUE(LoadKey(&device_neighbour_bytes[i * k], k) == it->first) << i;
        ASSERT_EQ(0, std::memcmp(&values[i * v], it->second.data(), v)) << i;
        ASSERT_EQ(0, std::memcmp(&device_value_bytes[i * v], it->second.data(), v)) << i;
      }
    }

    // Count, Range and RangeOnDevice from each probe to the one 5 places
    // on in key order (and one query with lo > hi).
    const WideLess less{k / 8};
    std::vector<WideKey> sorted = probes;
    std::sort(sorted.begin(), sorted.end(), less);
    std::vector<WideKey> lows(n), highs(n);
    for (size_t i = 0; i < n; ++i) {
      lows[i] = sorted[i];
      highs[i] = sorted[std::min(i + 5, n - 1)];
    }
    if (n > 1) std::swap(lows[0], highs[0]);
    const std::vector<uint8_t> lo = KeyBytes(lows, k), hi = KeyBytes(highs, k);
    const OnDevice device_lo(lo, offset), device_hi(hi, offset);
    std::vector<uint64_t> counts(n);
    const OnDevice device_counts(std::vector<uint8_t>(n * 8), offset);
    ASSERT_TRUE(
        device_->Count(device_lo.in(), device_hi.in(), device_counts.out(), on_device).ok());
    ASSERT_TRUE(host_->Count(lo, hi, counts, on_host).ok());
    std::vector<uint8_t> device_count_bytes = device_counts.Host();
    ASSERT_EQ(0, std::memcmp(device_count_bytes.data(), counts.data(), n * 8));
    Table::RangeResults from_host, from_device;
    ASSERT_TRUE(host_->Range(lo, hi, &from_host, on_host).ok());
    ASSERT_TRUE(device_->Range(device_lo.in(), device_hi.in(), &from_device, on_device).ok());
    ASSERT_EQ(from_device.offsets, from_host.offsets);
    ASSERT_EQ(from_device.keys, from_host.keys);
    ASSERT_EQ(from_device.values, from_host.values);
    Table::DeviceRangeResults on_gpu;
    ASSERT_TRUE(device_->RangeOnDevice(device_lo.in(), device_hi.in(), &on_gpu, on_device).ok());
    ASSERT_EQ(on_gpu.queries, n);
    ASSERT_EQ(on_gpu.pairs, from_host.offsets[n]);
    std::vector<uint64_t> gpu_offsets(n + 1);
    std::vector<uint8_t> gpu_keys(on_gpu.pairs * k), gpu_values(on_gpu.pairs * v);
    ASSERT_TRUE(gpu::CopyDeviceToHost(gpu_offsets.data(), on_gpu.offsets, (n + 1) * 8).ok());
    ASSERT_TRUE(gpu::CopyDeviceToHost(gpu_keys.data(), on_gpu.keys, gpu_keys.size()).ok());
    ASSERT_TRUE(gpu::CopyDeviceToHost(gpu_values.data(), on_gpu.values, gpu_values.size()).ok());
    ASSERT_EQ(gpu_offsets, from_host.offsets);
    ASSERT_EQ(gpu_keys, from_host.keys);
    ASSERT_EQ(gpu_values, from_host.values);
    // The same results object again: its storage is reused, the answers
    // are the same.
    const void* storage = on_gpu.storage.get();
    ASSERT_TRUE(device_->RangeOnDevice(device_lo.in(), device_hi.in(), &on_gpu, on_device).ok());
    ASSERT_EQ(on_gpu.storage.get(), storage);
    ASSERT_EQ(on_gpu.pairs, from_host.offsets[n]);
    std::vector<uint8_t> again(on_gpu.pairs * k);
    ASSERT_TRUE(gpu::CopyDeviceToHost(again.data(), on_gpu.keys, again.size()).ok());
    ASSERT_EQ(again, from_host.keys);
    for (size_t i = 0; i < n; ++i) {
      uint64_t at = from_host.offsets[i];
      if (!less(highs[i], lows[i])) {
        for (auto it = oracle.lower_bound(lows[i]);
             it != oracle.end() && !less(highs[i], it->first); ++it) {
          ASSERT_LT(at, from_host.offsets[i + 1]) << "range " << i;
          ASSERT_TRUE(LoadKey(&from_host.keys[at * k], k) == it->first) << "range " << i;
          ASSERT_EQ(0, std::memcmp(&from_host.values[at * v], it->second.data(), v));
          ++at;
        }
      }
      ASSERT_EQ(at, from_host.offsets[i + 1]) << "range " << i;
      ASSERT_EQ(counts[i], at - from_host.offsets[i]) << "count " << i;
    }
  }

 private:
  testutil::TempPool temp_;
  const uint32_t key_size_;
  const uint32_t value_size_;
  std::unique_ptr<DB> db_;
  Table* device_ = nullptr;
  Table* host_ = nullptr;
};

// Keys of a small space (so that batches repeat keys and erases hit).
std::vector<WideKey> RandomKeys(size_t n, uint64_t space, uint32_t key_size,
                                std::mt19937_64& random) {
  std::vector<WideKey> keys(n);
  for (WideKey& key : keys) {
    for (uint32_t w = 0; w < key_size / 8; ++w) key[w] = random() % space;
  }
  return keys;
}

struct Shape {
  uint32_t key_size;
  uint32_t value_size;
};

class BtreeGpuDeviceBatches : public ::testing::TestWithParam<Shape> {};

TEST_P(BtreeGpuDeviceBatches, AnswerAsHostBatchesAndTheOracleWithSnapshots) {
  const Shape shape = GetParam();
  Twins twins("k" + std::to_string(shape.key_size) + "v" + std::to_string(shape.value_size),
              shape.key_size, shape.value_size);
  std::mt19937_64 random(shape.key_size * 131 + shape.value_size);
  const uint64_t space = shape.key_size == 8 ? 200000 : 60;
  WideOracle oracle(WideLess{shape.key_size / 8});
  // The first batch into the empty tree is the bulk build.
  ASSERT_NO_FATAL_FAILURE(
      twins.Put(RandomKeys(100000, space, shape.key_size, random), &oracle, random));
  struct Held {
    std::unique_ptr<Snapshot> device;
    std::unique_ptr<Snapshot> host;
    WideOracle contents;
  };
  std::vector<Held> held;
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_NO_FATAL_FAILURE(
        twins.Put(RandomKeys(30000, space, shape.key_size, random), &oracle, random));
    ASSERT_NO_FATAL_FAILURE(twins.Erase(RandomKeys(20000, space, shape.key_size, random), &oracle));
    if (round % 2 == 0) {
      auto device = twins.device().TakeSnapshot();
      auto host = twins.host().TakeSnapshot();
      ASSERT_TRUE(device.ok() && host.ok());
      held.push_back(Held{std::move(*device), std::move(*host), oracle});
    }
    if (round == 3) held.erase(held.begin());  // its versions reclaimed at the next write
    std::vector<WideKey> probes = RandomKeys(5000, space, shape.key_size, random);
    for (const auto& pair : oracle) {
      if (probes.size() >= 7000) break;
      if (random() % 16 == 0) probes.push_back(pair.first);
    }
    const size_t offset = round % 3 == 2 ? 4 : 0;
    ASSERT_NO_FATAL_FAILURE(twins.Check(oracle, probes, offset, nullptr, nullptr));
    for (const Held& snapshot : held) {
      ASSERT_NO_FATAL_FAILURE(twins.Check(snapshot.contents, probes, offset, snapshot.device.get(),
                                          snapshot.host.get()));
    }
  }
}

// Reader threads, each on its own stream, read device batches through a
// snapshot and the current contents while a writer puts batches that
// change every key: reads through the snapshot equal the oracle at the
// snapshot, reads of the current contents one of the writer's states.
TEST(BtreeGpuDeviceBatchesConcurrent, ReadersOnSeveralThreadsSeeWholeBatches) {
  testutil::TempPool temp("btree-gpu-device-concurrent");
  auto opened = DB::Open(temp.path(), testutil::DbOptions(uint64_t{16} << 20, 2, Backend::kCuda));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto created = (*opened)->CreateTable("t", VolatileOrdered());
  ASSERT_TRUE(created.ok());
  Table& table = **created;
  constexpr uint64_t kKeys = 1 << 16;
  // Keys 0, 2, 4, ...; round r puts value r * kKeys + key over every key.
  std::vector<uint64_t> keys(kKeys), values(kKeys);
  for (uint64_t i = 0; i < kKeys; ++i) keys[i] = 2 * i;
  auto round_values = [&](uint64_t round) {
    for (uint64_t i = 0; i < kKeys; ++i) values[i] = round * kKeys + keys[i];
  };
  round_values(0);
  ASSERT_TRUE(table.Put(keys, values).ok());
  auto snapshot = table.TakeSnapshot();
  ASSERT_TRUE(snapshot.ok());
  const std::vector<uint8_t> key_bytes(reinterpret_cast<const uint8_t*>(keys.data()),
                                       reinterpret_cast<const uint8_t*>(keys.data()) + kKeys * 8);
  const OnDevice device_keys(key_bytes);
  constexpr int kRounds = 20;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread writer([&] {
    std::vector<uint64_t> mine(kKeys);
    for (uint64_t round = 1; round <= kRounds; ++round) {
      for (uint64_t i = 0; i < kKeys; ++i) mine[i] = round * kKeys + keys[i];
      if (!table.Put(keys, mine).ok()) failures++;
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int reader = 0; reader < 4; ++reader) {
    readers.emplace_back([&, reader] {
      const OnDevice out{std::vector<uint8_t>(kKeys * 8)}, found{std::vector<uint8_t>(kKeys)};
      const std::vector<uint8_t> lo_bytes(key_bytes.begin(), key_bytes.begin() + 1024 * 8);
      std::vector<uint64_t> hi(1024);
      for (uint64_t i = 0; i < 1024; ++i) hi[i] = keys[i] + 14;  // 8 keys each
      const std::vector<uint8_t> hi_bytes(reinterpret_cast<const uint8_t*>(hi.data()),
                                          reinterpret_cast<const uint8_t*>(hi.data()) + 1024 * 8);
      const OnDevice device_lo(lo_bytes), device_hi(hi_bytes);
      Table::DeviceRangeResults ranges;
      int reads = 0;
      while (!done || reads < 3) {
        ++reads;
        BatchOptions options;
        const bool through_snapshot = (reads + reader) % 2 == 0;
        if (through_snapshot) options.snapshot = snapshot->get();
        if (!table.Get(device_keys.in(), out.out(), found.out(), options).ok()) {
          failures++;
          return;
        }
        const std::vector<uint8_t> value_bytes = out.Host(), found_bytes = found.Host();
        std::vector<uint64_t> got(kKeys);
        std::memcpy(got.data(), value_bytes.data(), kKeys * 8);
        // One round's values throughout: round 0 through the snapshot.
        const uint64_t round = got[0] / kKeys;
        for (uint64_t i = 0; i < kKeys; ++i) {
          if (found_bytes[i] != 1 || got[i] != round * kKeys + keys[i] ||
              (through_snapshot && round != 0)) {
            failures++;
            return;
          }
        }
        if (!table.RangeOnDevice(device_lo.in(), device_hi.in(), &ranges, options).ok()) {
          failures++;
          return;
        }
        std::vector<uint64_t> range_values(ranges.pairs);
        if (ranges.pairs != 1024 * 8 ||
            !gpu::CopyDeviceToHost(range_values.data(), ranges.values, ranges.pairs * 8).ok()) {
          failures++;
          return;
        }
        const uint64_t range_round = range_values[0] / kKeys;
        for (uint64_t i = 0; i < ranges.pairs; ++i) {
          if (range_values[i] / kKeys != range_round || (through_snapshot && range_round != 0)) {
            failures++;
            return;
          }
        }
      }
    });
  }
  writer.join();
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BtreeGpuDeviceBatches,
                         ::testing::Values(Shape{8, 8}, Shape{8, 3}, Shape{16, 12}, Shape{32, 40}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return "k" + std::to_string(info.param.key_size) + "v" +
                                  std::to_string(info.param.value_size);
                         });

}  // namespace
}  // namespace gpkv::btreetest
