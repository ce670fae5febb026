// LsmGpu's insides, shared by its .cu files (backend.cu: open and writes;
// queries.cu: the read side): device runs, versions, scratch memory and the
// device functions over sorted runs.
//
// Who may call: tables/lsm/gpu/ only. Includes the CUDA runtime.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpkv/status.h"
#include "gpu/cuda_check.h"
#include "gpu/pool_registration.h"
#include "pm/pool.h"
#include "tables/lsm/cpu/search.h"
#include "tables/lsm/gpu/backend.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"
#include "tables/lsm/search.h"

namespace gpkv::lsm::gpu {

// A sorted run in GPU memory: one allocation laid out as the run's data in
// the pool (keys, meta, values, zero padding to 8 bytes), so that reading it
// from and writing it to the pool is one copy and its checksum one pass.
struct DeviceRun {
  uint8_t* base = nullptr;
  uint64_t count = 0;
  uint32_t key_words = 1;
  uint32_t value_size = 8;
  uint64_t tombstones = 0;  // host-side facts of the run
  uint64_t max_seq = 0;
  // Every kFenceStride-th key (null: none), so that a search reads a
  // small array that stays in L2 and then one block of the run.
  uint64_t* fences = nullptr;
  uint64_t fence_count = 0;
  // Non-null: base and fences came from the device's stream-ordered memory
  // pool (cudaMallocAsync on this stream, the table's write stream) and go
  // back to it on this stream: no cudaFree (which waits for the whole
  // device and unmaps) per replaced run. Safe because a run is freed only
  // when no version holds it, and every call that used it has waited for
  // its kernels by then.
  cudaStream_t pool_stream = nullptr;

  DeviceRun() = default;
  DeviceRun(const DeviceRun&) = delete;
  DeviceRun& operator=(const DeviceRun&) = delete;
  ~DeviceRun() {
    for (void* pointer : {static_cast<void*>(base), static_cast<void*>(fences)}) {
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
using RunPtr = std::shared_ptr<DeviceRun>;

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

// What queries read: the device runs of the published levels and the write
// buffer's runs (the log's records carried as CarryIntoBuffer carries them:
// at most cpu::kMaxBufferRuns, newest first).
struct Version {
  RunPtr levels[kMaxLevels];   // null = empty level
  std::vector<RunPtr> buffer;  // newest first; empty = empty buffer
  uint64_t BufferEntries() const {
    uint64_t entries = 0;
    for (const RunPtr& run : buffer) entries += run->count;
    return entries;
  }
  DeviceSources Sources() const {
    DeviceSources sources;
    for (const RunPtr& run : buffer) {
      if (run->count != 0) sources.runs[sources.count++] = ArraysOf(*run);
    }
    for (const RunPtr& run : levels) {
      if (run != nullptr) sources.runs[sources.count++] = ArraysOf(*run);
    }
    return sources;
  }
};

// Stream-ordered scratch memory of one call (cudaMallocAsync), freed on the
// stream when it goes out of scope.
class Scratch {
 public:
  explicit Scratch(cudaStream_t stream) : stream_(stream) {}
  ~Scratch() {
    for (void* pointer : pointers_) cudaFreeAsync(pointer, stream_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <typename T>
  Status Take(size_t count, T** out, const char* what) {
    void* pointer = nullptr;
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMallocAsync(&pointer, std::max<size_t>(count * sizeof(T), 8), stream_),
        std::string("LSM GPU scratch for ") + what);
    pointers_.push_back(pointer);
    *out = static_cast<T*>(pointer);
    return Status::OK();
  }
  cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_;
  std::vector<void*> pointers_;
};

// Device memory or not (host, pinned host and unknown pointers are "not").
bool IsDeviceMemory(const void* address, int device);

class LsmGpu::Impl {
 public:
  Impl(pm::Pool& pool, std::string table_name, uint64_t root_offset, int threads, int device)
      : pool_(pool),
        table_name_(std::move(table_name)),
        root_offset_(root_offset),
        threads_(std::max(1, threads)),
        device_(device) {}
  ~Impl();

  // LsmGpu::Close.
  Status Close();
  Status Recover(const TableOptions& options, recovery::Report* report);

  // Writes (backend.cu).
  Status Put(const uint8_t* keys, const uint8_t* values, size_t n);
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t n);
  Status Compact();

  // Queries (queries.cu).
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n);
  Status Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n);
  Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n);
  Status RangeOnDevice(const uint8_t* lo, const uint8_t* hi, Table::DeviceRangeResults* results,
                       size_t n);
  Status Neighbor(bool successor, const uint8_t* keys, uint8_t* out_keys, uint8_t* values,
                  uint8_t* found, size_t n);
  Status Scan(const Table::ScanVisitor& visit);
  Result<LsmStats> Stats();

