// GpuBackend's insides, shared by its .cu files (backend.cu: the class;
// open.cu: runs in, log replay, warm-up, registration; write.cu: sort and
// erase; merge.cu: merges and the write buffer; pool_writer.cu: log records
// and runs to the pool; queries.cu: the read side): device runs, the device
// write buffer, scratch memory and the device functions over sorted runs.
//
// Who may call: tables/lsm/gpu/ only. Includes the CUDA runtime.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "gpu/cuda_check.h"
#include "gpu/pointer_kind.h"
#include "gpu/stream_scratch.h"
#include "pm/pool.h"
#include "tables/lsm/cpu/search.h"
#include "tables/lsm/cpu/write_buffer.h"
#include "tables/lsm/gpu/backend.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/phase_timer.h"
#include "tables/lsm/run.h"
#include "tables/lsm/search.h"

namespace gpkv::lsm::gpu {

// A sorted run in GPU memory: one allocation laid out as the run's data in
// the pool (keys, meta, values, zero padding to 8 bytes), so that reading it
// from and writing it to the pool is one copy and its checksum one pass.
// Run::count and Run::tombstones are the run's host-side facts.
class DeviceRun final : public Run {
 public:
  uint8_t* base = nullptr;
  uint32_t key_words = 1;
  uint32_t value_size = 8;
  uint64_t max_seq = 0;
  // Every kFenceStride-th key (null: none), so that a search reads a
  // small array that stays in L2 and then one block of the run.
  uint64_t* fences = nullptr;
  uint64_t fence_count = 0;
  // The run's key filter as the pool holds it (filter_words =
  // RunFilterWords(count) words), built from the run's keys on the device
  // for a level's run that is not the oldest: when it is written to the
  // pool (PrepareLevelRun) or read from it at open (ReadRun). Null for the
  // oldest run (its pool filter is every bit set, and gets do not read it)
  // and for the write buffer's runs.
  uint64_t* filter = nullptr;
  uint64_t filter_words = 0;
  // Non-null: base, fences and filter came from the device's stream-ordered memory
  // pool (cudaMallocAsync on this stream, the table's write stream) and go
  // back to it on this stream: no cudaFree (which waits for the whole
  // device and unmaps) per replaced run. Safe because a run is freed only
  // when no version holds it, and every call that used it has waited for
  // its kernels by then.
  cudaStream_t pool_stream = nullptr;

  DeviceRun() = default;
  DeviceRun(const DeviceRun&) = delete;
  DeviceRun& operator=(const DeviceRun&) = delete;
  ~DeviceRun() override {
    for (void* pointer :
         {static_cast<void*>(base), static_cast<void*>(fences), static_cast<void*>(filter)}) {
      if (pointer == nullptr) continue;
      if (pool_stream != nullptr) {
        cudaFreeAsync(pointer, pool_stream);
      } else {
        cudaFree(pointer);
      }
    }
  }
  uint64_t* keys() const { return reinterpret_cast<uint64_t*>(base); }
  uint64_t* meta() const { return reinterpret_cast<uint64_t*>(base + count * key_words * 8); }
  uint8_t* values() const { return base + count * (key_words * 8 + 8); }
  // Bytes of the data (RunBytes less the header).
  uint64_t data_bytes() const {
    return RunBytes(count, key_words * 8, value_size) - kRunHeaderSize;
  }
  uint64_t data_words() const { return data_bytes() / 8; }
  // Bytes of the three arrays (data_bytes less the values' padding).
  uint64_t array_bytes() const { return count * (key_words * 8 + 8) + count * value_size; }
};

// A run handle of the core as the device run it is.
inline DeviceRun& AsDevice(const Run& run) {
  return static_cast<DeviceRun&>(const_cast<Run&>(run));
}
inline DeviceRunPtr AsDevice(const RunPtr& run) { return std::static_pointer_cast<DeviceRun>(run); }

// A run as kernels see it: its device arrays (RunView, as the CPU backend's
// runs; tables/lsm/search.h walks both).
inline RunView ArraysOf(const DeviceRun& run) {
  RunView view;
  view.keys = run.keys();
  view.meta = run.meta();
  view.values = run.values();
  view.count = run.count;
  view.fences = run.fences;
  view.fence_count = run.fence_count;
  return view;
}

// The sources of a query, newest first (the buffer's runs, then the levels).
constexpr uint32_t kMaxDeviceSources = kMaxLevels + cpu::kMaxBufferRuns;
struct DeviceSources {
  RunView runs[kMaxDeviceSources];
  uint32_t count = 0;
};

// The write buffer on the device: the log's records carried as CarryInto
// carries them, at most cpu::kMaxBufferRuns runs, newest first.
class GpuBuffer final : public Buffer {
 public:
  explicit GpuBuffer(std::vector<DeviceRunPtr> runs) : runs_(std::move(runs)) {
    for (const DeviceRunPtr& run : runs_) entries_ += run->count;
  }
  uint64_t entries() const override { return entries_; }
  std::vector<RunPtr> Runs() const override { return {runs_.begin(), runs_.end()}; }
  const std::vector<DeviceRunPtr>& runs() const { return runs_; }

