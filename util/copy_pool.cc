#include "util/copy_pool.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace gpkv::util {
namespace {

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

CopyPool::CopyPool(int threads) : owner_pid_(static_cast<int>(::getpid())) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { Work(i); });
}

CopyPool::~CopyPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

CopyPool& CopyPool::Shared(int threads) {
  static CopyPool* pool = [threads] {
    const int hardware = static_cast<int>(std::thread::hardware_concurrency());
    const int chosen = threads > 0 ? std::clamp(threads, 1, std::max(1, hardware))
                                   : std::clamp(hardware / 2, 1, 8);
    return new CopyPool(chosen);
  }();
  return *pool;
}

CopyPool::Session::Session(CopyPool& pool) : pool_(pool) {
  if (pool_.sessions_.fetch_add(1, std::memory_order_acq_rel) == 0) {
    { std::lock_guard<std::mutex> lock(pool_.mutex_); }  // a worker between check and wait
    pool_.wake_.notify_all();
  }
}

CopyPool::Session::~Session() { pool_.sessions_.fetch_sub(1, std::memory_order_acq_rel); }

void CopyPool::CopySlice(int index) const {
  const size_t begin = std::min(job_.bytes, static_cast<size_t>(index) * job_.slice);
  const size_t end = std::min(job_.bytes, begin + job_.slice);
  if (end > begin) std::memcpy(job_.target + begin, job_.source + begin, end - begin);
}

void CopyPool::Copy(void* target, const void* source, size_t bytes) {
  std::unique_lock<std::mutex> busy(busy_, std::defer_lock);
  if (bytes < kParallelBytes || workers_.empty() || static_cast<int>(::getpid()) != owner_pid_ ||
      !busy.try_lock()) {
    std::memcpy(target, source, bytes);
    return;
  }
  const size_t share = (bytes + threads() - 1) / threads();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_.target = static_cast<uint8_t*>(target);
    job_.source = static_cast<const uint8_t*>(source);
    job_.bytes = bytes;
    job_.slice = (share + 63) / 64 * 64;  // rounded up: the slices cover every byte
    remaining_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();  // no system call when every worker is still polling
  CopySlice(0);
  while (remaining_.load(std::memory_order_acquire) != 0) Pause();
}

void CopyPool::Work(int index) {
  uint64_t seen = 0;
  for (;;) {
    // Poll for the next generation while a Session lives and kSpinMicros
    // after, then sleep.
    auto spin_end = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
    bool fresh = false;
    for (int polls = 0; !fresh; ++polls) {
      fresh = generation_.load(std::memory_order_acquire) != seen;
      if (fresh || stop_.load(std::memory_order_relaxed)) break;
      if ((polls & 63) == 63) {
        const auto now = std::chrono::steady_clock::now();
        if (sessions_.load(std::memory_order_relaxed) != 0) {
          spin_end = now + std::chrono::microseconds(kSpinMicros);
        } else if (now >= spin_end) {
          break;
        }
      }
      Pause();
    }
    if (!fresh && !stop_.load(std::memory_order_relaxed)) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stop_.load(std::memory_order_relaxed) ||
               sessions_.load(std::memory_order_relaxed) != 0 ||
               generation_.load(std::memory_order_acquire) != seen;
      });
      if (!stop_.load(std::memory_order_relaxed) &&
          generation_.load(std::memory_order_acquire) == seen) {
        continue;  // woken by a Session: poll
      }
    }
    if (stop_.load(std::memory_order_acquire)) return;
    // The job of this generation: its fields were written before the
    // generation was bumped (release), and stay until every worker is done.
    seen = generation_.load(std::memory_order_acquire);
    CopySlice(index);
    remaining_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace gpkv::util
