// CopyHost (host_staging.h): memcpy split over OpenMP threads for large
// staging copies. A plain .cc file: nvcc does not compile OpenMP pragmas.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>

#include "tables/gphash/gpu/host_staging.h"

namespace gpkv::gpu {
namespace {

// One thread copies at about 10-12 GB/s (H200 machine, issue #15's first
// run: 17 MB of keys and answers per 2^20 gets took 1.47 ms); the link moves
// 50 GB/s. Below this size one memcpy beats waking a team.
constexpr size_t kParallelCopyBytes = size_t{1} << 19;
constexpr int kMaxCopyThreads = 8;

int CopyThreads() {
  static const int threads =
      std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 2, 1, kMaxCopyThreads);
  return threads;
}

}  // namespace

void CopyHost(void* target, const void* source, size_t bytes) {
  CopyHostOnThreads(target, source, bytes, CopyThreads());
}

void CopyHostOnThreads(void* target, const void* source, size_t bytes, int threads) {
  if (bytes < kParallelCopyBytes || threads <= 1) {
    std::memcpy(target, source, bytes);
    return;
  }
  // Slices of whole cache lines, one per thread, covering every byte (the
  // share is rounded up before the cache line: 8 threads and 3 MiB + 7 bytes
  // once left the last 7 bytes uncopied).
  const size_t share = (bytes + threads - 1) / threads;
  const size_t slice = (share + 63) / 64 * 64;
  auto* out = static_cast<uint8_t*>(target);
  const auto* in = static_cast<const uint8_t*>(source);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const size_t begin = std::min(bytes, static_cast<size_t>(t) * slice);
    const size_t end = std::min(bytes, begin + slice);
    if (end > begin) std::memcpy(out + begin, in + begin, end - begin);
  }
}

}  // namespace gpkv::gpu
