// Launch paths for one small kernel (experiment, H100): <<<>>> vs a graph with new params per call.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
struct View {
  unsigned long long w[64];
};  // 512 B, like GphashDeviceView
struct Batch {
  const unsigned long long* in;
  unsigned long long* out;
  unsigned long long n;
};
__global__ void K(View v, Batch b) {
  unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < b.n) b.out[i] = b.in[i] + v.w[i & 63];
}
double Now() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
template <class F>
void Time(const char* name, F f, int reps = 3000) {
  std::vector<double> t;
  for (int i = 0; i < 300; ++i) f();
  for (int i = 0; i < reps; ++i) {
    double a = Now();
    f();
    t.push_back(Now() - a);
  }
  std::sort(t.begin(), t.end());
  std::printf("%-55s p50 %6.2f us  p10 %6.2f  p90 %6.2f\n", name, t[t.size() / 2], t[t.size() / 10],
              t[t.size() * 9 / 10]);
}
int main() {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const int n = 4096;
  std::vector<unsigned long long> hin(1 << 20), hout(n);
  cudaHostRegister(hin.data(), hin.size() * 8, cudaHostRegisterPortable);
  cudaHostRegister(hout.data(), n * 8, cudaHostRegisterPortable);
  View v;
  std::memset(&v, 0, sizeof v);
  Batch b{hin.data(), hout.data(), (unsigned long long)n};
  dim3 grid(n / 32), block(32);
  int call = 0;
  Time("<<<>>> + stream sync", [&] {
    b.in = hin.data() + (call++ % 200) * n;
    K<<<grid, block, 0, s>>>(v, b);
    cudaStreamSynchronize(s);
  });
  Time(
      "<<<>>> launch only",
      [&] {
        b.in = hin.data() + (call++ % 200) * n;
        K<<<grid, block, 0, s>>>(v, b);
      },
      1000);
  cudaStreamSynchronize(s);
  // Graph with one kernel node; params replaced per call.
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  void* args[2] = {&v, &b};
  cudaKernelNodeParams p{};
  p.func = (void*)K;
  p.gridDim = grid;
  p.blockDim = block;
  p.kernelParams = args;
  cudaGraphNode_t node;
  cudaGraphAddKernelNode(&node, g, nullptr, 0, &p);
  cudaGraphExec_t exec;
  cudaGraphInstantiate(&exec, g, 0);
  Time("graph: set params + launch + stream sync", [&] {
    b.in = hin.data() + (call++ % 200) * n;
    cudaGraphExecKernelNodeSetParams(exec, node, &p);
    cudaGraphLaunch(exec, s);
    cudaStreamSynchronize(s);
  });
  Time(
      "graph: set params + launch only",
      [&] {
        b.in = hin.data() + (call++ % 200) * n;
        cudaGraphExecKernelNodeSetParams(exec, node, &p);
        cudaGraphLaunch(exec, s);
      },
      1000);
  cudaStreamSynchronize(s);
  Time(
      "graph: launch only (same params)", [&] { cudaGraphLaunch(exec, s); }, 1000);
  cudaStreamSynchronize(s);
  // cudaLaunchKernel with the same args
  Time("cudaLaunchKernel + stream sync", [&] {
    b.in = hin.data() + (call++ % 200) * n;
    cudaLaunchKernel((void*)K, grid, block, args, 0, s);
    cudaStreamSynchronize(s);
  });
  // Small params variant: view by pointer
  std::printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
