// The libcuckoo driver: libcuckoo::cuckoohash_map in DRAM, volatile, the
// ceiling a persistent table is measured against. Each batch is split into
// `threads` contiguous parts run by OpenMP threads (the gpkv CPU backend runs
// its batches with the same number of workers).
#include <omp.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <libcuckoo/cuckoohash_map.hh>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_driver.h"
#include "bench/gpkv_bench_load_factor.h"
#include "bench/gpkv_bench_workload.h"

namespace gpkv::bench {
namespace {

// Keys of 8 bytes are uint64_t; longer ones arrays of words. Values are byte
// arrays of the value size (uint64_t for 8).
template <uint32_t kBytes>
struct FixedBytes {
  std::array<uint64_t, (kBytes + 7) / 8> words;
  bool operator==(const FixedBytes& other) const { return words == other.words; }
};

template <uint32_t kBytes>
using Stored = std::conditional_t<kBytes == 8, uint64_t, FixedBytes<kBytes>>;

// A real hash (the table must not rely on the benchmark's keys being
// random already): splitmix64's finalizer, folded over the words.
struct KeyHasher {
  size_t operator()(uint64_t key) const { return Mix64(key); }
  template <uint32_t kBytes>
  size_t operator()(const FixedBytes<kBytes>& key) const {
    uint64_t h = 0;
    for (uint64_t word : key.words) h = Mix64(h ^ word);
    return h;
  }
};

template <uint32_t kBytes>
Stored<kBytes> Load(const uint8_t* bytes) {
  Stored<kBytes> out{};
  std::memcpy(&out, bytes, kBytes);
  return out;
}

template <uint32_t kBytes>
void Store(const Stored<kBytes>& in, uint8_t* bytes) {
  std::memcpy(bytes, &in, kBytes);
}

template <uint32_t kKeyBytes, uint32_t kValueBytes>
class CuckooDriver : public Driver {
 public:
  using Key = Stored<kKeyBytes>;
  using Value = Stored<kValueBytes>;
  using Map = libcuckoo::cuckoohash_map<Key, Value, KeyHasher>;

  CuckooDriver(uint64_t expected_keys, int threads)
      : map_(expected_keys > 0 ? expected_keys : libcuckoo::DEFAULT_SIZE), threads_(threads) {}

  Status Read(const uint8_t* keys, size_t n, uint8_t* values, uint8_t* found) override {
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (size_t i = 0; i < n; ++i) {
      Value value{};
      bool hit = map_.find(Load<kKeyBytes>(keys + i * kKeyBytes), value);
      Store<kValueBytes>(value, values + i * kValueBytes);
      found[i] = hit ? 1 : 0;
    }
    return Status::OK();
  }

  Status Write(const uint8_t* keys, const uint8_t* values, size_t n) override {
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (size_t i = 0; i < n; ++i) {
      map_.insert_or_assign(Load<kKeyBytes>(keys + i * kKeyBytes),
                            Load<kValueBytes>(values + i * kValueBytes));
    }
    return Status::OK();
  }

  Status Erase(const uint8_t* keys, size_t n, uint8_t* erased) override {
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (size_t i = 0; i < n; ++i) {
      erased[i] = map_.erase(Load<kKeyBytes>(keys + i * kKeyBytes)) ? 1 : 0;
    }
    return Status::OK();
  }

  std::vector<std::pair<std::string, std::string>> Facts() override {
    char load_factor[32];
    std::snprintf(load_factor, sizeof(load_factor), "%.4f", map_.load_factor());
    return {{"keys", std::to_string(map_.size())},
            {"slots", std::to_string(map_.capacity())},
            {"load_factor", load_factor},
            {"hashpower", std::to_string(map_.hashpower())}};
  }

 private:
  Map map_;
  int threads_;
};

template <uint32_t kKeyBytes>
Result<std::unique_ptr<Driver>> CreateForKey(const DriverConfig& config) {
  auto make = [&](auto value_tag) -> std::unique_ptr<Driver> {
    constexpr uint32_t kValueBytes = decltype(value_tag)::value;
    return std::make_unique<CuckooDriver<kKeyBytes, kValueBytes>>(config.expected_keys,
                                                                  config.threads);
  };
  switch (config.value_size) {
    case 8:
      return make(std::integral_constant<uint32_t, 8>{});
    case 16:
      return make(std::integral_constant<uint32_t, 16>{});
    case 32:
      return make(std::integral_constant<uint32_t, 32>{});
    case 64:
      return make(std::integral_constant<uint32_t, 64>{});
    case 128:
      return make(std::integral_constant<uint32_t, 128>{});
    default:
      return Status::Unsupported("libcuckoo driver: value size " +
                                 std::to_string(config.value_size) +
                                 " (built for 8, 16, 32, 64, 128)");
  }
}

}  // namespace

Result<std::unique_ptr<Driver>> CreateCuckooDriver(const DriverConfig& config) {
  switch (config.key_size) {
    case 8:
      return CreateForKey<8>(config);
    case 16:
      return CreateForKey<16>(config);
    case 32:
      return CreateForKey<32>(config);
    default:
      return Status::Unsupported("libcuckoo driver: key size " + std::to_string(config.key_size) +
                                 " (built for 8, 16, 32)");
  }
}

ResizeProbe ProbeCuckooLoadFactor(uint64_t expected_keys, uint64_t key_seed) {
  ResizeProbe probe;
  libcuckoo::cuckoohash_map<uint64_t, uint64_t, KeyHasher> map(expected_keys);
  const size_t hashpower = map.hashpower();
  for (uint64_t record = 0; record < 4 * expected_keys; ++record) {
    size_t keys = record;  // distinct keys, all inserted (size() walks every lock)
    size_t slots = map.capacity();
    uint64_t key = 0;
    EncodeKey(record, key_seed, sizeof(key), reinterpret_cast<uint8_t*>(&key));
    map.insert(key, record);
    if (map.hashpower() != hashpower) {
      probe.resized = true;
      probe.keys = keys;
      probe.slots = slots;
      probe.load_factor = static_cast<double>(keys) / static_cast<double>(slots);
      probe.inserted = record + 1;
      probe.precision = "1 key";
      break;
    }
  }
  return probe;
}

}  // namespace gpkv::bench
