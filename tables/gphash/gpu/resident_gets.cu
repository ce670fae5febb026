// gpu::ResidentGets (resident_gets.h): the resident get kernel and its host
// side. The kernel's protocol:
//   - thread 0 of block 0 polls control->posted (over the link); on a new
//     ticket it copies the request into ResidentDeviceState and publishes
//     the ticket as state->epoch; on quit, idle or lifetime it publishes
//     kResidentQuit instead;
//   - thread 0 of every other block waits for state->epoch to move;
//   - every thread answers its gets of the request (grid-stride) and fences
//     its answers to the system; thread 0 of each block then stores the
//     ticket to its block's control->done word.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>

#include "gpu/cuda_check.h"
#include "gpu/device_memory.h"
#include "tables/gphash/gpu/kernel_common.cuh"
#include "tables/gphash/gpu/resident_gets.h"
#include "tables/gphash/gpu/thread.cuh"

namespace gpkv::gpu {
namespace {

constexpr unsigned long long kResidentQuit = ~0ull;

__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

template <typename T>
__device__ __forceinline__ T Volatile(const T* address) {
  return *const_cast<const volatile T*>(address);
}

// Thread 0 of block 0: the next ticket posted after `served`, with its
// request copied to *state (fenced before the ticket), or kResidentQuit.
__device__ unsigned long long PollRequest(ResidentControl* control, ResidentDeviceState* state,
                                          unsigned long long served, uint64_t started,
                                          uint64_t last_request) {
  for (;;) {
    const unsigned long long posted = Volatile(&control->posted);
    if (posted != served) {
      // The request's fields were stored before its ticket; read until they
      // name it.
      for (;;) {
        __threadfence_system();
        state->keys = Volatile(&control->keys);
        state->values = Volatile(&control->values);
        state->found = Volatile(&control->found);
        state->count = Volatile(&control->count);
        __threadfence_system();
        if (Volatile(&control->request_ticket) == posted) break;
        if (atomicAdd(&state->stale_reads, 1ull) > (1ull << 20)) return kResidentQuit;
      }
      __threadfence();  // the fields before the epoch
      return posted;
    }
    if (Volatile(&control->quit) != 0) return kResidentQuit;
    const uint64_t now = GlobalTimerNs();
    if (now - last_request > ResidentGets::kIdleNs || now - started > ResidentGets::kLifetimeNs) {
      return kResidentQuit;
    }
  }
}

template <int kKeyWords, int kSlots>
__global__ void __launch_bounds__(ResidentGets::kBlockThreads)
    ResidentGetKernel(GphashDeviceView view, ResidentControl* control, ResidentDeviceState* state,
                      unsigned long long served) {
  __shared__ unsigned long long epoch_shared;
  __shared__ const uint8_t* keys_shared;
  __shared__ uint8_t* values_shared;
  __shared__ uint8_t* found_shared;
  __shared__ uint64_t count_shared;
  const uint64_t started = GlobalTimerNs();
  uint64_t last_request = started;
  for (;;) {
    if (threadIdx.x == 0) {
      unsigned long long epoch;
      if (blockIdx.x == 0) {
        epoch = PollRequest(control, state, served, started, last_request);
        atomicExch(&state->epoch, epoch);
        last_request = GlobalTimerNs();
      } else {
        while ((epoch = Volatile(&state->epoch)) == served) __nanosleep(100);
        __threadfence();  // the request's fields after the epoch
      }
      epoch_shared = epoch;
      if (epoch != kResidentQuit) {
        keys_shared = Volatile(&state->keys);
        values_shared = Volatile(&state->values);
        found_shared = Volatile(&state->found);
        count_shared = Volatile(&state->count);
      }
    }
    __syncthreads();
    const unsigned long long epoch = epoch_shared;
    if (epoch == kResidentQuit) return;
    // The request's batch starts after every write the host finished before
    // posting it. The kernel outlives many batches, and its multiprocessor's
    // L1 keeps what earlier ones read: keys (the caller's staging is reused)
    // and slot words are read strong, past L1.
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    const uint64_t count = count_shared;
    const uint64_t threads = uint64_t{gridDim.x} * blockDim.x;
    bool answered = false;
    for (uint64_t op = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; op < count; op += threads) {
      warp::Key<kKeyWords> key;
      const auto* words = reinterpret_cast<const uint64_t*>(keys_shared + op * 8 * kKeyWords);
#pragma unroll
      for (int w = 0; w < kKeyWords; ++w) key.words[w] = Volatile(&words[w]);
      uint64_t value = 0;
      const bool hit = thread::IndexGet<kKeyWords, kSlots, /*kWeakSlotWords=*/false>(
          view, key, warp::HashOf(key, view.hash_seed), &value);
      warp::StoreValue(values_shared + op * view.value_size, hit ? value : 0, view.value_size);
      if (found_shared != nullptr) found_shared[op] = hit ? 1 : 0;
      answered = true;
    }
    if (answered) __threadfence_system();  // this thread's answers before done
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();
      *reinterpret_cast<volatile uint64_t*>(&control->done[blockIdx.x]) = epoch;
    }
    served = epoch;
  }
}

template <int kKeyWords>
Status LaunchResidentKernel(const GphashDeviceView& view, unsigned int blocks,
                            ResidentControl* control, ResidentDeviceState* state,
                            unsigned long long served, cudaStream_t stream) {
  constexpr uint32_t kThreads = ResidentGets::kBlockThreads;
  switch (view.slots_per_bucket) {
    case 4:
      ResidentGetKernel<kKeyWords, 4>
          <<<blocks, kThreads, 0, stream>>>(view, control, state, served);
      break;
    case 8:
      ResidentGetKernel<kKeyWords, 8>
          <<<blocks, kThreads, 0, stream>>>(view, control, state, served);
      break;
    case 16:
      ResidentGetKernel<kKeyWords, 16>
          <<<blocks, kThreads, 0, stream>>>(view, control, state, served);
      break;
    default:
      return Status::InvalidArgument("GPU gets support 4, 8 or 16 slots per bucket, not " +
                                     std::to_string(view.slots_per_bucket));
  }
  return CheckLaunch("ResidentGetKernel");
}

// One spin of a wait loop (x86: pause, so the sibling hyperthread runs).
inline void CpuRelax() {
#if defined(__x86_64__) && !defined(__CUDA_ARCH__)
  asm volatile("pause");
#endif
}

uint64_t SteadyNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

Result<std::unique_ptr<ResidentGets>> ResidentGets::Create(int device, const std::string& where) {
  std::unique_ptr<ResidentGets> server(new ResidentGets(device, where));
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device), where + ": cudaSetDevice");
  void* control = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaHostAlloc(&control, sizeof(ResidentControl), cudaHostAllocMapped | cudaHostAllocPortable),
      where + ": cudaHostAlloc of the resident gets' request slot");
  server->control_ = static_cast<ResidentControl*>(control);
  *server->control_ = ResidentControl{};
  void* state = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&state, sizeof(ResidentDeviceState)),
                            where + ": cudaMalloc of the resident gets' state");
  server->state_ = static_cast<ResidentDeviceState*>(state);
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&server->stream_, cudaStreamNonBlocking),
                            where + ": cudaStreamCreateWithFlags for the resident gets");
  return Result<std::unique_ptr<ResidentGets>>(std::move(server));
}

