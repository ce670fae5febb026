// Helpers of the slab_hash::gpu::GpuBackend device tests: SKIP_WITHOUT_DEVICE, a
// table, an oracle (std::unordered_map of key bytes to value bytes) with the
// batch semantics of slab_hash/backend.h, and batch builders. Header-only; for
// tests, not the library.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpu/device_memory.h"
#include "tables/slab_hash/gpu/backend.h"
#include "tables/slab_hash/stats.h"

// Skips the current test when no CUDA device is usable (CI has none).
#define SKIP_WITHOUT_DEVICE()                            \
  do {                                                   \
    ::gpkv::Status usable = ::gpkv::gpu::DeviceUsable(); \
    if (!usable.ok()) GTEST_SKIP() << usable.ToString(); \
  } while (0)

namespace gpkv::slab_hash::gpu_test {

inline std::unique_ptr<gpu::GpuBackend> MakeTable(uint32_t key_size, uint32_t value_size,
                                                  uint64_t expected_keys) {
  TableOptions options;
  options.durability = Durability::kVolatile;
  options.key_size = key_size;
  options.value_size = value_size;
  options.expected_keys = expected_keys;
  auto table = gpu::GpuBackend::Create(options);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? std::move(table.value()) : nullptr;
}

inline std::string Bytes(const uint8_t* bytes, size_t size) {
  return std::string(reinterpret_cast<const char*>(bytes), size);
}

// splitmix64: a stream of well-mixed words.
inline uint64_t Mix(uint64_t state) {
  state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// value_size bytes derived from `seed` (every byte depends on it).
inline void FillValue(uint64_t seed, uint8_t* value, uint32_t value_size) {
  for (uint32_t at = 0; at < value_size; at += 8) {
    const uint64_t word = Mix(seed + at);
    std::memcpy(value + at, &word, std::min<uint32_t>(8, value_size - at));
  }
}

// Key bytes: `count` keys from a universe of distinct keys, key i of the
// universe being UniverseKey(i).
inline void UniverseKey(uint64_t salt, uint64_t index, uint8_t* key, uint32_t key_size) {
  // Word 0 is a bijection of the index (distinct keys); the others vary too.
  uint64_t word0 = index * 0x9e3779b97f4a7c15ULL ^ salt;
  std::memcpy(key, &word0, 8);
  for (uint32_t at = 8; at < key_size; at += 8) {
    const uint64_t word = Mix(index ^ (salt + at));
    std::memcpy(key + at, &word, 8);
  }
}

// The table's contract for batches, on a std::unordered_map.
class Oracle {
 public:
  Oracle(uint32_t key_size, uint32_t value_size) : key_size_(key_size), value_size_(value_size) {}

  // Last put of a key wins.
  void Put(const std::vector<uint8_t>& keys, const std::vector<uint8_t>& values) {
    const size_t count = keys.size() / key_size_;
    for (size_t i = 0; i < count; ++i) {
      map_[Bytes(&keys[i * key_size_], key_size_)] = Bytes(&values[i * value_size_], value_size_);
    }
  }
  // The first erase of a key reports it.
  std::vector<uint8_t> Erase(const std::vector<uint8_t>& keys) {
    const size_t count = keys.size() / key_size_;
    std::vector<uint8_t> erased(count);
    for (size_t i = 0; i < count; ++i) {
      erased[i] = map_.erase(Bytes(&keys[i * key_size_], key_size_)) != 0 ? 1 : 0;
    }
    return erased;
  }
  // Expects table answers (values, found) for `keys`.
  void ExpectGets(const std::vector<uint8_t>& keys, const std::vector<uint8_t>& values,
                  const std::vector<uint8_t>& found, const std::string& what) const {
    const size_t count = keys.size() / key_size_;
    size_t wrong = 0;
    const std::string zeros(value_size_, '\0');
    for (size_t i = 0; i < count; ++i) {
      auto it = map_.find(Bytes(&keys[i * key_size_], key_size_));
      const bool expected = it != map_.end();
      const std::string got = Bytes(&values[i * value_size_], value_size_);
      if (found[i] != (expected ? 1 : 0) || got != (expected ? it->second : zeros)) {
        if (++wrong <= 5) {
          ADD_FAILURE() << what << ": get " << i << " found " << int(found[i]) << ", expected "
                        << expected << (got == (expected ? it->second : zeros) ? "" : " (value)");
        }
      }
    }
    EXPECT_EQ(wrong, 0u) << what;
  }
  // Expects Scan to visit exactly the oracle's pairs.
  void ExpectScan(gpu::GpuBackend& table, const std::string& what) const {
    size_t visited = 0, wrong = 0;
    std::unordered_map<std::string, int> seen;
    const Status status = table.Scan([&](const uint8_t* key, const uint8_t* value) {
      ++visited;
      const std::string name = Bytes(key, key_size_);
      auto it = map_.find(name);
      if (it == map_.end() || it->second != Bytes(value, value_size_) || ++seen[name] > 1) {
        ++wrong;
      }
      return true;
    });
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(wrong, 0u) << what;
    EXPECT_EQ(visited, map_.size()) << what;
  }
  size_t size() const { return map_.size(); }
  const std::unordered_map<std::string, std::string>& map() const { return map_; }

 private:
  uint32_t key_size_;
  uint32_t value_size_;
  std::unordered_map<std::string, std::string> map_;
};

// A device copy of a host vector (and back).
struct DeviceCopy {
  gpkv::gpu::DeviceBytes bytes;
  static DeviceCopy Of(const std::vector<uint8_t>& host, size_t extra = 0) {
    auto allocated = gpkv::gpu::DeviceBytes::Allocate(host.size() + extra + 8);
    EXPECT_TRUE(allocated.ok());
    DeviceCopy copy{std::move(allocated.value())};
    if (!host.empty()) EXPECT_TRUE(copy.bytes.CopyFromHost(host.data(), host.size(), extra).ok());
    return copy;
  }
};

}  // namespace gpkv::slab_hash::gpu_test
