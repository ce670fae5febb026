// Gets on the volatile ordered table's GPU backend with and without the
// sort of a large get batch by its keys' leading bits (btree::gpu::GpuTuning
// sorted_get_min: the default, against never), on two trees built from the
// same keys in one process. For each tree size, 2^k random 8-byte keys with
// 8-byte values are written in batches of 2^20; then rounds of 16 batches of
// 2^20 gets of present keys, from device memory, alternate between the two
// trees, and every answer is checked against the keys' values. Prints the
// rate of each round and the median of each configuration.
// docs/bench/btree-gpu.md gives the machine and results.
//
// Usage: sorted_gets [k ... (default 20 22 24 26)]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tables/btree/gpu/backend.h"

namespace {

constexpr size_t kBatch = size_t{1} << 20;
constexpr int kBatchesPerRound = 16;
constexpr int kRounds = 5;

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

uint64_t ValueOf(uint64_t key) { return key * 0x9e3779b97f4a7c15ULL + 1; }

// One tree of `keys` under `tuning`, filled with every key's ValueOf.
std::unique_ptr<gpkv::btree::Backend> Build(const std::vector<uint64_t>& keys,
                                            const gpkv::btree::gpu::GpuTuning& tuning) {
  gpkv::TableOptions options;
  options.kind = gpkv::TableKind::kOrdered;
  options.key_size = 8;
  options.value_size = 8;
  auto created = gpkv::btree::gpu::CreateGpuBackend(options, 0, tuning);
  if (!Check(created.status(), "create")) return nullptr;
  std::unique_ptr<gpkv::btree::Backend> tree = std::move(*created);
  std::vector<uint64_t> values(kBatch);
  for (size_t first = 0; first < keys.size(); first += kBatch) {
    const size_t n = std::min(kBatch, keys.size() - first);
    for (size_t i = 0; i < n; ++i) values[i] = ValueOf(keys[first + i]);
    gpkv::btree::WriteBatch batch;
    batch.keys = reinterpret_cast<const uint8_t*>(&keys[first]);
    batch.values = reinterpret_cast<const uint8_t*>(values.data());
    batch.count = n;
    batch.timestamp = 1 + first / kBatch;
    if (!Check(tree->Write(batch), "write")) return nullptr;
  }
  return tree;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {20, 22, 24, 26};
  const gpkv::btree::gpu::GpuTuning sorted;  // the tables' default
  gpkv::btree::gpu::GpuTuning unsorted;
  unsorted.sorted_get_min = SIZE_MAX;

  uint64_t* device_keys = nullptr;
  uint64_t* device_values = nullptr;
  uint8_t* device_found = nullptr;
  const size_t all = kBatch * kBatchesPerRound;
  if (!Check(cudaMalloc(&device_keys, all * 8), "keys") ||
      !Check(cudaMalloc(&device_values, kBatch * 8), "values") ||
      !Check(cudaMalloc(&device_found, kBatch), "found")) {
    return 1;
  }
  std::printf("log2_keys  tree      round  M_gets_per_s\n");
  for (int log2_keys : sizes) {
    std::mt19937_64 random(log2_keys);
    std::vector<uint64_t> keys(size_t{1} << log2_keys);
    for (uint64_t& key : keys) key = random();
    auto trees = std::vector<std::unique_ptr<gpkv::btree::Backend>>();
    trees.push_back(Build(keys, sorted));
    trees.push_back(Build(keys, unsorted));
    if (trees[0] == nullptr || trees[1] == nullptr) return 1;
    // Present keys in random order, the same probes for both trees.
    std::vector<uint64_t> probes(all);
    for (uint64_t& probe : probes) probe = keys[random() % keys.size()];
    if (!Check(cudaMemcpy(device_keys, probes.data(), all * 8, cudaMemcpyHostToDevice), "probes")) {
      return 1;
    }
    std::vector<double> rates[2];
    std::vector<uint64_t> values(kBatch);
    std::vector<uint8_t> found(kBatch);
    for (int round = 0; round < kRounds; ++round) {
      for (int t = 0; t < 2; ++t) {
        const auto start = std::chrono::steady_clock::now();
        for (int b = 0; b < kBatchesPerRound; ++b) {
          if (!Check(trees[t]->Get(reinterpret_cast<const uint8_t*>(device_keys + b * kBatch),
                                   reinterpret_cast<uint8_t*>(device_values), device_found, kBatch,
                                   gpkv::btree::kLatest),
                     "get")) {
            return 1;
          }
        }
        if (!Check(cudaDeviceSynchronize(), "get")) return 1;
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        rates[t].push_back(all / seconds / 1e6);
        std::printf("%9d  %-8s  %5d  %12.0f\n", log2_keys, t == 0 ? "sorted" : "unsorted", round,
                    rates[t].back());
        // The last batch's answers.
        const int last = kBatchesPerRound - 1;
        if (!Check(cudaMemcpy(values.data(), device_values, kBatch * 8, cudaMemcpyDeviceToHost),
                   "values") ||
            !Check(cudaMemcpy(found.data(), device_found, kBatch, cudaMemcpyDeviceToHost),
                   "found")) {
          return 1;
        }
        for (size_t i = 0; i < kBatch; ++i) {
          const uint64_t key = probes[last * kBatch + i];
          if (found[i] != 1 || values[i] != ValueOf(key)) {
            std::fprintf(stderr, "wrong answer for get %zu of key %llu\n", i,
                         static_cast<unsigned long long>(key));
            return 1;
          }
        }
      }
    }
    for (auto& r : rates) std::sort(r.begin(), r.end());
    std::printf("median 2^%d keys: sorted %.0f, unsorted %.0f M gets/s, sorted/unsorted %.3f\n",
                log2_keys, rates[0][kRounds / 2], rates[1][kRounds / 2],
                rates[0][kRounds / 2] / rates[1][kRounds / 2]);
    std::fflush(stdout);
  }
  cudaFree(device_keys);
  cudaFree(device_values);
  cudaFree(device_found);
  return 0;
}
