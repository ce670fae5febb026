// GPU stores of 8 bytes at random places of a 1.6 GiB host mapping
// (registered /dev/shm file, as a pool), with and without huge pages
// behind it (experiment, H100).
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
typedef unsigned long long u64;
__global__ void Store(u64* base, u64 words, u64 n, u64 seed) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
       i += (u64)gridDim.x * blockDim.x) {
    u64 h = (i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    base[h % words] = i;
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
    acc += base[h % words];
  }
  if (acc == 42) *sink = acc;
}
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void Run(const char* name, bool file, bool huge) {
  const size_t bytes = size_t{1700} << 20;
  std::string path = std::string("/dev/shm/micro7-") + (huge ? "huge" : "small");
  void* p = nullptr;
  int fd = -1;
  if (file) {
    fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
    if (ftruncate(fd, bytes) != 0) {
      std::printf("ftruncate failed\n");
      return;
    }
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  } else {
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (p == MAP_FAILED) {
    std::printf("%s: mmap failed\n", name);
    return;
  }
  int adv = madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  std::memset(p, 1, bytes);
  cudaError_t reg = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
  if (reg != cudaSuccess) {
    std::printf("%s: register %s\n", name, cudaGetErrorString(reg));
    return;
  }
  // AnonHugePages / ShmemPmdMapped of this process after touching.
  char line[256];
  u64 anon_huge = 0, shmem_huge = 0;
  FILE* f = fopen("/proc/self/smaps_rollup", "r");
  while (f && fgets(line, sizeof line, f)) {
    unsigned long long kb;
    if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) anon_huge = kb;
    if (sscanf(line, "ShmemPmdMapped: %llu kB", &kb) == 1) shmem_huge = kb;
  }
  if (f) fclose(f);
  u64* sink;
  cudaMalloc(&sink, 8);
  const u64 words = bytes / 8, n = u64{1} << 22;
  for (int pass = 0; pass < 2; ++pass) {
    double best_store = 1e9, best_load = 1e9;
    for (int r = 0; r < 5; ++r) {
      double a = Now();
      Store<<<132 * 8, 256>>>((u64*)p, words, n, r);
      cudaDeviceSynchronize();
      best_store = std::min(best_store, Now() - a);
      a = Now();
      Load<<<132 * 8, 256>>>((u64*)p, words, n, r, sink);
      cudaDeviceSynchronize();
      best_load = std::min(best_load, Now() - a);
    }
    if (pass == 1)
      std::printf(
          "%-34s madvise %d, AnonHugePages %llu MB, ShmemPmdMapped %llu MB: random 8-byte stores "
          "%.3f G/s, loads %.3f G/s (%s)\n",
          name, adv, anon_huge >> 10, shmem_huge >> 10, n / best_store / 1e9, n / best_load / 1e9,
          cudaGetErrorString(cudaGetLastError()));
  }
  cudaHostUnregister(p);
  munmap(p, bytes);
  if (fd >= 0) {
    close(fd);
    unlink(path.c_str());
  }
  cudaFree(sink);
}
int main() {
  system(
      "cat /sys/kernel/mm/transparent_hugepage/enabled "
      "/sys/kernel/mm/transparent_hugepage/shmem_enabled; uname -r; grep -i huge /proc/meminfo | "
      "head -5; mount | grep /dev/shm");
  Run("file on /dev/shm, 4 KiB pages", true, false);
  Run("file on /dev/shm, MADV_HUGEPAGE", true, true);
  Run("anonymous, 4 KiB pages", false, false);
  Run("anonymous, MADV_HUGEPAGE", false, true);
}