 private:
  std::vector<DeviceRunPtr> runs_;
  uint64_t entries_ = 0;
};

// The sources of a query on `version`, newest first (the buffer's runs, then
// the levels). With `filters`, each level's run carries its key filter
// (RunView::filter; null for the oldest), which FindNewest tests before it
// searches the run. A buffer run carries none, even one whose filter is
// being built: a checkpoint may write the buffer's only run as a level's
// run as it is (Backend::Merge returns it) and build its filter while
// queries on the version holding it in the buffer run. A level run's filter
// is complete before any version names the run (PrepareLevelRun and ReadRun
// wait for its kernel), and never changes after.
inline DeviceSources SourcesOf(const Version& version, bool filters) {
  DeviceSources sources;
  for (const DeviceRunPtr& run : static_cast<const GpuBuffer&>(*version.buffer).runs()) {
    if (run->count != 0) sources.runs[sources.count++] = ArraysOf(*run);
  }
  for (const RunPtr& level_run : version.levels) {
    if (level_run == nullptr) continue;
    const DeviceRun& run = AsDevice(*level_run);
    RunView view = ArraysOf(run);
    if (filters && run.filter != nullptr) {
      view.filter = run.filter;
      view.filter_words = run.filter_words;
    }
    sources.runs[sources.count++] = view;
  }
  return sources;
}

using gpkv::gpu::IsDeviceMemory;

// The status of the last launch, naming `what`.
inline Status LaunchStatus(const std::string& what) {
  return gpkv::gpu::CudaStatus(cudaGetLastError(), what);
}

// positions = exclusive prefix sum of flags; *total = their sum (waits),
// read back through `pinned` (one word of pinned host memory: a copy to
// pageable memory waits behind a checkpoint's copy to the pool).
Status Positions(const uint32_t* flags, uint64_t n, uint64_t** positions, uint64_t* total,
                 uint64_t* pinned, Scratch& scratch);

// Device helpers shared by the .cu files (the searches: tables/lsm/search.h).
__device__ __forceinline__ void DeviceCopyValue(uint8_t* to, const uint8_t* from, uint32_t size) {
  if ((size & 7) == 0 &&
      ((reinterpret_cast<uintptr_t>(to) | reinterpret_cast<uintptr_t>(from)) & 7) == 0) {
    for (uint32_t i = 0; i < size; i += 8) {
      *reinterpret_cast<uint64_t*>(to + i) = *reinterpret_cast<const uint64_t*>(from + i);
    }
  } else {
    for (uint32_t i = 0; i < size; ++i) to[i] = from[i];
  }
}

// Launch shape of a grid of one thread per item.
constexpr int kBlock = 256;
inline unsigned Blocks(uint64_t items) {
  const uint64_t blocks = (items + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks == 0 ? 1 : (blocks > (1u << 30) ? (1u << 30) : blocks));
}

// Calls f(std::integral_constant<uint32_t, W>()) for the table's key words.
template <typename F>
inline auto DispatchWords(uint32_t key_words, F&& f) {
  if (key_words == 1) return f(std::integral_constant<uint32_t, 1>());
  if (key_words == 2) return f(std::integral_constant<uint32_t, 2>());
  return f(std::integral_constant<uint32_t, 4>());
}

}  // namespace gpkv::lsm::gpu
