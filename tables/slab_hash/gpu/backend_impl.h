// GpuBackend::Impl: the state of one slab hash in GPU memory, shared by
// backend.cu (create, batches) and maintenance.cu (flush, rehash, reserve,
// scan, stats). Internal to tables/slab_hash/gpu/; includes the CUDA runtime.
//
// Locks, taken in this order:
//   table_mutex_       shared by Get, Scan and Stats; exclusive for Put,
//                      Erase, Mixed, Flush and Reserve (and the flushes,
//                      rehashes and SlabAlloc growth they run). Every call
//                      waits for its own work before it lets go, so a write
//                      kernel never overlaps a read kernel of the table.
//   alloc_mutex_       SlabAlloc's host calls made under the shared lock
//                      (Stats' in-use count).
//   workspaces_mutex_  the workspace free list.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpu/cuda_check.h"
#include "gpu/slab_alloc.h"
#include "tables/slab_hash/gpu/backend.h"
#include "tables/slab_hash/gpu/device_view.h"
#include "tables/slab_hash/gpu/kernels.h"
#include "tables/slab_hash/gpu/workspace.h"
#include "tables/slab_hash/layout.h"

namespace gpkv::slab_hash::gpu {

// Operations per launch; larger batches run in chunks, in order (so a later
// chunk's put of a key still wins, and its erase finds the key gone).
constexpr uint64_t kMaxChunkOps = uint64_t{1} << 23;
// A get batch with arrays in host memory runs as a pipeline of chunks of
// this many operations over this many workspaces (lanes), as the persistent
// hash table's host batches do with their measured best (HashGpuOptions'
// host_chunk_ops and host_lanes defaults).
constexpr uint64_t kHostChunkOps = uint64_t{1} << 17;
constexpr size_t kHostLanes = 4;
// Batches of at most this many operations run their kernels on a caller's
// pinned or registered host arrays in place, over the link, instead of on
// copies in device memory: no DMA in or out, each a few microseconds of
// fixed cost on the small batches an OLTP caller sends (the persistent hash
// table's HashGpuOptions::host_zero_copy_ops default).
constexpr uint64_t kInPlaceMaxOps = 8192;
// The caller's host work of a PutWhile: run once, when the batch's first
// launch is queued (RunWrite) or, if the put ends before one, by the caller
// afterwards.
class HostWork {
 public:
  explicit HostWork(const std::function<void()>* work) : work_(work) {}
  void Run() {
    if (work_ == nullptr) return;
    const std::function<void()>* work = work_;
    work_ = nullptr;
    (*work)();
  }

