// The concurrent-history run shared by the CPU test
// (concurrent_history_test.cc) and its GPU twin
// (gpu/concurrent_history_gpu_test.cc): host threads send put, erase and get
// batches to one table that starts small (so it resizes meanwhile), and a
// per-key history checker (history_checker.h) checks that every read returns
// the value of an overlapping or the latest preceding write, never a torn
// one; then the pool verifies clean. Header-only; for tests.
//
// Environment: GPKV_CONCURRENCY_BATCHES (batches per thread, default 4096),
// GPKV_CONCURRENCY_CPU_THREADS (workers per batch, default 2; the TSan run
// uses 1 because libgomp is not instrumented).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "concurrency/history_checker.h"
#include "gpkv/db.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::concurrency {

inline uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 0);
}

inline uint64_t Mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Value bytes of write `id` to `key`: the id, then bytes derived from both.
inline void EncodeValue(uint64_t id, uint64_t key, uint8_t* out, uint32_t value_size) {
  uint64_t word = id;
  for (uint32_t i = 0; i < value_size; i += 8) {
    std::memcpy(out + i, &word, std::min<uint32_t>(8, value_size - i));
    word = Mix(word ^ key ^ i);
  }
}

inline uint64_t DecodeValue(uint64_t key, const uint8_t* bytes, uint32_t value_size) {
  uint64_t id = 0;
  std::memcpy(&id, bytes, std::min<uint32_t>(8, value_size));
  if (id == kAbsent) return kTorn;
  uint8_t expected[128];
  EncodeValue(id, key, expected, value_size);
  return std::memcmp(expected, bytes, value_size) == 0 ? id : kTorn;
}

struct RunConfig {
  uint32_t value_size = 8;
  int host_threads = 4;
  uint64_t batches_per_thread = 4096;
  uint32_t batch = 256;
  uint64_t key_space = 1 << 14;
  int cpu_threads = 2;
  Backend backend = Backend::kCpu;
};

struct ThreadLog {
  std::vector<Event> writes;
  std::vector<Event> reads;
  std::string error;
};

inline void RunThread(Table& table, const RunConfig& config, int thread,
                      std::atomic<uint64_t>& clock, ThreadLog& log) {
  std::mt19937_64 random(1000 + thread);
  const uint32_t value_size = config.value_size;
  std::vector<uint64_t> keys(config.batch);
  std::vector<uint8_t> values(config.batch * value_size);
  std::vector<uint8_t> found(config.batch);
  std::vector<uint64_t> ids(config.batch);
  uint64_t next_id = (uint64_t(thread) + 1) << 40;
  std::vector<uint8_t> chosen(config.key_space);
  std::vector<uint64_t> indexes(config.batch);
  for (uint64_t b = 0; b < config.batches_per_thread; ++b) {
    // Distinct keys within a batch (duplicates would resolve within it).
    for (uint32_t i = 0; i < config.batch; ++i) {
      do indexes[i] = random() % config.key_space;
      while (chosen[indexes[i]]);
      chosen[indexes[i]] = 1;
      keys[i] = Mix(indexes[i]);
    }
    for (uint64_t index : indexes) chosen[index] = 0;
    uint32_t kind = random() % 100;
    Status status;
    uint64_t invoke, respond;
    if (kind < 40) {
      for (uint32_t i = 0; i < config.batch; ++i) {
        ids[i] = ++next_id;
        EncodeValue(ids[i], keys[i], &values[i * value_size], value_size);
      }
      invoke = clock.fetch_add(1) + 1;
      status = table.Put(keys, values);
      respond = clock.fetch_add(1) + 1;
      for (uint32_t i = 0; i < config.batch; ++i) {
        log.writes.push_back(Event{keys[i], ids[i], invoke, respond});
      }
    } else if (kind < 55) {
      invoke = clock.fetch_add(1) + 1;
      status = table.Erase(keys);
      respond = clock.fetch_add(1) + 1;
      for (uint32_t i = 0; i < config.batch; ++i) {
        log.writes.push_back(Event{keys[i], kAbsent, invoke, respond});
      }
    } else {
      invoke = clock.fetch_add(1) + 1;
      status = table.Get(keys, values, found);
      respond = clock.fetch_add(1) + 1;
      for (uint32_t i = 0; i < config.batch; ++i) {
        uint64_t id =
            found[i] ? DecodeValue(keys[i], &values[i * value_size], value_size) : kAbsent;
        log.reads.push_back(Event{keys[i], id, invoke, respond});
      }
    }
    if (!status.ok()) {
      log.error = status.ToString();
      return;
    }
  }
}

