// Random 8-byte GPU stores and loads to host memory vs the footprint they
// spread over (experiment, H100): is the cost the link or the translation?
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
typedef unsigned long long u64;
__global__ void Store(u64* base, u64 words, u64 n, u64 seed) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
       i += (u64)gridDim.x * blockDim.x) {
    u64 h = (i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    base[h & (words - 1)] = i;
  }
}
__global__ void Load(const u64* base, u64 words, u64 n, u64 seed, u64* sink) {
  u64 acc = 0;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
       i += (u64)gridDim.x * blockDim.x) {
    u64 h = (i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    acc += base[h & (words - 1)];
  }
  if (acc == 42) *sink = acc;
}
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void Sweep(const char* name, u64* p, size_t bytes, u64* sink) {
  for (size_t foot = size_t{1} << 21; foot <= bytes; foot <<= 2) {
    const u64 words = foot / 8, n = u64{1} << 21;
    double bs = 1e9, bl = 1e9;
    for (int r = 0; r < 4; ++r) {
      double a = Now();
      Store<<<132 * 8, 256>>>(p, words, n, r);
      cudaDeviceSynchronize();
      bs = std::min(bs, Now() - a);
      a = Now();
      Load<<<132 * 8, 256>>>(p, words, n, r, sink);
      cudaDeviceSynchronize();
      bl = std::min(bl, Now() - a);
    }
    std::printf("%-28s footprint %6zu MiB: stores %.3f G/s, loads %.3f G/s\n", name, foot >> 20,
                n / bs / 1e9, n / bl / 1e9);
  }
}
int main() {
  const size_t bytes = size_t{1} << 31;  // 2 GiB
  u64* sink;
  cudaMalloc(&sink, 8);
  u64* dev;
  cudaMalloc(&dev, bytes);
  cudaMemset(dev, 0, bytes);
  Sweep("device memory", dev, bytes, sink);
  cudaFree(dev);
  u64* pinned;
  cudaHostAlloc(&pinned, bytes, cudaHostAllocMapped);
  std::memset(pinned, 0, bytes);
  Sweep("cudaHostAlloc", pinned, bytes, sink);
  cudaFreeHost(pinned);
  void* anon = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  madvise(anon, bytes, MADV_HUGEPAGE);
  std::memset(anon, 0, bytes);
  cudaHostRegister(anon, bytes, cudaHostRegisterDefault);
  Sweep("registered THP anonymous", (u64*)anon, bytes, sink);
  std::printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
  system(
      "dmesg 2>/dev/null | grep -i -m3 iommu; ls /sys/class/iommu 2>/dev/null | head -3; cat "
      "/proc/cmdline");
}
