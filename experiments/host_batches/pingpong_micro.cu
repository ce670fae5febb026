// Host <-> resident kernel ping-pong through mapped host memory (experiment, H100):
// the kernel polls a host word with one load flavour, answers on another host word.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
template <int kFlavour>
__device__ __forceinline__ unsigned long long Poll(const unsigned long long* p) {
  unsigned long long v;
  if (kFlavour == 0) asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  if (kFlavour == 1)
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  if (kFlavour == 2)
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  if (kFlavour == 3) asm volatile("ld.global.cv.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
template <int kFlavour>
__global__ void Server(const unsigned long long* ring, unsigned long long* answer, int rounds) {
  for (unsigned long long seq = 1; seq <= (unsigned long long)rounds; ++seq) {
    if (threadIdx.x == 0) {
      while (Poll<kFlavour>(ring) != seq) {
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();
      *(volatile unsigned long long*)answer = seq;
    }
  }
}
double Now() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
template <int kFlavour>
void Run(const char* name) {
  unsigned long long *ring, *answer;
  cudaHostAlloc(&ring, 4096, cudaHostAllocMapped);
  cudaHostAlloc(&answer, 4096, cudaHostAllocMapped);
  *ring = 0;
  *answer = 0;
  const int rounds = 20000;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  Server<kFlavour><<<1, 64, 0, s>>>(ring, answer, rounds);
  std::vector<double> t;
  for (unsigned long long seq = 1; seq <= (unsigned long long)rounds; ++seq) {
    double a = Now();
    __atomic_store_n(ring, seq, __ATOMIC_RELEASE);
    double limit = a + 1e6;
    while (__atomic_load_n((volatile unsigned long long*)answer, __ATOMIC_ACQUIRE) != seq) {
      if (Now() > limit) {
        std::printf("%s: stuck at %llu\n", name, seq);
        return;
      }
    }
    t.push_back(Now() - a);
  }
  cudaStreamSynchronize(s);
  std::sort(t.begin() + 0, t.end());
  std::printf("%-28s round trip p50 %6.2f us  p10 %6.2f  p90 %6.2f  p99 %6.2f  (%s)\n", name,
              t[t.size() / 2], t[t.size() / 10], t[t.size() * 9 / 10], t[t.size() * 99 / 100],
              cudaGetErrorString(cudaGetLastError()));
}
int main() {
  Run<0>("ld.volatile");
  Run<1>("ld.relaxed.sys");
  Run<2>("ld.acquire.sys");
  Run<3>("ld.cv");
}