  std::string Where() const { return pool_.path() + ": table '" + table_name_ + "'"; }
  // The current version (queries keep it alive while they run).
  std::shared_ptr<const Version> CurrentVersion() {
    std::shared_lock<std::shared_mutex> lock(version_mutex_);
    return version_;
  }
  // Live keys of a version (one thread per entry: an entry counts when no
  // newer source holds its key and it is not a tombstone).
  Result<uint64_t> CountLive(const Version& version, cudaStream_t stream);

  // A new device run of `count` entries (padding zeroed).
  Result<RunPtr> NewRun(uint64_t count, cudaStream_t stream);
  // Copies device or host input into device memory (staged when host or
  // unaligned).
  Status StageIn(Scratch& scratch, const uint8_t* host_or_device, size_t bytes,
                 const uint8_t** device_out, const char* what);
  // Copies between device scratch and a caller's array on `stream`
  // (gpu/staged_copy.h: pageable arrays through pinned chunks, any other by
  // one enqueued DMA); errors name the table.
  Status CopyIn(void* device, const void* host, size_t bytes, cudaStream_t stream,
                const char* what);
  Status CopyOut(void* host, const void* device, size_t bytes, cudaStream_t stream,
                 const char* what);

  // Write internals (backend.cu). REQUIRES: write_mutex_ held.
  // The batch's keys (device memory) sorted stably, one entry per key (its
  // last occurrence). first_flags (n bytes, or null): 1 where an input is
  // its key's first occurrence; unique_of (n, or null): the entry of each
  // input's key.
  Result<RunPtr> SortBatch(const uint8_t* keys, const uint8_t* values, size_t n, uint64_t meta,
                           uint8_t* first_flags, Scratch& scratch, uint32_t* unique_of);
  // newer and older (null: empty) merged, the newer entry of a key kept.
  Result<RunPtr> Merge(const RunPtr& newer, const RunPtr& older, bool drop_tombstones);
  Result<RunPtr> MergeAll(const std::vector<RunPtr>& newest_first, bool drop_tombstones);
  Status RunFacts(const DeviceRun& run, uint64_t* checksum);
  // Enqueues on log_stream_ the sum of the checksum terms of the columnar
  // log record `header` of run (layout.h) into *record_sum_.
  Status RecordChecksumTerms(const DeviceRun& run, const LogRecordHeader& header);
  // Builds run.fences (a level's run; queries search it often).
  Status BuildFences(DeviceRun& run);
  // batch: all puts, or all erases when `tombstones`.
  Status Write(RunPtr batch, bool tombstones);
  Status AppendToLog(RunPtr batch, bool tombstones);
  // The write buffer `runs` (newest first) with `batch` (newer than all of
  // them) carried in as DeviceBufferCarries says, the new run's fences built.
  Result<std::vector<RunPtr>> CarryIntoBuffer(const std::vector<RunPtr>& runs, RunPtr batch);
  Status Flush(RunPtr batch);
  // The cascade (layout.h PlanCascade) of `sources` (newest first;
  // `incoming` entries as the log counts them) into manifest_'s levels: the
  // occupied levels below the target join the merge (MergeAll), are emptied
  // in *next and *next_version, and their runs go to *replaced; *target is
  // the level the merged run (returned) goes to.
  Result<RunPtr> CascadeMerge(std::vector<RunPtr> sources, uint64_t incoming, Manifest* next,
                              Version* next_version, std::vector<uint64_t>* replaced,
                              uint32_t* target);
  // A checkpoint (two-half logs, layout.h): the buffer (records up to
  // applied_seq) and the cascade's levels merged on the device, the merged
  // run's extent allocated and its copy to the pool started on
  // checkpoint_stream_ by a thread of its own; the levels it makes serve
  // queries at once, its manifest waits in pending_; appends go to the other
  // half from here. REQUIRES: no checkpoint pending.
  Status StartCheckpoint(uint64_t applied_seq);
  // Waits for pending_'s copy, publishes its manifest, frees the runs it
  // replaced. A failed copy leaves the table refusing writes (its levels in
  // GPU memory are ahead of the pool's): reopen it.
  Status PublishCheckpoint();
  const Manifest& Levels() const { return pending_ != nullptr ? pending_->next : manifest_; }
  // Appends go to the (empty) log half of `manifest`'s epoch from here on.
  void EnterLogHalf(const Manifest& manifest);
  // Installs `next_version` for queries, its levels' tombstone counts kept.
  void InstallLevels(std::shared_ptr<Version> next_version);
  Status CompactLocked();
  Status MaybeCompact();
  // A run about to go to the pool as a level's: its header's facts
  // (RunFacts: data checksum, tombstones, largest sequence number) into
  // *summary and *checksum, its fences built (queries search a level's run
  // often); counts its arrays' bytes as copied.
  Status PrepareLevelRun(DeviceRun& run, RunSummary* summary, uint64_t* checksum);
  Result<uint64_t> WriteRunToPool(DeviceRun& run);
  Status Install(Manifest next, const std::vector<uint64_t>& replaced,
                 std::shared_ptr<Version> next_version);
  // The first batch after open would pay the device's one-time costs: each
  // kernel it launches is loaded at its first launch (CUDA's lazy module
  // loading) and the stream-ordered memory pool maps its memory. A batch of
  // min(b, kWarmUpEntries) keys sorted, merged and fenced in scratch here
  // pays them at open instead (writable tables).
  // It also reserves kReserveBuffers times the buffer's bytes (M * b
  // entries; at most a quarter of the free device memory;
  // GPKV_LSM_GPU_RESERVE=N to measure others) in the stream-ordered memory
  // pool. H100, M = 64, 2^24 / 2^26 keys (docs/bench/lsm.md run X5): no
  // reserve 947-967 / 871-905 M keys/s, 2 buffers 1120-1157 / 982-1018, 4
  // buffers 1140-1154 / 1008-1099.
  static constexpr uint64_t kWarmUpEntries = uint64_t{1} << 20;
  static constexpr uint64_t kReserveBuffers = 4;
  Status WarmUp();

