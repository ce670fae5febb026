// How a host thread learns that a small kernel is done (experiment, H100):
// stream sync, event sync, or a flag the kernel's last block stores to
// mapped host memory; and what cudaSetDevice / cudaEventRecord cost.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
struct View {
  unsigned long long w[64];
};
struct Batch {
  const unsigned long long* in;
  unsigned long long* out;
  unsigned long long n;
};
__device__ unsigned int ticket;
__global__ void K(View v, Batch b, volatile unsigned long long* flag, unsigned long long seq) {
  unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < b.n) b.out[i] = b.in[i] + v.w[i & 63];
  if (flag == nullptr) return;
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int t = atomicAdd(&ticket, 1);
    if (t == gridDim.x - 1) {
      ticket = 0;
      __threadfence_system();
      *flag = seq;
    }
  }
}
double Now() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
template <class F>
void Time(const char* name, F f, int reps = 4000) {
  std::vector<double> t;
  for (int i = 0; i < 300; ++i) f();
  for (int i = 0; i < reps; ++i) {
    double a = Now();
    f();
    t.push_back(Now() - a);
  }
  std::sort(t.begin(), t.end());
  std::printf("%-60s p50 %6.2f us  p10 %6.2f  p90 %6.2f  p99 %6.2f\n", name, t[t.size() / 2],
              t[t.size() / 10], t[t.size() * 9 / 10], t[t.size() * 99 / 100]);
}
int main() {
  cudaSetDevice(0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  const int n = 4096;
  std::vector<unsigned long long> hin(1 << 20), hout(n);
  cudaHostRegister(hin.data(), hin.size() * 8, cudaHostRegisterPortable);
  cudaHostRegister(hout.data(), n * 8, cudaHostRegisterPortable);
  unsigned long long* flag;
  cudaHostAlloc(&flag, 64, cudaHostAllocMapped | cudaHostAllocPortable);
  *flag = 0;
  View v;
  std::memset(&v, 0, sizeof v);
  Batch b{hin.data(), hout.data(), (unsigned long long)n};
  for (int threads : {256, 64}) {
    dim3 grid(n / threads), block(threads);
    std::printf("-- %d blocks of %d\n", n / threads, threads);
    int call = 0;
    unsigned long long seq = 0;
    Time("launch + cudaStreamSynchronize", [&] {
      b.in = hin.data() + (call++ % 200) * n;
      K<<<grid, block, 0, s>>>(v, b, nullptr, 0);
      cudaStreamSynchronize(s);
    });
    Time("launch + event record + cudaEventSynchronize", [&] {
      b.in = hin.data() + (call++ % 200) * n;
      K<<<grid, block, 0, s>>>(v, b, nullptr, 0);
      cudaEventRecord(e, s);
      cudaEventSynchronize(e);
    });
    Time("launch (ticket) + cudaStreamSynchronize", [&] {
      b.in = hin.data() + (call++ % 200) * n;
      K<<<grid, block, 0, s>>>(v, b, flag, ++seq);
      cudaStreamSynchronize(s);
    });
    Time("launch (ticket) + spin on host flag", [&] {
      b.in = hin.data() + (call++ % 200) * n;
      ++seq;
      K<<<grid, block, 0, s>>>(v, b, flag, seq);
      while (*(volatile unsigned long long*)flag != seq) {
      }
    });
    cudaStreamSynchronize(s);
    Time("launch (ticket) + spin + event record", [&] {
      b.in = hin.data() + (call++ % 200) * n;
      ++seq;
      K<<<grid, block, 0, s>>>(v, b, flag, seq);
      cudaEventRecord(e, s);
      while (*(volatile unsigned long long*)flag != seq) {
      }
    });
    cudaStreamSynchronize(s);
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    volatile unsigned long long* fp = flag;
    void* args[4] = {&v, &b, &fp, &seq};
    cudaKernelNodeParams p{};
    p.func = (void*)K;
    p.gridDim = grid;
    p.blockDim = block;
    p.kernelParams = args;
    cudaGraphNode_t node;
    cudaGraphAddKernelNode(&node, g, nullptr, 0, &p);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, g, 0);
    Time("graph (ticket) + cudaStreamSynchronize", [&] {
      b.in = hin.data() + (call++ % 200) * n;
      ++seq;
      cudaGraphExecKernelNodeSetParams(exec, node, &p);
      cudaGraphLaunch(exec, s);
      cudaStreamSynchronize(s);
    });
    Time("graph (ticket) + spin on host flag", [&] {
      b.in = hin.data() + (call++ % 200) * n;
      ++seq;
      cudaGraphExecKernelNodeSetParams(exec, node, &p);
      cudaGraphLaunch(exec, s);
      while (*(volatile unsigned long long*)flag != seq) {
      }
    });
    cudaStreamSynchronize(s);
  }
  Time(
      "cudaSetDevice(0)", [&] { cudaSetDevice(0); }, 20000);
  Time(
      "cudaEventRecord", [&] { cudaEventRecord(e, s); }, 20000);
  Time(
      "cudaStreamWaitEvent", [&] { cudaStreamWaitEvent(s, e, 0); }, 20000);
  Time(
      "cudaStreamSynchronize (idle)", [&] { cudaStreamSynchronize(s); }, 20000);
  Time(
      "cudaEventSynchronize (done)", [&] { cudaEventSynchronize(e); }, 20000);
  std::printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