inline void RunHistory(const RunConfig& config, const char* label) {
  testutil::TempPool temp("history-" + std::to_string(std::hash<std::string>()(label)));
  Options options;
  options.create_if_missing = true;
  options.pool_size = 64 << 20;
  options.backend = config.backend;
  options.cpu_threads = config.cpu_threads;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions table_options;
  table_options.value_size = config.value_size;
  table_options.expected_keys = 64;  // resizes while the threads run
  auto table = (*db)->CreateTable("history", table_options);
  ASSERT_TRUE(table.ok()) << table.status().ToString();

  std::atomic<uint64_t> clock{0};
  std::vector<ThreadLog> logs(config.host_threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < config.host_threads; ++t) {
    threads.emplace_back(RunThread, std::ref(**table), std::cref(config), t, std::ref(clock),
                         std::ref(logs[t]));
  }
  for (std::thread& thread : threads) thread.join();
  for (const ThreadLog& log : logs) ASSERT_TRUE(log.error.empty()) << log.error;

  // The final state is read once more, after every write returned.
  HistoryChecker checker;
  for (const ThreadLog& log : logs) {
    checker.AddWrites(log.writes);
    checker.AddReads(log.reads);
  }
  {
    std::vector<uint64_t> keys(config.key_space);
    for (uint64_t i = 0; i < config.key_space; ++i) keys[i] = Mix(i);
    std::vector<uint8_t> values(keys.size() * config.value_size), found(keys.size());
    uint64_t invoke = clock.fetch_add(1) + 1;
    ASSERT_TRUE((*table)->Get(keys, values, found).ok());
    uint64_t respond = clock.fetch_add(1) + 1;
    for (size_t i = 0; i < keys.size(); ++i) {
      uint64_t id = found[i]
                        ? DecodeValue(keys[i], &values[i * config.value_size], config.value_size)
                        : kAbsent;
      checker.AddRead(Event{keys[i], id, invoke, respond});
    }
  }
  uint64_t violation_count = 0;
  std::vector<Violation> violations = checker.Check(&violation_count);
  auto resizes = (*table)->GetProperty("gphash.resizes");
  ASSERT_TRUE(resizes.ok()) << resizes.status().ToString();
  std::printf(
      "[crash totals] concurrency (%s): %llu operations checked (%llu reads, %llu writes) from "
      "%d host threads x %d workers, %llu violations, %llu resizes during the run\n",
      label, static_cast<unsigned long long>(checker.reads() + checker.writes()),
      static_cast<unsigned long long>(checker.reads()),
      static_cast<unsigned long long>(checker.writes()), config.host_threads, config.cpu_threads,
      static_cast<unsigned long long>(violation_count), static_cast<unsigned long long>(*resizes));
  std::fflush(stdout);
  for (const Violation& v : violations) {
    ADD_FAILURE() << "key " << std::hex << v.read.key << std::dec << " read value id "
                  << v.read.value_id << " in [" << v.read.invoke << ", " << v.read.respond
                  << "]: " << v.why << "\nwrites of the key around it:\n"
                  << checker.Around(v.read.key, v.read.invoke, v.read.respond, 16);
  }
  EXPECT_EQ(violation_count, 0u);
  EXPECT_GT(*resizes, 0.0) << "the table never resized during the concurrent run";
  db->reset();
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
}

inline RunConfig ConfigFromEnvironment(uint32_t value_size, uint64_t key_space = 1 << 14) {
  RunConfig config;
  config.value_size = value_size;
  config.key_space = key_space;
  config.batches_per_thread = EnvOr("GPKV_CONCURRENCY_BATCHES", config.batches_per_thread);
  config.cpu_threads = static_cast<int>(EnvOr("GPKV_CONCURRENCY_CPU_THREADS", 2));
  return config;
}

}  // namespace gpkv::concurrency