  pm::Pool& pool_;
  const std::string table_name_;
  const uint64_t root_offset_;
  const int threads_;
  const int device_;
  uint64_t table_id_ = 0;
  EntryShape shape_;
  uint32_t log2_batch_ = 0;
  uint64_t log_offset_ = 0;
  uint64_t log_capacity_ = 0;
  uint64_t buffer_entries_ = 0;  // M * b: the flush rule's bound (GoesToLog)
  uint32_t max_dead_percent_ = 50;
  // The pool mapping registered with CUDA, so that runs reach the pool at
  // the link's speed (null: copies through pageable memory). Registering a
  // large pool takes seconds (cudaHostRegister pins every page), so Open
  // starts it on registration_thread_ once the runs are read, and a run
  // written before it is done goes through pageable memory (the driver's
  // own pinned staging), or waits for it when registration_wait_ is set
  // (GPKV_LSM_GPU_REGISTRATION=wait, to measure the other choice).
  // registration_ and registration_status_ are written by the thread before
  // it sets registration_done_ (release), read after it (acquire).
  std::unique_ptr<gpkv::gpu::PoolRegistration> registration_;
  Status registration_status_;
  std::atomic<bool> registration_done_{false};
  std::thread registration_thread_;
  bool registration_wait_ = false;
  void StartRegistration();
  // The registration when it is ready (waiting for it with
  // registration_wait_); null: copy through pageable memory (not ready, or
  // the pool cannot be registered). REQUIRES: write_mutex_ held.
  gpkv::gpu::PoolRegistration* ReadyRegistration();