ResidentGets::~ResidentGets() {
  cudaSetDevice(device_);
  Stop().IgnoreError();
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  if (state_ != nullptr) cudaFree(state_);
  if (control_ != nullptr) cudaFreeHost(control_);
}

Status ResidentGets::Running(bool* running) {
  const cudaError_t status = cudaStreamQuery(stream_);
  if (status == cudaErrorNotReady) {
    *running = true;
    return Status::OK();
  }
  *running = false;
  launched_ = false;
  GPKV_CUDA_RETURN_IF_ERROR(status, where_ + ": the resident get kernel");
  return Status::OK();
}

uint64_t ResidentGets::Done() const {
  uint64_t lowest = ~uint64_t{0};
  for (uint32_t b = 0; b < blocks_; ++b) {
    lowest = std::min(lowest, __atomic_load_n(&control_->done[b], __ATOMIC_ACQUIRE));
  }
  return lowest;
}

Status ResidentGets::Launch(const GphashDeviceView& view, uint64_t view_generation,
                            uint64_t served) {
  // Every block's word holds the last ticket answered.
  for (uint64_t& done : control_->done) __atomic_store_n(&done, served, __ATOMIC_RELEASE);
  __atomic_store_n(&control_->quit, uint64_t{0}, __ATOMIC_RELEASE);
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(state_, 0, sizeof(ResidentDeviceState), stream_),
                            where_ + ": cudaMemsetAsync of the resident gets' state");
  const auto blocks = static_cast<unsigned int>(
      std::min<uint64_t>({MultiprocessorCount(), (kMaxOps + kBlockThreads - 1) / kBlockThreads,
                          std::size(ResidentControl{}.done)}));
  blocks_ = blocks;
  GPKV_RETURN_IF_ERROR(DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    return LaunchResidentKernel<decltype(words)::value>(view, blocks, control_, state_, served,
                                                        stream_);
  }));
  launched_ = true;
  view_ = view;
  view_generation_ = view_generation;
  launched_at_ns_ = SteadyNs();
  ++launches_;
  return Status::OK();
}

