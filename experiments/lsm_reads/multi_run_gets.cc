// Gets on an ordered table whose entries lie in several runs, on the CPU
// backend: 2^k - b random 8-byte keys put in batches of b = 2^16 leave one
// run on each of the levels 0 .. k - 17 (gpkv-bench's ordered tables of
// 2^k keys are one run). Prints the load time and three measurements each
// of 2^20 gets of present keys and of absent keys, in batches of 4096, on
// 2 worker threads. docs/bench/lsm-reads.md gives the machine and results.
//
// Usage: multi_run_gets [k (default 24)] [pool (default /dev/shm/...)]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gpkv/db.h"

namespace {

constexpr uint64_t kBatchEntries = 65536;  // b
constexpr uint64_t kGetBatch = 4096;
constexpr uint64_t kGets = uint64_t{1} << 20;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int log2_keys = argc > 1 ? std::atoi(argv[1]) : 24;
  const std::string path = argc > 2 ? argv[2] : "/dev/shm/gpkv-multi-run-gets.gpkv";
  const uint64_t keys_total = (uint64_t{1} << log2_keys) - kBatchEntries;
  ::unlink(path.c_str());
  gpkv::Options options;
  options.create_if_missing = true;
  options.pool_size = keys_total * 80 + (uint64_t{256} << 20);
  options.cpu_threads = 2;
  auto db = gpkv::DB::Open(path, options);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  gpkv::TableOptions table_options;
  table_options.kind = gpkv::TableKind::kOrdered;
  table_options.key_size = 8;
  table_options.value_size = 8;
  table_options.ordered.batch_entries = kBatchEntries;
  auto table = (*db)->CreateTable("o", table_options);
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", table.status().ToString().c_str());
    return 1;
  }
  std::mt19937_64 random(1);
  std::vector<uint64_t> present(keys_total);
  for (uint64_t& key : present) key = random() | 1;  // present keys are odd
  const auto load_start = std::chrono::steady_clock::now();
  for (uint64_t at = 0; at < keys_total; at += kBatchEntries) {
    const uint64_t count = std::min(kBatchEntries, keys_total - at);
    std::vector<uint64_t> keys(present.begin() + at, present.begin() + at + count);
    if (!(*table)->Put(keys, keys).ok()) return 2;
  }
  std::printf("loaded %llu keys in %.2f s\n", static_cast<unsigned long long>(keys_total),
              Seconds(load_start));
  for (int absent = 0; absent < 2; ++absent) {
    for (int round = 0; round < 3; ++round) {
      std::vector<uint64_t> keys(kGetBatch), values(kGetBatch);
      std::vector<uint8_t> found(kGetBatch);
      uint64_t hits = 0;
      double seconds = 0;
      for (uint64_t done = 0; done < kGets; done += kGetBatch) {
        for (uint64_t& key : keys) {
          key = absent ? (random() & ~uint64_t{1}) : present[random() % keys_total];
        }
        const auto start = std::chrono::steady_clock::now();
        if (!(*table)->Get(keys, values, found).ok()) return 3;
        seconds += Seconds(start);
        for (uint8_t f : found) hits += f;
      }
      std::printf("%s gets: %.2f M/s (found %llu of %llu)\n", absent ? "absent" : "present",
                  kGets / seconds / 1e6, static_cast<unsigned long long>(hits),
                  static_cast<unsigned long long>(kGets));
    }
  }
  db->reset();
  ::unlink(path.c_str());
  return 0;
}
