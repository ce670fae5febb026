// gpu::ResidentGets: a get kernel that stays on the GPU between the small
// host batches of one table and takes them from a request slot in mapped host
// memory, so that a small batch costs no kernel launch and no stream
// synchronisation (issue #15 part 3).
//
// A 4096-get call through a launch spent ~5 us of host code (4.5 of it the
// launch) and ~17 us from launch to completion, where the gets themselves
// take a few microseconds (docs/bench/host-batches.md run 8). Here the host
// writes the batch's arrays into the slot and bumps a ticket; the kernel's
// poller (thread 0 of block 0) sees the ticket over the link, hands the
// request to the other blocks through device memory, every thread answers
// gets (thread::IndexGet, the mirror's get), and the last block to finish
// writes the ticket back as done. The caller spins on that word.
//
// The kernel is resident only while it is used: it exits after kIdleNs
// without a request and after kLifetimeNs in any case, and the next request
// launches it again. A CUDA call that waits for the whole device (cudaFree
// may) therefore waits at most that long, however busy the callers keep it.
// It runs on a non-blocking stream of its own, so the legacy default stream
// never waits for it.
//
// One request at a time: a caller that finds the server busy (TryGet returns
// false) runs its batch the usual way. The server answers with the view it
// was launched with; a request with a newer view generation (a resize,
// BuildView) stops it and launches it again. The caller holds the table's
// view lock (shared) around TryGet, as around any get.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "gpkv/status.h"
#include "tables/gphash/gpu/device_view.h"

namespace gpkv::gpu {

// The request slot and the answer word, in mapped pinned host memory.
struct ResidentControl {
  // Written by the host.
  const uint8_t* keys;
  uint8_t* values;
  uint8_t* found;  // may be null
  uint64_t count;
  uint64_t request_ticket;  // the ticket these fields belong to
  uint64_t posted;          // the request's ticket, stored last
  uint64_t quit;            // nonzero: the kernel exits at its next poll
  // Written by the GPU: block b stores the ticket to done[b] once its share
  // of the answers is visible to the host (its own fence: no ordering of one
  // multiprocessor's writes over the link against another's is assumed).
  uint64_t done[256];
};

// What the kernel's blocks share, in device memory.
struct ResidentDeviceState {
  unsigned long long epoch;  // the ticket the blocks serve now; kResidentQuit: exit
  const uint8_t* keys;
  uint8_t* values;
  uint8_t* found;
  uint64_t count;
  unsigned long long stale_reads;  // field reads that had to be repeated (diagnostic)
};

class ResidentGets {
 public:
  // Largest batch one request holds: the kernel's threads answer one get
  // each in one pass (larger batches run the usual way).
  static constexpr uint64_t kMaxOps = 8192;
  static constexpr uint32_t kBlockThreads = 64;
  static constexpr uint64_t kIdleNs = 200'000;        // exits after 200 us without a request
  static constexpr uint64_t kLifetimeNs = 2'000'000;  // and after 2 ms in any case

  // `where` names the table in errors.
  static Result<std::unique_ptr<ResidentGets>> Create(int device, const std::string& where);
  ~ResidentGets();
  ResidentGets(const ResidentGets&) = delete;
  ResidentGets& operator=(const ResidentGets&) = delete;

  // Answers the `count` gets (count <= kMaxOps) of `keys` into values and
  // found (may be null), as LaunchGet would, with `view` (generation
  // `view_generation`); keys, values and found must be readable and
  // writable by the kernel in place (device memory, or pinned / registered
  // host memory mapped at its own address; keys and values 8-byte aligned).
  // *served = false without doing anything when another caller holds the
  // server. REQUIRES: view.index_gets (an index in GPU memory).
  Status TryGet(const GphashDeviceView& view, uint64_t view_generation, const uint8_t* keys,
                uint8_t* values, uint8_t* found, uint64_t count, bool* served);

  // Stops the kernel (if it runs) and waits for it.
  Status Stop();

  // Launches so far (tests: a server relaunches after its idle time).
  uint64_t launches() const { return launches_.load(std::memory_order_relaxed); }

 private:
  ResidentGets(int device, std::string where) : device_(device), where_(std::move(where)) {}
  // Launches the kernel for `view`; it answers the tickets after `served`.
  Status Launch(const GphashDeviceView& view, uint64_t view_generation, uint64_t served);
  // Stop with busy_ held.
  Status StopLocked();
  // Waits for the answer to `ticket`, relaunching the kernel if it exited
  // before it saw the request.
  Status WaitDone(uint64_t ticket);
  // The lowest done[] word of the kernel's blocks.
  uint64_t Done() const;
  // True while the kernel's launch has not completed. Errors of the kernel
  // come back as a Status.
  Status Running(bool* running);

  const int device_;
  const std::string where_;
  std::mutex busy_;
  ResidentControl* control_ = nullptr;  // pinned, mapped
  ResidentDeviceState* state_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool launched_ = false;  // a launch may still run (guarded by busy_)
  GphashDeviceView view_{};
  uint64_t view_generation_ = 0;
  uint64_t next_ticket_ = 1;
  uint32_t blocks_ = 0;           // of the kernel
  uint64_t launched_at_ns_ = 0;   // steady clock at the last launch
  uint64_t last_request_ns_ = 0;  // ... and at the last answer
  std::atomic<uint64_t> launches_{0};
};

}  // namespace gpkv::gpu
