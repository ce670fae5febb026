// Small get / put calls through the engine: p50 per call, registered and
// device arrays (experiment; run under ncu for kernel durations).
// Usage: engine_probe [keys] [reps] [table]; table: inplace (a persistent
// hash table in place, the default), logged (logged mode: 32 batches of
// 2^20 a log half, as gpkv-bench's) or volatile (the volatile hash table,
// the logged mode's index). Logged tables also print where their put
// batches' time went (the gphash.write-*-ns properties, per batch).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpkv/db.h"
using namespace gpkv;
double Now() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
#define CHECK(x)                                  \
  do {                                            \
    auto _s = (x);                                \
    if (!_s.ok()) {                               \
      std::printf("%s\n", _s.ToString().c_str()); \
      return 1;                                   \
    }                                             \
  } while (0)
int main(int argc, char** argv) {
  const uint64_t keys = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (1ull << 24);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3000;
  const std::string kind = argc > 3 ? argv[3] : "inplace";
  const char* path = "/dev/shm/probe7.gpkv";
  std::remove(path);
  Options options;
  options.create_if_missing = true;
  options.pool_size = keys * 96 + (256ull << 20);
  options.backend = Backend::kCuda;
  auto db = DB::Open(path, options);
  CHECK(db.status());
  TableOptions topt;
  topt.expected_keys = keys;
  if (kind == "logged") {
    topt.hash_log.batch_entries = uint64_t{1} << 20;
    topt.hash_log.log_batches = 32;
  } else if (kind == "volatile") {
    topt.durability = Durability::kVolatile;
  } else if (kind != "inplace") {
    std::printf("table: inplace, logged or volatile, not %s\n", kind.c_str());
    return 1;
  }
  auto t = (*db)->CreateTable("t", topt);
  CHECK(t.status());
  Table* table = *t;
  std::vector<uint64_t> k(keys), v(keys);
  for (uint64_t i = 0; i < keys; ++i) {
    k[i] = i * 0x9E3779B97F4A7C15ull + 1;
    v[i] = i;
  }
  for (uint64_t d = 0; d < keys; d += (1 << 20)) {
    uint64_t n = std::min<uint64_t>(1 << 20, keys - d);
    CHECK(table->Put(ConstBytes(reinterpret_cast<uint8_t*>(k.data() + d), n * 8),
                     ConstBytes(reinterpret_cast<uint8_t*>(v.data() + d), n * 8)));
  }
  const size_t n = 4096;
  std::vector<uint64_t> out(n);
  std::vector<uint8_t> found(n);
  CHECK((*db)->RegisterHostMemory(k.data(), keys * 8));
  CHECK((*db)->RegisterHostMemory(v.data(), keys * 8));
  CHECK((*db)->RegisterHostMemory(out.data(), n * 8));
  CHECK((*db)->RegisterHostMemory(found.data(), n));
  uint64_t* dk;
  uint64_t* dv;
  uint8_t* df;
  cudaMalloc(&dk, keys * 8);
  cudaMalloc(&dv, n * 8);
  cudaMalloc(&df, n);
  cudaMemcpy(dk, k.data(), keys * 8, cudaMemcpyHostToDevice);
  auto run = [&](const char* name, auto call) -> int {
    std::vector<double> ts;
    for (int r = 0; r < reps; ++r) {
      const uint64_t first = (uint64_t(r) * 7919 * n) % (keys - 2 * n);
      double a = Now();
      auto s = call(first);
      ts.push_back(Now() - a);
      if (!s.ok()) {
        std::printf("%s\n", s.ToString().c_str());
        return 1;
      }
    }
    std::sort(ts.begin(), ts.end());
    std::printf("%-40s p50 %6.2f us p10 %6.2f p90 %6.2f p99 %6.2f\n", name, ts[ts.size() / 2],
                ts[ts.size() / 10], ts[ts.size() * 9 / 10], ts[ts.size() * 99 / 100]);
    return 0;
  };
  // Microseconds per put batch of each write phase since the last call.
  std::vector<double> last(6, 0);
  auto phases = [&](const char* name) {
    auto stats = table->Stats();
    if (!stats.ok()) return;
    const char* names[] = {"gphash.write-batches",   "gphash.write-ns",
                           "gphash.write-record-ns", "gphash.write-publish-ns",
                           "gphash.write-sync-ns",   "gphash.write-index-ns"};
    std::vector<double> now(6);
    for (int i = 0; i < 6; ++i) now[i] = stats->Property(names[i]).value_or(0);
    const double batches = now[0] - last[0];
    if (batches > 0) {
      std::printf(
          "%-40s phases us/batch: total %6.2f record %6.2f publish %6.2f sync %6.2f "
          "index %6.2f (%0.f batches)\n",
          name, (now[1] - last[1]) / batches / 1e3, (now[2] - last[2]) / batches / 1e3,
          (now[3] - last[3]) / batches / 1e3, (now[4] - last[4]) / batches / 1e3,
          (now[5] - last[5]) / batches / 1e3, batches);
    }
    last = now;
  };
  phases("load");
  for (int round = 0; round < 2; ++round) {
    run("get 4096 registered", [&](uint64_t f) {
      return table->Get(ConstBytes(reinterpret_cast<uint8_t*>(k.data() + f), n * 8),
                        MutableBytes(reinterpret_cast<uint8_t*>(out.data()), n * 8),
                        MutableBytes(found.data(), n));
    });
    run("get 4096 device", [&](uint64_t f) {
      return table->Get(ConstBytes(reinterpret_cast<uint8_t*>(dk + f), n * 8),
                        MutableBytes(reinterpret_cast<uint8_t*>(dv), n * 8), MutableBytes(df, n));
    });
    run("get 2048 registered", [&](uint64_t f) {
      return table->Get(ConstBytes(reinterpret_cast<uint8_t*>(k.data() + f), n * 4),
                        MutableBytes(reinterpret_cast<uint8_t*>(out.data()), n * 4),
                        MutableBytes(found.data(), n / 2));
    });
    run("put 2048 registered", [&](uint64_t f) {
      return table->Put(ConstBytes(reinterpret_cast<uint8_t*>(k.data() + f), n * 4),
                        ConstBytes(reinterpret_cast<uint8_t*>(v.data() + f), n * 4));
    });
    phases("put 2048 registered");
    run("put 2048 device", [&](uint64_t f) {
      return table->Put(ConstBytes(reinterpret_cast<uint8_t*>(dk + f), n * 4),
                        ConstBytes(reinterpret_cast<uint8_t*>(dk + f + 1), n * 4));
    });
    phases("put 2048 device");
    run("A pair: get 2048 + put 2048 registered", [&](uint64_t f) {
      auto s = table->Get(ConstBytes(reinterpret_cast<uint8_t*>(k.data() + f), n * 4),
                          MutableBytes(reinterpret_cast<uint8_t*>(out.data()), n * 4),
                          MutableBytes(found.data(), n / 2));
      if (!s.ok()) return s;
      return table->Put(ConstBytes(reinterpret_cast<uint8_t*>(k.data() + f + n / 2), n * 4),
                        ConstBytes(reinterpret_cast<uint8_t*>(v.data() + f + n / 2), n * 4));
    });
    {
      std::vector<double> g, p;
      for (int r = 0; r < reps; ++r) {
        const uint64_t f = (uint64_t(r) * 7919 * n) % (keys - 2 * n);
        double a = Now();
        auto s = table->Get(ConstBytes(reinterpret_cast<uint8_t*>(k.data() + f), n * 4),
                            MutableBytes(reinterpret_cast<uint8_t*>(out.data()), n * 4),
                            MutableBytes(found.data(), n / 2));
        double b = Now();
        auto s2 = table->Put(ConstBytes(reinterpret_cast<uint8_t*>(k.data() + f + n / 2), n * 4),
                             ConstBytes(reinterpret_cast<uint8_t*>(v.data() + f + n / 2), n * 4));
        double c = Now();
        if (!s.ok() || !s2.ok()) return 1;
        g.push_back(b - a);
        p.push_back(c - b);
      }
      std::sort(g.begin(), g.end());
      std::sort(p.begin(), p.end());
      std::printf("%-40s get p50 %6.2f us, put p50 %6.2f us\n", "A pair, each call",
                  g[g.size() / 2], p[p.size() / 2]);
    }
    phases("A pairs");
  }
  for (uint64_t i = 0; i < n; ++i)
    if (found[i] != 1) {
      std::printf("miss at %llu\n", (unsigned long long)i);
      return 1;
    }
  db->reset();
  std::remove(path);
  return 0;
}
