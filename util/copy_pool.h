// util::CopyPool: large host memcpys split over a few threads of its own.
//
// Why: the GPU backend stages pageable batches through pinned buffers, and
// one thread copies at 10-12 GB/s where the link moves 50. The copy ran on
// an OpenMP team, so its speed followed the caller's OpenMP settings: with
// OMP_WAIT_POLICY=passive every chunk woke a sleeping team (a futex wake a
// thread), and pageable gets fell from 1.48 to 0.81 G/s on an H200
// (docs/bench/host-batches.md). These threads belong to gpkv: after a
// copy they spin a short while (kSpinMicros) for the next chunk of a
// pipelined batch, then sleep.
//
// How: the caller takes the first slice and the workers one each; slices
// are whole cache lines, the last one shorter, and together cover every
// byte. One copy runs at a time: a caller that finds the pool busy copies
// alone (it does not queue behind another table's batch). A batch of many
// copies holds a Session, which keeps the workers polling until it ends.
//
// Thread safety: Copy may be called from any thread. In a child of fork()
// the pool's threads do not exist, and Copy copies on the calling thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace gpkv::util {

class CopyPool {
 public:
  // Copies below this size run as one memcpy: waking workers costs more.
  static constexpr size_t kParallelBytes = size_t{1} << 19;
  // How long an idle worker polls for the next copy before it sleeps.
  static constexpr int kSpinMicros = 50;

  // A pool that copies on `threads` threads: the caller and threads - 1
  // workers (started here). threads <= 1: every copy is one memcpy.
  explicit CopyPool(int threads);
  ~CopyPool();
  CopyPool(const CopyPool&) = delete;
  CopyPool& operator=(const CopyPool&) = delete;

  // Copies [source, source + bytes) to target (the ranges do not overlap)
  // and returns when every byte is copied.
  void Copy(void* target, const void* source, size_t bytes);

  // While a Session lives, idle workers keep polling instead of sleeping (and
  // sleeping ones are woken at its start): a pipelined batch holds one across
  // its chunks, whose copies come further apart than kSpinMicros when the
  // device is the bound, so that none of them waits for workers to wake.
  class Session {
   public:
    explicit Session(CopyPool& pool);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

   private:
    CopyPool& pool_;
  };

  // Threads a copy uses when the pool is free (the caller included).
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // The process's pool for the GPU backends' staging copies, made by the
  // first call with `threads` threads (Options::copy_threads: 0 = half the
  // hardware threads, at most 8; otherwise at most the hardware threads);
  // later calls return that pool whatever their `threads`. The engine makes
  // it when a DB opens on the CUDA backend; the backends call Shared().
  // Never destroyed, so no copy at exit meets a destroyed pool.
  static CopyPool& Shared(int threads = 0);

 private:
  struct Job {
    uint8_t* target = nullptr;
    const uint8_t* source = nullptr;
    size_t bytes = 0;
    size_t slice = 0;  // bytes a thread copies (a multiple of 64)
  };

  void Work(int index);
  // Copies slice `index` of job_.
  void CopySlice(int index) const;

  std::vector<std::thread> workers_;
  const int owner_pid_;  // the process whose threads workers_ are
  std::mutex busy_;      // held by the caller whose copy the workers run

  // The job and its generation: a worker runs one slice of each generation.
  std::mutex mutex_;
  std::condition_variable wake_;
  Job job_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> remaining_{0};  // worker slices of the current job not done
  std::atomic<bool> stop_{false};  // set under mutex_ (the destructor)
  std::atomic<int> sessions_{0};   // Sessions alive
};

}  // namespace gpkv::util