  // Where a write batch's time goes (host clock, seconds; the phases wait
  // for the device). Guarded by write_mutex_; read by Stats.
  struct WriteTimes {
    double sort = 0;               // staging the batch in, radix sort, dedup, gather
    double log = 0;                // log record: checksum, copy to the pool, header, publish
    double buffer = 0;             // the buffer's carry merges and their fences
    double merge = 0;              // cascade merges (MergeAll)
    double facts = 0;              // data checksum, tombstones, max seq
    double fences = 0;             // fence arrays of new runs
    double copy = 0;               // device -> pool copy of run arrays
    double persist = 0;            // extent allocation, padding, header, Persist
    double install = 0;            // manifest, log word, frees, version swap
    double sync = 0;               // pool Sync at the end of each batch
    double compact = 0;            // MaybeCompact
    double registration_wait = 0;  // waiting for the pool registration
    double checkpoint_copy = 0;    // a checkpoint's run copied and persisted (its own thread)
    double checkpoint_wait = 0;    // writers waiting for that at the publish
    uint64_t checkpoints = 0;
    uint64_t batches = 0, flushes = 0, log_appends = 0;
    uint64_t pageable_copies = 0;  // runs copied before the registration
    uint64_t copied_bytes = 0;
  };
  WriteTimes times_;

  std::mutex write_mutex_;  // serialises writers; guards the fields below
  cudaStream_t write_stream_ = nullptr;
  // A log record's checksum and copy into the pool run here, beside the
  // buffer's merges on write_stream_ (the link and HBM at once).
  cudaStream_t log_stream_ = nullptr;
  cudaEvent_t batch_ready_ = nullptr;         // a batch sorted on write_stream_
  unsigned long long* record_sum_ = nullptr;  // pinned: RecordChecksumTerms' result
  // A checkpoint's run is copied to the pool here, behind the batches.
  cudaStream_t checkpoint_stream_ = nullptr;
  // Bytes per slice of that copy (GPKV_LSM_CHECKPOINT_CHUNK_MB): 16 MB, ~0.3
  // ms of the link. H100, M = 64, 2^27-2^28 keys (docs/bench/lsm.md runs
  // P-T): one copy 497-594 M keys/s (the batches' copies wait behind it),
  // 256 MB 636, 64 MB 656-763, 16 MB 672-793, 4 MB 685-789.
  uint64_t checkpoint_chunk_ = uint64_t{16} << 20;
  uint64_t* pinned_ = nullptr;  // 4 words of pinned host memory for the writer's results
  uint32_t log_halves_ = 1;
  uint64_t half_capacity_ = 0;  // bytes of a log half
  uint64_t publish_batch_ = 1;  // CheckpointPublishBatch(M)
  Manifest manifest_{};         // the published manifest
  // A checkpoint started and not yet published.
  struct Pending {
    Manifest next;                   // its manifest
    std::vector<uint64_t> replaced;  // runs it frees once published
    uint64_t batches = 0;            // batches appended since it started
    RunPtr run;                      // the merged run (null: none)
    RunExtent extent;                // its extent in the pool
    std::future<Status> copied;      // the copy and FinishRun, on a thread
    double copy_seconds = 0;         // written by that thread
  };
  std::unique_ptr<Pending> pending_;
  Status broken_;  // set by a failed checkpoint copy: writes refused
  // Where batches are appended: manifest_'s half and epoch, or the other
  // half and the next epoch while a checkpoint is pending.
  uint32_t log_half_ = 0;
  uint64_t log_epoch_ = 0;
  uint64_t log_bytes_ = 0;
  uint64_t log_entries_ = 0;  // as cpu::LsmCpu's
  uint64_t next_seq_ = 1;
  uint64_t level_tombstones_[kMaxLevels] = {};
  // Runs from the stream-ordered pool (default) or cudaMalloc
  // (GPKV_LSM_GPU_RUN_ALLOC=malloc, to measure the difference).
  bool pooled_runs_ = true;

  std::shared_mutex version_mutex_;  // guards version_ (the pointer)
  std::shared_ptr<const Version> version_;
};

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
