// Random 8-byte pool stores: the GPU over the link, host threads, and both
// at once (experiment, H100): can host threads add to the link's store rate?
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
typedef unsigned long long u64;
__global__ void Store(u64* base, const u64* offsets, u64 n) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    base[offsets[i]] = i;
}
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void HostStores(u64* base, const u64* offsets, u64 n, int threads) {
  std::vector<std::thread> team;
  for (int t = 0; t < threads; ++t)
    team.emplace_back([=] {
      const u64 b = n * t / threads, e = n * (t + 1) / threads;
      for (u64 i = b; i < e; ++i) __atomic_store_n(&base[offsets[i]], i, __ATOMIC_RELAXED);
    });
  for (auto& th : team) th.join();
}
int main(int argc, char** argv) {
  const size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 576) << 20;
  const u64 words = bytes / 8, n = u64{1} << 19;
  int fd = open("/dev/shm/micro9.pool", O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (ftruncate(fd, bytes) != 0) return 1;
  u64* pool = (u64*)mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  std::memset(pool, 0, bytes);
  if (cudaHostRegister(pool, bytes, cudaHostRegisterDefault) != cudaSuccess) {
    std::printf("register failed\n");
    return 1;
  }
  std::vector<u64> off(n), sorted(n);
  u64* doff;
  cudaMalloc(&doff, n * 8);
  auto fill = [&](int r) {
    for (u64 i = 0; i < n; ++i) {
      u64 h = (i + r * n) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 32;
      off[i] = h % words;
    }
    sorted = off;
    std::sort(sorted.begin(), sorted.end());
  };
  auto report = [&](const char* name, std::vector<double>& t, u64 count) {
    std::sort(t.begin(), t.end());
    std::printf("%-44s %8.1f us median (min %8.1f): %.3f G stores/s\n", name, t[t.size() / 2] * 1e6,
                t[0] * 1e6, count / t[t.size() / 2] / 1e9);
  };
  const int reps = 7;
  {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      fill(r);
      cudaMemcpy(doff, off.data(), n * 8, cudaMemcpyHostToDevice);
      double a = Now();
      Store<<<132 * 8, 256>>>(pool, doff, n);
      cudaDeviceSynchronize();
      t.push_back(Now() - a);
    }
    report("gpu 2^19 random", t, n);
  }
  {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      fill(r);
      cudaMemcpy(doff, sorted.data(), n * 8, cudaMemcpyHostToDevice);
      double a = Now();
      Store<<<132 * 8, 256>>>(pool, doff, n);
      cudaDeviceSynchronize();
      t.push_back(Now() - a);
    }
    report("gpu 2^19 sorted", t, n);
  }
  for (int threads : {1, 2, 4, 8, 12, 16})
    for (int s = 0; s < 2; ++s) {
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        fill(r + 100);
        double a = Now();
        HostStores(pool, s ? sorted.data() : off.data(), n, threads);
        t.push_back(Now() - a);
      }
      char name[64];
      std::snprintf(name, sizeof name, "host %2d threads 2^19 %s", threads,
                    s ? "sorted" : "random");
      report(name, t, n);
    }
  // Both at once: the GPU takes (1 - f) of the stores, 8 host threads f.
  for (int threads : {4, 8})
    for (double f : {0.25, 0.4, 0.5})
      for (int s = 0; s < 2; ++s) {
        std::vector<double> t;
        const u64 host_n = u64(n * f), gpu_n = n - host_n;
        for (int r = 0; r < reps; ++r) {
          fill(r + 200);
          const std::vector<u64>& src = s ? sorted : off;
          // GPU: every other... the first gpu_n of a random order; host: the rest (sorted if s).
          std::vector<u64> host_part(off.begin() + gpu_n, off.end());
          if (s) std::sort(host_part.begin(), host_part.end());
          cudaMemcpy(doff, off.data(), gpu_n * 8, cudaMemcpyHostToDevice);
          double a = Now();
          Store<<<132 * 8, 256>>>(pool, doff, gpu_n);
          HostStores(pool, host_part.data(), host_n, threads);
          cudaDeviceSynchronize();
          t.push_back(Now() - a);
          (void)src;
        }
        char name[80];
        std::snprintf(name, sizeof name, "gpu %.2f + host %d thr %.2f %s", 1 - f, threads, f,
                      s ? "sorted" : "random");
        report(name, t, n);
      }
  // The GPU's stores while a DMA copy of the link's other traffic runs on another stream.
  {
    const size_t copy_bytes = size_t{8} << 20;
    void* dbuf;
    cudaMalloc(&dbuf, copy_bytes * 4);
    void* hbuf;
    cudaHostAlloc(&hbuf, copy_bytes * 4, cudaHostAllocDefault);
    std::memset(hbuf, 1, copy_bytes * 4);
    cudaStream_t s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    for (int mode = 0; mode < 5; ++mode) {
      std::vector<double> t, tc;
      const size_t bytes_c = mode == 0 ? 0 : (mode <= 2 ? copy_bytes : copy_bytes * 4);
      const bool h2d = mode == 1 || mode == 3;
      for (int r = 0; r < reps; ++r) {
        fill(r + 300);
        cudaMemcpy(doff, off.data(), n * 8, cudaMemcpyHostToDevice);
        cudaEvent_t e0, e1, c0, c1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        cudaEventCreate(&c0);
        cudaEventCreate(&c1);
        double a = Now();
        cudaEventRecord(e0, s1);
        Store<<<132 * 8, 256, 0, s1>>>(pool, doff, n);
        cudaEventRecord(e1, s1);
        if (bytes_c) {
          cudaEventRecord(c0, s2);
          cudaMemcpyAsync(h2d ? dbuf : hbuf, h2d ? hbuf : dbuf, bytes_c,
                          h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s2);
          cudaEventRecord(c1, s2);
        }
        cudaDeviceSynchronize();
        (void)a;
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        t.push_back(ms / 1e3);
        if (bytes_c) {
          cudaEventElapsedTime(&ms, c0, c1);
          tc.push_back(ms / 1e3);
        }
      }
      char name[96];
      std::snprintf(name, sizeof name, "gpu 2^19 stores, copy %s %zu MiB beside",
                    bytes_c ? (h2d ? "in" : "out") : "none", bytes_c >> 20);
      report(name, t, n);
      if (!tc.empty()) {
        std::sort(tc.begin(), tc.end());
        std::printf("    its copy: %.1f us median (%.1f GB/s)\n", tc[tc.size() / 2] * 1e6,
                    bytes_c / tc[tc.size() / 2] / 1e9);
      }
    }
  }
  std::printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
  unlink("/dev/shm/micro9.pool");
}
