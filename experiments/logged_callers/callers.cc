// Concurrent callers on the CPU backend: `callers` threads each run batches
// of `batch` operations on one persistent hash table, in place and in logged
// mode (batches of 4096 a log record, M a log half), and the rate is
// measured by the wall clock over all callers: LOAD (puts of new keys),
// YCSB A (each batch half gets, half updates of loaded keys, uniform) and
// YCSB C (gets). The ycsb suite of gpkv-bench runs one caller; this is the
// shape in which concurrent write batches queue behind each other.
//
// Usage: callers [keys] [ops] [batch] [callers] [cpu_threads] [log_batches] [pool]
// (defaults 4M 4M 4096 2 2 256 /dev/shm/gpkv-callers.gpkv).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gpkv/db.h"

namespace {

using gpkv::Status;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Config {
  uint64_t keys = uint64_t{4} << 20;
  uint64_t ops = uint64_t{4} << 20;
  uint64_t batch = 4096;
  int callers = 2;
  int cpu_threads = 2;
  uint32_t log_batches = 256;
  std::string pool = "/dev/shm/gpkv-callers.gpkv";
};

// Runs `batches` batches, numbered 0.., spread over the callers (each takes
// the next number); returns the seconds from the first to the last, or -1
// after printing the first error.
template <typename RunBatch>
double RunCallers(const Config& config, uint64_t batches, const RunBatch& run_batch) {
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  auto caller = [&] {
    for (uint64_t number = next++; number < batches && !failed; number = next++) {
      const Status status = run_batch(number);
      if (!status.ok()) {
        if (!failed.exchange(true)) std::fprintf(stderr, "%s\n", status.ToString().c_str());
      }
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < config.callers; ++c) threads.emplace_back(caller);
  for (std::thread& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return failed ? -1 : seconds;
}

bool RunMode(const Config& config, bool logged) {
  std::remove(config.pool.c_str());
  gpkv::Options options;
  options.create_if_missing = true;
  options.pool_size = config.keys * 160 + (uint64_t{512} << 20);
  options.backend = gpkv::Backend::kCpu;
  options.cpu_threads = config.cpu_threads;
  auto db = gpkv::DB::Open(config.pool, options);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return false;
  }
  gpkv::TableOptions table_options;
  table_options.expected_keys = config.keys;
  if (logged) {
    table_options.hash_log.log_batches = config.log_batches;
    table_options.hash_log.batch_entries = 4096;
  }
  auto table = (*db)->CreateTable("t", table_options);
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", table.status().ToString().c_str());
    return false;
  }
  gpkv::Table& t = **table;
  const uint64_t batch = config.batch;
  auto report = [&](const char* workload, uint64_t ops, double seconds) {
    if (seconds < 0) return false;
    std::printf("%-8s %-5s callers %2d threads %2d batch %6llu: %8.3f M ops/s (%.2f s)\n",
                logged ? "logged" : "in-place", workload, config.callers, config.cpu_threads,
                static_cast<unsigned long long>(batch), ops / seconds / 1e6, seconds);
    std::fflush(stdout);
    return true;
  };
  // LOAD: key i is SplitMix64(i), value i.
  const uint64_t load_batches = (config.keys + batch - 1) / batch;
  double seconds = RunCallers(config, load_batches, [&](uint64_t number) {
    const uint64_t first = number * batch, n = std::min(batch, config.keys - first);
    std::vector<uint64_t> keys(n), values(n);
    for (uint64_t i = 0; i < n; ++i) {
      keys[i] = SplitMix64(first + i);
      values[i] = first + i;
    }
    return t.Put(keys, values);
  });
  if (!report("LOAD", config.keys, seconds)) return false;
  const uint64_t op_batches = (config.ops + batch - 1) / batch;
  for (const char* workload : {"A", "C"}) {
    const bool updates = workload[0] == 'A';
    seconds = RunCallers(config, op_batches, [&](uint64_t number) {
      // Half gets, half updates (A) or all gets (C), of uniform loaded keys.
      const uint64_t gets = updates ? batch / 2 : batch, puts = batch - gets;
      std::vector<uint64_t> keys(batch), values(batch);
      std::vector<uint8_t> found(gets);
      uint64_t random = SplitMix64(number ^ (uint64_t{updates ? 0xau : 0xcu} << 40));
      for (uint64_t i = 0; i < batch; ++i) {
        random = SplitMix64(random);
        keys[i] = SplitMix64(random % config.keys);
        values[i] = random;
      }
      Status status = t.Get(gpkv::ConstBytes(keys.data(), gets * 8),
                            gpkv::MutableBytes(values.data(), gets * 8), found);
      if (status.ok() && puts != 0) {
        status = t.Put(gpkv::ConstBytes(keys.data() + gets, puts * 8),
                       gpkv::ConstBytes(values.data() + gets, puts * 8));
      }
      return status;
    });
    if (!report(workload, op_batches * batch, seconds)) return false;
  }
  const Status closed = (*db)->Close();
  std::remove(config.pool.c_str());
  return closed.ok();
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (argc > 1) config.keys = std::strtoull(argv[1], nullptr, 0);
  if (argc > 2) config.ops = std::strtoull(argv[2], nullptr, 0);
  if (argc > 3) config.batch = std::strtoull(argv[3], nullptr, 0);
  if (argc > 4) config.callers = std::atoi(argv[4]);
  if (argc > 5) config.cpu_threads = std::atoi(argv[5]);
  if (argc > 6) config.log_batches = static_cast<uint32_t>(std::strtoul(argv[6], nullptr, 0));
  if (argc > 7) config.pool = argv[7];
  if (config.keys == 0 || config.batch == 0 || config.callers < 1) {
    std::fprintf(stderr,
                 "usage: callers [keys] [ops] [batch] [callers] [cpu_threads] "
                 "[log_batches] [pool]\n");
    return 1;
  }
  for (bool logged : {false, true}) {
    if (!RunMode(config, logged)) return 3;
  }
  return 0;
}