Status ResidentGets::StopLocked() {
  if (!launched_) return Status::OK();
  __atomic_store_n(&control_->quit, uint64_t{1}, __ATOMIC_RELEASE);
  launched_ = false;
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_),
                            where_ + ": stopping the resident get kernel");
  return Status::OK();
}

Status ResidentGets::Stop() {
  std::lock_guard<std::mutex> lock(busy_);
  return StopLocked();
}

Status ResidentGets::WaitDone(uint64_t ticket) {
  // A request takes ~10 us; past that, ask now and then whether the kernel
  // exited (idle time, lifetime) before it saw the ticket, and launch it
  // again: the new kernel starts after the last ticket done.
  constexpr uint64_t kCheckEvery = 256;
  for (uint64_t spins = 1;; ++spins) {
    if (Done() == ticket) return Status::OK();
    CpuRelax();
    if (spins % kCheckEvery != 0) continue;
    bool running = false;
    GPKV_RETURN_IF_ERROR(Running(&running));
    if (running) continue;
    if (Done() == ticket) return Status::OK();
    GPKV_RETURN_IF_ERROR(Launch(view_, view_generation_, ticket - 1));
  }
}

Status ResidentGets::TryGet(const GphashDeviceView& view, uint64_t view_generation,
                            const uint8_t* keys, uint8_t* values, uint8_t* found, uint64_t count,
                            bool* served) {
  *served = false;
  if (count == 0 || count > kMaxOps) return Status::OK();
  std::unique_lock<std::mutex> lock(busy_, std::try_to_lock);
  if (!lock.owns_lock()) return Status::OK();
  // A kernel close to its idle time or lifetime is replaced before the
  // request rather than found gone after it.
  const uint64_t now = SteadyNs();
  if (launched_ && (view_generation != view_generation_ || now - last_request_ns_ > kIdleNs / 2 ||
                    now - launched_at_ns_ > kLifetimeNs - kIdleNs)) {
    GPKV_RETURN_IF_ERROR(StopLocked());
  }
  if (!launched_) GPKV_RETURN_IF_ERROR(Launch(view, view_generation, next_ticket_ - 1));
  control_->keys = keys;
  control_->values = values;
  control_->found = found;
  control_->count = count;
  const uint64_t ticket = next_ticket_++;
  control_->request_ticket = ticket;
  __atomic_store_n(&control_->posted, ticket, __ATOMIC_RELEASE);
  GPKV_RETURN_IF_ERROR(WaitDone(ticket));
  last_request_ns_ = SteadyNs();
  *served = true;
  return Status::OK();
}

}  // namespace gpkv::gpu