 private:
  const std::function<void()>* work_;
};

// SlabAlloc is kept at most this full before a write batch (Reserve).
constexpr double kMaxSlabFill = 0.8;

class GpuBackend::Impl {
 public:
  Impl(const TableOptions& options, int device);
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // ---- backend.cu ----
  // SlabAlloc and the bucket array for options.expected_keys.
  Status Initialize();
  // work (may be null): host work run once the first launch is queued.
  Status Put(const uint8_t* keys, const uint8_t* values, size_t count, cudaStream_t caller,
             HostWork* work = nullptr);
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
             cudaStream_t caller);
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, cudaStream_t caller);
  Status Mixed(const uint8_t* ops, const uint8_t* keys, uint8_t* values, uint8_t* results,
               size_t count, cudaStream_t caller);

  // ---- maintenance.cu ----
  Status Flush(cudaStream_t caller);
  Status Reserve(uint64_t keys, cudaStream_t caller);
  Status Scan(const Table::ScanVisitor& visit);
  Status ScanIntoDevice(uint64_t* keys, uint64_t* values, uint64_t capacity, uint64_t* pairs);
  Result<slab_hash::Stats> Stats();
  int device() const { return device_; }

 private:
  // ---- batch helpers (backend.cu) ----
  // A workspace for one call (from the free list, or a new one); handed back
  // by ~Lease.
  Result<Workspace*> AcquireWorkspace();
  void ReleaseWorkspace(Workspace* workspace);
  // Owns one leased workspace; movable, not copyable, so that a workspace is
  // handed back exactly once.
  class Lease {
   public:
    Lease(Impl* impl, Workspace* workspace) : impl_(impl), workspace_(workspace) {}
    Lease(Lease&& other) noexcept
        : impl_(other.impl_), workspace_(std::exchange(other.workspace_, nullptr)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (workspace_ != nullptr) impl_->ReleaseWorkspace(workspace_);
    }
    Workspace* workspace() const { return workspace_; }

   private:
    Impl* impl_;
    Workspace* workspace_;
  };
  // The prologue of every batch call: on the table's device, with the
  // table locked (Lock: std::unique_lock for writes, std::shared_lock for
  // reads), runs body(ws) on a leased workspace ordered after `caller`.
  template <typename Lock, typename Body>
  Status WithWorkspace(cudaStream_t caller, Body&& body) {
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "slab hash: cudaSetDevice");
    Lock lock(table_mutex_);
    auto workspace = AcquireWorkspace();
    if (!workspace.ok()) return workspace.status();
    Lease lease(this, *workspace);
    GPKV_RETURN_IF_ERROR((*workspace)->OrderAfter(caller));
    return body(**workspace);
  }
  // The table for kernels; `tag` for write kernels (0 for others).
  DeviceView View(uint32_t tag) const;
  // Before a write launch series (table_mutex_ held exclusively): due
  // flushes and rehashes (not before erases: new_slabs == 0), the batch's
  // tag, room in SlabAlloc for about `new_slabs` slabs.
  Status PrepareWrite(Workspace& ws, uint64_t new_slabs);
  // Slabs a write chunk of `count` operations probably takes (puts or
  // replaces, when `inserts`).
  uint64_t NewSlabsEstimate(uint64_t count) const;
  // Totals of a write launch and its retries.
  struct WriteTotals {
    uint64_t inserted = 0;
    uint64_t replaced = 0;
    uint64_t erased = 0;
    bool duplicate = false;
  };
  // Launches `launch` over `batch` (on half-warp tiles where the table's
  // values are inline), frees the retired value slabs, adds the slabs it
  // took to slabs_in_use_bound_, and runs the operations that found
  // SlabAlloc full again after growing it, until none is left (op_list: room for batch.count
  // indices; sink: the retry and retire lists). OutOfDeviceMemory when SlabAlloc cannot grow: the
  // operations not run are absent. work (may be null) runs once the first
  // launch is queued, before the wait for it.
  using WriteLauncher = Status (*)(const DeviceView&, const WriteSink&, const BatchArrays&, bool,
                                   cudaStream_t);
  Status RunWrite(Workspace& ws, WriteLauncher launch, BatchArrays batch, WriteSink sink,
                  uint32_t* op_list, WriteTotals* totals, HostWork* work = nullptr);
  Status PutChunk(Workspace& ws, const uint8_t* keys, const uint8_t* values, size_t count,
                  HostWork* work);
  Status EraseChunk(Workspace& ws, const uint8_t* keys, uint8_t* erased, size_t count);
  Status MixedChunk(Workspace& ws, const uint8_t* ops, const uint8_t* keys, uint8_t* values,
                    uint8_t* results, size_t count);
  // in_place: a chunk small enough may use mapped host arrays in place.
  Status GetChunk(Workspace& ws, const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                  bool in_place);
  // A get batch as chunks of `chunk_ops` run one after another on ws;
  // returns once every answer is in place.
  Status GetInTurn(Workspace& ws, const uint8_t* keys, uint8_t* values, uint8_t* found,
                   size_t count, size_t chunk_ops, bool in_place);
  // A get batch of more than kHostChunkOps operations whose arrays lie in
  // pinned or registered host memory: chunks of kHostChunkOps rotating over
  // ws and up to kHostLanes - 1 leased workspaces, each chunk's keys copied
  // in, its kernel launched and then the chunk before it copied out, so that
  // one chunk's kernel runs beside another's copies. Returns once every
  // answer is in place.
  Status GetPipelined(Workspace& ws, const uint8_t* keys, uint8_t* values, uint8_t* found,
                      size_t count, cudaStream_t caller);
  // The scratch of a duplicate sort of `count` operations in the side arena.
  Result<DuplicateScratch> DuplicateScratchFor(Workspace& ws, uint64_t count, uint8_t** resolved);

  // ---- maintenance helpers (maintenance.cu; table_mutex_ held exclusively) ----
  // Flushes when dead slots pass the bound (NeedsFlush); rehashes when lists
  // grew past theirs (NeedsRehash), unless device memory failed the last try.
  Status MaybeMaintain(Workspace& ws);
  Status FlushLocked(Workspace& ws);
  // Buckets for `keys` keys: a new bucket array for an empty table, else a
  // rehash; nothing when the table has as many already.
  Status ReserveLocked(Workspace& ws, uint64_t keys);
  // Moves every pair into a new bucket array of `buckets` buckets.
  // OutOfDeviceMemory when it or the slabs do not fit: nothing changed.
  Status RehashLocked(Workspace& ws, uint64_t buckets);
  // RehashLocked's copy of every pair into `fresh`, growing SlabAlloc and
  // starting over when it runs out.
  Status MovePairs(Workspace& ws, uint8_t* fresh, uint64_t buckets);
  // An empty bucket array of `buckets` buckets (*array), initialised on `stream`.
  Status AllocateBuckets(uint64_t buckets, uint8_t** array, cudaStream_t stream);
  // Grows SlabAlloc by enough super blocks for `slabs` more slabs.
  Status GrowSlabs(uint64_t slabs);

  const TableOptions options_;
  const int device_;
  const SlabGeometry geometry_;
  uint64_t seed_ = 0;

  // Guarded by table_mutex_ (written under it held exclusively).
  std::unique_ptr<gpkv::gpu::SlabAlloc> alloc_;
  gpkv::gpu::SlabAllocView alloc_view_;  // for kernels; refreshed under the exclusive lock
  uint8_t* buckets_ = nullptr;
  uint64_t bucket_count_ = 0;
  uint64_t live_keys_ = 0;
  uint64_t dead_slots_ = 0;
  uint32_t tag_ = 0;  // the last write batch's tag
  // At least the slabs in use: the last count (a popcount kernel and a wait)
  // plus the slabs write launches took since (frees keep it an upper bound);
  // kUnknownSlabs until the first count and after a rehash. Write batches
  // count again only when it comes near the fill bound (PrepareWrite).
  static constexpr uint64_t kUnknownSlabs = ~uint64_t{0};
  uint64_t slabs_in_use_bound_ = kUnknownSlabs;
  uint64_t rehashes_ = 0;
  double rehash_seconds_ = 0;
  uint64_t flushes_ = 0;
  // A rehash that found no device memory is tried again only past this many keys.
  uint64_t rehash_retry_keys_ = 0;
  cudaEvent_t rehash_start_ = nullptr;
  cudaEvent_t rehash_stop_ = nullptr;

  mutable std::shared_mutex table_mutex_;
  std::mutex alloc_mutex_;
  // Get calls in flight (Get): a small get runs in place only when alone.
  std::atomic<int> gets_in_flight_{0};

  std::mutex workspaces_mutex_;
  std::vector<std::unique_ptr<Workspace>> workspaces_;  // every workspace
  std::vector<Workspace*> free_workspaces_;
};

}  // namespace gpkv::slab_hash::gpu
