// Where the volatile ordered table's bulk build on the GPU spends its time:
// the first Put of 2^k random 8-byte keys with 8-byte values (device
// arrays) into a fresh tree ("cold": the tree's device buffers allocated on
// the way), against the same Put into a tree whose buffers are already that
// large ("warm": the same tree emptied by erasing every key and reclaiming),
// against the same Put through the public API (a volatile ordered table of
// a fresh pool on /dev/shm, as gpkv-bench's btree suite opens it), and
// against CUB's radix sort of the same keys with their 32-bit positions
// alone (what the build's sort costs at least). Each tree is checked to hold
// every key after its build. docs/bench/btree-gpu.md gives the machine and
// results.
//
// Usage: bulk_build [k ... (default 20 22 24 26)]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_radix_sort.cuh>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "tables/btree/gpu/backend.h"

namespace {

constexpr int kRepeats = 3;

bool Check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
  return false;
}

bool Check(const gpkv::Status& status, const char* what) {
  if (status.ok()) return true;
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  return false;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Milliseconds of one Write of the n puts; false on an error or a tree that
// does not then hold exactly n keys.
bool TimedPut(gpkv::btree::Backend& tree, const uint64_t* keys, const uint64_t* values, size_t n,
              uint64_t timestamp, double* ms) {
  gpkv::btree::WriteBatch batch;
  batch.keys = reinterpret_cast<const uint8_t*>(keys);
  batch.values = reinterpret_cast<const uint8_t*>(values);
  batch.count = n;
  batch.timestamp = timestamp;
  const auto start = Clock::now();
  if (!Check(tree.Write(batch), "put")) return false;
  *ms = Since(start);
  auto stats = tree.Stats();
  if (!Check(stats.status(), "stats")) return false;
  if (stats->keys != n) {
    std::fprintf(stderr, "the tree holds %llu keys, not %zu\n",
                 static_cast<unsigned long long>(stats->keys), n);
    return false;
  }
  return true;
}

// Milliseconds of the n puts into a volatile ordered table of a fresh pool
// through gpkv's API; false on an error or a table without n keys.
bool TimedApiPut(const uint64_t* keys, const uint64_t* values, size_t n, double* ms) {
  const std::string path = "/dev/shm/gpkv-bulk-build-experiment.gpkv";
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  gpkv::Options options;
  options.create_if_missing = true;
  options.backend = gpkv::Backend::kCuda;
  options.pool_size = uint64_t{64} << 20;
  bool ok = false;
  {
    auto db = gpkv::DB::Open(path, options);
    if (!Check(db.status(), "open")) return false;
    gpkv::TableOptions table_options;
    table_options.kind = gpkv::TableKind::kOrdered;
    table_options.durability = gpkv::Durability::kVolatile;
    table_options.key_size = 8;
    table_options.value_size = 8;
    table_options.expected_keys = n;
    auto table = (*db)->CreateTable("t", table_options);
    if (!Check(table.status(), "create table")) return false;
    const auto start = Clock::now();
    if (!Check((*table)->Put(gpkv::ConstBytes(keys, n * 8), gpkv::ConstBytes(values, n * 8)),
               "api put")) {
      return false;
    }
    *ms = Since(start);
    auto stats = (*table)->Stats();
    ok = Check(stats.status(), "api stats") && stats->keys == n;
    if (!ok) std::fprintf(stderr, "the table does not hold %zu keys\n", n);
  }
  std::filesystem::remove(path, ignored);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {20, 22, 24, 26};
  gpkv::TableOptions options;
  options.kind = gpkv::TableKind::kOrdered;
  options.key_size = 8;
  options.value_size = 8;
  std::printf(
      "log2_keys  cold_ms  warm_ms   api_ms  sort_ms  cold_M_per_s  warm_M_per_s  api_M_per_s  "
      "sort_M_per_s\n");
  for (int log2_keys : sizes) {
    const size_t n = size_t{1} << log2_keys;
    std::mt19937_64 random(log2_keys);
    std::vector<uint64_t> keys(n), values(n);
    for (size_t i = 0; i < n; ++i) {
      keys[i] = random();
      values[i] = keys[i] * 0x9e3779b97f4a7c15ULL + 1;
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    while (keys.size() < n) keys.push_back(keys.back() + 1);  // rare: stays unique
    std::shuffle(keys.begin(), keys.end(), random);
    uint64_t* device_keys = nullptr;
    uint64_t* device_values = nullptr;
    if (!Check(cudaMalloc(&device_keys, n * 8), "keys") ||
        !Check(cudaMalloc(&device_values, n * 8), "values") ||
        !Check(cudaMemcpy(device_keys, keys.data(), n * 8, cudaMemcpyHostToDevice), "keys") ||
        !Check(cudaMemcpy(device_values, values.data(), n * 8, cudaMemcpyHostToDevice), "values")) {
      return 1;
    }

    // Cold: a fresh tree each time.
    std::vector<double> cold;
    std::unique_ptr<gpkv::btree::Backend> tree;
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      tree.reset();
      auto created = gpkv::btree::gpu::CreateGpuBackend(options, 0);
      if (!Check(created.status(), "create")) return 1;
      tree = std::move(*created);
      double ms = 0;
      if (!TimedPut(*tree, device_keys, device_values, n, 1, &ms)) return 1;
      cold.push_back(ms);
    }

    // Warm: the last tree emptied (every key erased, the tombstones
    // reclaimed) and built again.
    std::vector<double> warm;
    uint64_t timestamp = 2;
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      gpkv::btree::WriteBatch erase;
      erase.keys = reinterpret_cast<const uint8_t*>(device_keys);
      erase.count = n;
      erase.timestamp = timestamp++;
      if (!Check(tree->Write(erase), "erase") ||
          !Check(tree->Reclaim(gpkv::btree::LiveSnapshots{}), "reclaim")) {
        return 1;
      }
      double ms = 0;
      if (!TimedPut(*tree, device_keys, device_values, n, timestamp++, &ms)) return 1;
      warm.push_back(ms);
    }
    tree.reset();

    // Through the API, a fresh pool and table each time.
    std::vector<double> api;
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      double ms = 0;
      if (!TimedApiPut(device_keys, device_values, n, &ms)) return 1;
      api.push_back(ms);
    }

    // CUB's sort of the keys with their positions, buffers made beforehand.
    uint64_t* sorted_keys = nullptr;
    uint32_t *order = nullptr, *sorted_order = nullptr;
    uint64_t* scratch_keys = nullptr;
    void* temp = nullptr;
    size_t temp_bytes = 0;
    if (!Check(cudaMalloc(&sorted_keys, n * 8), "sort") ||
        !Check(cudaMalloc(&order, n * 4), "sort") ||
        !Check(cudaMalloc(&sorted_order, n * 4), "sort") ||
        !Check(cudaMalloc(&scratch_keys, n * 8), "sort")) {
      return 1;
    }
    cub::DoubleBuffer<uint64_t> words(scratch_keys, sorted_keys);
    cub::DoubleBuffer<uint32_t> positions(order, sorted_order);
    if (!Check(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, words, positions,
                                               static_cast<int>(n)),
               "sort") ||
        !Check(cudaMalloc(&temp, temp_bytes), "sort")) {
      return 1;
    }
    std::vector<double> sort;
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      if (!Check(cudaMemcpy(scratch_keys, device_keys, n * 8, cudaMemcpyDeviceToDevice), "sort") ||
          !Check(cudaDeviceSynchronize(), "sort")) {
        return 1;
      }
      words = cub::DoubleBuffer<uint64_t>(scratch_keys, sorted_keys);
      positions = cub::DoubleBuffer<uint32_t>(order, sorted_order);
      const auto start = Clock::now();
      if (!Check(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, words, positions,
                                                 static_cast<int>(n)),
                 "sort") ||
          !Check(cudaDeviceSynchronize(), "sort")) {
        return 1;
      }
      sort.push_back(Since(start));
    }
    for (void* p : {static_cast<void*>(sorted_keys), static_cast<void*>(order),
                    static_cast<void*>(sorted_order), static_cast<void*>(scratch_keys), temp,
                    static_cast<void*>(device_keys), static_cast<void*>(device_values)}) {
      cudaFree(p);
    }

    const double c = Median(cold), w = Median(warm), a = Median(api), s = Median(sort);
    std::printf("%9d  %7.2f  %7.2f  %7.2f  %7.2f  %12.0f  %12.0f  %11.0f  %12.0f\n", log2_keys, c,
                w, a, s, n / c / 1e3, n / w / 1e3, n / a / 1e3, n / s / 1e3);
    std::printf("  cold runs:");
    for (double ms : cold) std::printf(" %.2f", ms);
    std::printf("  warm runs:");
    for (double ms : warm) std::printf(" %.2f", ms);
    std::printf("  api runs:");
    for (double ms : api) std::printf(" %.2f", ms);
    std::printf("  sort runs:");
    for (double ms : sort) std::printf(" %.2f", ms);
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
