// util::CopyPool: every byte copied, none past the end, for any size and
// thread count; concurrent callers (one runs on the pool, the others alone)
// each get their own bytes; Sessions keep workers polling and let them sleep
// after; pools start and stop cleanly, idle or after sleeping. Run under TSan by the CI's
// concurrency stage.
#include "util/copy_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace gpkv::util {
namespace {

std::vector<uint8_t> RandomBytes(std::mt19937_64& rng, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  for (uint8_t& byte : out) byte = static_cast<uint8_t>(rng());
  return out;
}

// Copies `bytes` random bytes into a buffer with 64 guard bytes after it.
void ExpectCopies(CopyPool& pool, std::mt19937_64& rng, size_t bytes) {
  const std::vector<uint8_t> source = RandomBytes(rng, bytes);
  std::vector<uint8_t> target(bytes + 64, 0xa5);
  pool.Copy(target.data(), source.data(), bytes);
  EXPECT_EQ(std::vector<uint8_t>(target.begin(), target.begin() + bytes), source);
  EXPECT_EQ(std::vector<uint8_t>(target.begin() + bytes, target.end()),
            std::vector<uint8_t>(64, 0xa5));
}

TEST(CopyPool, CopiesEveryByteOfAnySizeOnAnyThreadCount) {
  std::mt19937_64 rng(17);
  for (int threads : {1, 2, 3, 8}) {
    CopyPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (size_t bytes :
         {size_t{0}, size_t{1}, size_t{63}, size_t{4097}, CopyPool::kParallelBytes - 1,
          CopyPool::kParallelBytes, CopyPool::kParallelBytes + 65, (size_t{3} << 20) + 7}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes on " + std::to_string(threads) + " threads");
      ExpectCopies(pool, rng, bytes);
    }
  }
}

// A worker that slept (past kSpinMicros) wakes for the next copy.
TEST(CopyPool, WorkersThatSleptWakeForTheNextCopy) {
  std::mt19937_64 rng(5);
  CopyPool pool(4);
  for (int round = 0; round < 3; ++round) {
    ExpectCopies(pool, rng, (size_t{2} << 20) + 13);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Sessions (several, nested, and across sleeps) keep copies right, and the
// workers sleep again once the last one ends.
TEST(CopyPool, CopiesInsideAndAfterSessions) {
  std::mt19937_64 rng(7);
  CopyPool pool(3);
  {
    CopyPool::Session outer(pool);
    ExpectCopies(pool, rng, (size_t{1} << 20) + 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    {
      CopyPool::Session inner(pool);
      ExpectCopies(pool, rng, (size_t{3} << 19) + 5);
    }
    ExpectCopies(pool, rng, size_t{1} << 20);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CopyPool::Session late(pool);  // wakes sleeping workers
  ExpectCopies(pool, rng, (size_t{1} << 20) + 9);
}

TEST(CopyPool, ConcurrentCallersEachGetTheirOwnBytes) {
  CopyPool pool(4);
  constexpr int kCallers = 4;
  constexpr int kRounds = 20;
  std::vector<std::thread> callers;
  std::vector<int> wrong(kCallers, 0);
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      std::mt19937_64 rng(100 + c);
      std::optional<CopyPool::Session> session;
      if (c % 2 == 0) session.emplace(pool);
      for (int round = 0; round < kRounds; ++round) {
        const size_t bytes = CopyPool::kParallelBytes + (rng() % (size_t{1} << 20));
        const std::vector<uint8_t> source = RandomBytes(rng, bytes);
        std::vector<uint8_t> target(bytes, 0);
        pool.Copy(target.data(), source.data(), bytes);
        if (target != source) ++wrong[c];
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(wrong, std::vector<int>(kCallers, 0));
}

TEST(CopyPool, IdlePoolsStopCleanly) {
  for (int i = 0; i < 10; ++i) CopyPool pool(3);
}

TEST(CopyPool, SharedPoolIsOneAndCopies) {
  EXPECT_EQ(&CopyPool::Shared(), &CopyPool::Shared());
  EXPECT_GE(CopyPool::Shared().threads(), 1);
  EXPECT_LE(CopyPool::Shared().threads(), 8);
  std::mt19937_64 rng(9);
  ExpectCopies(CopyPool::Shared(), rng, (size_t{1} << 20) + 3);
}

}  // namespace
}  // namespace gpkv::util
