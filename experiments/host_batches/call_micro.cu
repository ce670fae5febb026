// Micro-benchmark of CUDA call costs for small batches (experiment, H100).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
struct Big {
  unsigned long long w[64];
};  // 512 B
__global__ void Small(unsigned long long* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}
__global__ void Large(Big b, unsigned long long* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += b.w[i & 63];
}
__global__ void FromPtr(const Big* b, unsigned long long* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += b->w[i & 63];
}
// Last block writes a flag to mapped host memory.
__global__ void Flag(unsigned long long* p, int n, unsigned int* blocks_done,
                     volatile unsigned long long* host_flag, unsigned long long ticket) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    unsigned int done = atomicAdd(blocks_done, 1);
    if (done == gridDim.x - 1) {
      *blocks_done = 0;
      __threadfence_system();
      *host_flag = ticket;
    }
  }
}
double Now() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
template <class F>
void Time(const char* name, F f, int reps = 3000) {
  std::vector<double> t;
  for (int i = 0; i < 200; ++i) f();
  for (int i = 0; i < reps; ++i) {
    double a = Now();
    f();
    t.push_back(Now() - a);
  }
  std::sort(t.begin(), t.end());
  std::printf("%-60s p50 %7.2f us  p10 %7.2f  p90 %7.2f\n", name, t[t.size() / 2], t[t.size() / 10],
              t[t.size() * 9 / 10]);
}
int main() {
  cudaSetDevice(0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  const int n = 4096;
  unsigned long long *d, *d2;
  cudaMalloc(&d, n * 8);
  cudaMalloc(&d2, 4096 * 8);
  unsigned long long* h;
  cudaHostAlloc(&h, n * 8, cudaHostAllocMapped);
  unsigned long long* hf;
  cudaHostAlloc(&hf, 64, cudaHostAllocMapped);
  *hf = 0;
  unsigned int* blocks_done;
  cudaMalloc(&blocks_done, 4);
  cudaMemset(blocks_done, 0, 4);
  Big big;
  std::memset(&big, 0, sizeof big);
  Big* dbig;
  cudaMalloc(&dbig, sizeof big);
  cudaMemcpy(dbig, &big, sizeof big, cudaMemcpyHostToDevice);
  int blocks = n / 64;
  Time(
      "launch only, 12 B params (host)", [&] { Small<<<blocks, 64, 0, s>>>(d, n); }, 1000);
  cudaStreamSynchronize(s);
  Time(
      "launch only, 524 B params (host)", [&] { Large<<<blocks, 64, 0, s>>>(big, d, n); }, 1000);
  cudaStreamSynchronize(s);
  Time("small kernel + stream sync", [&] {
    Small<<<blocks, 64, 0, s>>>(d, n);
    cudaStreamSynchronize(s);
  });
  Time("large-param kernel + stream sync", [&] {
    Large<<<blocks, 64, 0, s>>>(big, d, n);
    cudaStreamSynchronize(s);
  });
  Time("ptr-param kernel + stream sync", [&] {
    FromPtr<<<blocks, 64, 0, s>>>(dbig, d, n);
    cudaStreamSynchronize(s);
  });
  Time("small kernel + event record + event sync", [&] {
    Small<<<blocks, 64, 0, s>>>(d, n);
    cudaEventRecord(e, s);
    cudaEventSynchronize(e);
  });
  Time("kernel on mapped host + stream sync", [&] {
    Small<<<blocks, 64, 0, s>>>(h, n);
    cudaStreamSynchronize(s);
  });
  Time("2 kernels + stream sync", [&] {
    Small<<<1, 1024, 0, s>>>(d2, 1024);
    Small<<<blocks, 64, 0, s>>>(d, n);
    cudaStreamSynchronize(s);
  });
  Time("memset + 2 kernels + D2H 80 B + stream sync", [&] {
    cudaMemsetAsync(d2, 0, 80, s);
    Small<<<1, 1024, 0, s>>>(d2, 1024);
    Small<<<blocks, 64, 0, s>>>(d, n);
    cudaMemcpyAsync(hf + 2, d2, 40, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
  });
  Time("memset + kernel + stream sync", [&] {
    cudaMemsetAsync(d2, 0, 80, s);
    Small<<<blocks, 64, 0, s>>>(d, n);
    cudaStreamSynchronize(s);
  });
  Time("kernel + D2H 80 B + stream sync", [&] {
    Small<<<blocks, 64, 0, s>>>(d, n);
    cudaMemcpyAsync(hf + 2, d2, 40, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
  });
  unsigned long long ticket = 0;
  Time("flag kernel + spin on mapped flag", [&] {
    ++ticket;
    Flag<<<blocks, 64, 0, s>>>(d, n, blocks_done, hf, ticket);
    while (*(volatile unsigned long long*)hf != ticket) {
    }
  });
  cudaStreamSynchronize(s);
  Time("flag kernel + spin + stream sync", [&] {
    ++ticket;
    Flag<<<blocks, 64, 0, s>>>(d, n, blocks_done, hf, ticket);
    while (*(volatile unsigned long long*)hf != ticket) {
    }
    cudaStreamSynchronize(s);
  });
  Time("flag kernel + stream sync", [&] {
    ++ticket;
    Flag<<<blocks, 64, 0, s>>>(d, n, blocks_done, hf, ticket);
    cudaStreamSynchronize(s);
  });
  cudaEvent_t ey;
  cudaEventCreateWithFlags(&ey, cudaEventDisableTiming | cudaEventBlockingSync);
  Time("small kernel + blocking-sync event", [&] {
    Small<<<blocks, 64, 0, s>>>(d, n);
    cudaEventRecord(ey, s);
    cudaEventSynchronize(ey);
  });
  Time("cudaStreamQuery spin", [&] {
    Small<<<blocks, 64, 0, s>>>(d, n);
    while (cudaStreamQuery(s) == cudaErrorNotReady) {
    }
  });
  Time("cudaPointerGetAttributes x6", [&] {
    cudaPointerAttributes a;
    for (int i = 0; i < 6; ++i) cudaPointerGetAttributes(&a, h);
  });
  Time("cudaSetDevice", [&] { cudaSetDevice(0); });
  std::printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
