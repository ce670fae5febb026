// GpuBackend::Impl: the state of one table open on the GPU, shared by
// backend.cu (batches), open.cu (open, mirror, recovery) and
// resize.cu. Internal to gpu/; includes the CUDA runtime.
//
// Locks, always taken in this order:
//   write_mutex_      one write batch (or resize) of the table at a time on the
//                     host; device order between write batches on different
//                     streams comes from last_write_ (cudaStreamWaitEvent).
//   view_mutex_       shared while a batch is enqueued with view_ (and, for
//                     waiting calls, until it completes); exclusive while a
//                     resize changes the levels.
//   workspaces_mutex_ the workspace lists.
// A value-cell table's write batches also take cells_mutex_ first (before
// write_mutex_): it makes the pre-read, the put or erase and the post-read of
// cells.cu one unit, and guards retired_cells_.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpu/pool_registration.h"
#include "tables/gphash/core.h"
#include "tables/gphash/gpu/backend.h"
#include "tables/gphash/gpu/bkt_cache.h"
#include "tables/gphash/gpu/device_view.h"
#include "tables/gphash/gpu/kernels.h"
#include "tables/gphash/gpu/root.h"
#include "tables/gphash/gpu/workspace.h"
#include "tables/gphash/value_heap.h"
#include "util/epoch.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::PoolRegistration;

// kAuto's test for the mirror: twice the index (room for a resize) in at most
// options.mirror_memory_fraction of the device's free memory.
Status MirrorFits(uint64_t index_bytes, const GpuTableOptions& options, bool* fits);

// Operations before a new table's first BktCache reload (later ones come
// every GpuTableOptions::bkt_cache_reload_ops).
constexpr uint64_t kFirstBktCacheReloadOps = uint64_t{1} << 20;

// Operations per kernel launch; larger host batches run in chunks, in order.
constexpr size_t kMaxChunkOps = size_t{1} << 24;
// Staged mode: operations (or slots, for resize and recovery) per launch, so
// that one launch's log of pool stores has a known bound.
constexpr size_t kStagedChunk = size_t{1} << 19;
// Value-cell tables: operations per round of cells.cu (its scratch holds the
// words, flags and values of one round).
constexpr size_t kCellChunkOps = size_t{1} << 20;

// An announcement in an EpochManager for the guard's lifetime (util/epoch.h).
class EpochGuard {
 public:
  explicit EpochGuard(util::EpochManager& epochs) : epochs_(epochs), ticket_(epochs.Enter()) {}
  ~EpochGuard() { epochs_.Leave(ticket_); }
  EpochGuard(const EpochGuard&) = delete;
  EpochGuard& operator=(const EpochGuard&) = delete;

 private:
  util::EpochManager& epochs_;
  const int ticket_;
};

class GpuBackend::Impl final : public gphash::GrowthBackend {
 public:
  Impl(pm::Pool& pool, std::string table_name, const GpuTableOptions& options,
       std::unique_ptr<PoolRegistration> registration, const GphashRootSnapshot& snapshot);
  ~Impl() override;

  // ---- open (open.cu) ----
  // Picks direct or mirror mode, builds the mirror, the view, recovers.
  Status Initialize(recovery::Report* report);

  // ---- batches (backend.cu) ----
  // stream: the Async calls' stream (null for the waiting calls, which run on
  // a workspace of their own after order_after's work, if not null).
  Status Put(const uint8_t* keys, const uint8_t* values, size_t count, cudaStream_t stream,
             bool wait, cudaStream_t order_after = nullptr);
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
             cudaStream_t stream, bool wait, cudaStream_t order_after = nullptr);
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, cudaStream_t stream, bool wait,
               cudaStream_t order_after = nullptr);
  Status Synchronize(cudaStream_t stream);
  Status ForgetStream(cudaStream_t stream);
  Status Scan(const Table::ScanVisitor& visit) const;
  gphash::Stats Stats() const;

  // ---- value cells (cells.cu) ----
  // A value-cell table's batches: the kernels above run on value words (the
  // cells' offsets) and these wrap them with the cells: write the values into
  // free cells, read the words before and after a write batch to learn which
  // cells it replaced (retired until no get can still read them) and which it
  // did not use, and copy the cells of the words a get found. Each call
  // completes before it returns (also for the Async calls, whose stream the
  // batch is ordered after).
  Status CellPut(const uint8_t* keys, const uint8_t* values, size_t count,
                 cudaStream_t order_after);
  Status CellGet(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                 cudaStream_t order_after);
  Status CellErase(const uint8_t* keys, uint8_t* erased, size_t count, cudaStream_t order_after);
  // After open-time recovery: the cells live keys reference (a host scan of
  // the slots) become the heap's used cells, every other cell is free.
  Status LoadCellHeap();

  uint32_t key_size() const { return snapshot_.key_size; }
  uint32_t value_size() const { return snapshot_.value_size; }
  bool value_cells() const { return snapshot_.value_cells; }
  // Bytes the kernels read and write per value: the value itself, or for a
  // value-cell table its 8-byte value word (the cell's pool offset).
  uint32_t word_size() const { return value_cells() ? 8 : snapshot_.value_size; }
  bool mirrored() const { return view_.mirrored; }
  bool staged() const { return staged_; }

 private:
  friend class GpuBackend;

  // ---- open, mirror, recovery (open.cu) ----
  Status ChooseMirror(bool* mirror) const;
  Status BuildMirror(Workspace& workspace);
  // Copies level `level` of the LevelSet from the pool into its mirror and
  // rearranges it into the mirror's layout (enqueued on the workspace's
  // stream).
  Status CopyLevelToMirror(Workspace& workspace, uint32_t level, const std::string& context);
  void DropMirror();
  // view_ from snapshot_ and the mirror.
  void BuildView();
  Status Recover(Workspace& workspace, recovery::Report* report);
  Status CountLiveKeys(Workspace& workspace, uint64_t* live);

  // ---- staged mode (staged.cu) ----
  // Allocates the log of pool stores (device) and its host copy, sized for
  // one launch of kStagedChunk operations or slots.
  Status AllocateStagedLog();
  void FreeStagedLog();
  // Staged mode: waits for the workspace's stream, applies the stores its
  // kernels logged to the pool (key and value words, then publishing slot
  // words, then emptied slot words) and empties the log. No-op otherwise.
  // REQUIRES: write_mutex_ held (or open), no other logging kernel in flight.
  // in_order: apply the log in its order (a kick launch; see LaunchKick).
  Status DrainStagedLog(Workspace& workspace, const char* what, bool in_order = false);
  // Operations or slots per launch: kStagedChunk in staged mode, else `all`.
  uint64_t LaunchChunk(uint64_t all) const { return staged_ ? kStagedChunk : all; }

  // ---- BktCache (open.cu) ----
  // Sizes the BktCache for the current levels and turns it on, when direct
  // mode runs with one (GpuTableOptions::bkt_cache_fraction); without its
  // memory the table goes on without it. Rebuilds view_.
  // REQUIRES: view_mutex_ held exclusively (or open), no kernel in flight.
  Status SetUpBktCache();
  // Counts `ops` operations towards the next BktCache reload and starts one
  // when they are due (and none is running). write_locked: the caller holds
  // write_mutex_; otherwise the reload waits for a later batch when a writer
  // holds it. REQUIRES: view_mutex_ not held.
  Status CountForBktCache(uint64_t ops, bool write_locked);

  // ---- resize (resize.cu) ----
  // Grows the table by one top level of twice the buckets and moves the
  // bottom level up (gphash::Core::Grow, over the primitives below).
  // REQUIRES: write_mutex_ held, view_mutex_ not held.
  Status Resize();
  // gphash::GrowthBackend, called by core_ while growth_workspace_ is set.
  // REQUIRES: view_mutex_ held exclusively (or open), no kernel in flight.
  // Mirror mode: a zeroed mirror of the new level, first in mirror_levels_;
  // without the device memory for it, direct mode (staged mode: an error).
  Status PrepareTopLevel(uint64_t offset, uint64_t buckets) override;
  // snapshot_ and view_ from `set`.
  void ApplyLevelSet(const gphash::LevelSet& set, uint64_t active_word) override;
  // Launches MigrateBottomKernel over the bottom level; returns the keys
  // that found no room.
  Result<uint64_t> MoveBottomLevel() override;
  // Frees the mirror of the dropped bottom level.
  void DropBottomLevel() override;
  // Waits for the table's work on every stream.
  Status WaitAllStreams();

  // ---- batch helpers (backend.cu) ----
  // A workspace for one call on `stream` (null: one with its own stream,
  // taken from the free list and given back by ~Lease).
  Result<Workspace*> AcquireWorkspace(cudaStream_t stream);
  void ReleaseWorkspace(Workspace* workspace, cudaStream_t stream);
  struct Lease {
    Impl* impl;
    Workspace* workspace;
    cudaStream_t stream;
    ~Lease() { impl->ReleaseWorkspace(workspace, stream); }
  };
  // Orders this write batch after the previous one on the device.
  Status BeginWrite(Workspace& workspace);
  Status EndWrite(Workspace& workspace);
  // The frame of a Put or Erase call: checks, the write lock, a workspace,
  // the previous pending write finished, then run_chunk(workspace, done,
  // count, wait) for each launch-sized chunk [done, done + count) of the
  // batch; durable on return when waiting (staged mode always waits). When
  // run_pipelined.first (a waiting host batch, not staged), runs
  // run_pipelined.second(workspace) (PipelinedWrite, which takes the write
  // lock itself) instead.
  template <typename RunChunk, typename RunPipelined>
  Status WriteBatch(size_t count, cudaStream_t stream, bool wait, cudaStream_t order_after,
                    const RunChunk& run_chunk, const std::pair<bool, RunPipelined>& run_pipelined);
  Status PutChunk(Workspace& workspace, const uint8_t* keys, const uint8_t* values, size_t count,
                  bool wait);
  Status EraseChunk(Workspace& workspace, const uint8_t* keys, uint8_t* erased, size_t count,
                    bool wait);
  Status GetChunk(Workspace& workspace, const uint8_t* keys, uint8_t* values, uint8_t* found,
                  size_t count, bool wait);
  // ---- host batches (host_batches.cu) ----
  // The memory kinds of a batch's three arrays (null arrays count as device
  // memory: nothing to copy).
  struct BatchKinds {
    MemoryKind kinds[3];
    // Kernels may use the array at its own address (ClassifyMemory); true
    // for an absent array.
    bool in_place[3];
  };
  // True when a waiting batch with these arrays runs as a pipeline of chunks
  // (some array in host memory; the pipeline not turned off); *kinds
  // receives the arrays' kinds.
  bool PipelinesHost(const void* a, size_t a_bytes, const void* b, size_t b_bytes, const void* c,
                     size_t c_bytes, BatchKinds* kinds) const;
  // A get batch in chunks over the workspace's lanes; waits.
  Status PipelinedGet(Workspace& workspace, const uint8_t* keys, uint8_t* values, uint8_t* found,
                      size_t count, const BatchKinds& kinds);
  // A put (values not null; kinds of keys, values) or erase (kinds of keys,
  // erased) batch in chunks over the lanes, the chunks' kernels in order;
  // waits, and when a put found no room, puts the whole batch again through
  // PutChunk (kicks, resizes). Takes write_mutex_ itself: a one-chunk batch
  // copies in and resolves its duplicates first (neither touches the table),
  // a larger one takes it at once. Not durable yet: the caller syncs the
  // pool. REQUIRES: write_mutex_ and view_mutex_ not held; a workspace of its
  // own stream without a pending write.
  Status PipelinedWrite(Workspace& workspace, const uint8_t* keys, const uint8_t* values,
                        uint8_t* erased, size_t count, const BatchKinds& kinds);
  // Finishes the workspace's pending write batch: waits, places failed puts
  // after kicks or resizes, makes the batch durable. REQUIRES: write_mutex_
  // held.
  Status FinishPendingWrite(Workspace& workspace);
  // Kicks (LaunchKick) for the `count` failed puts ops[] of the batch keys;
  // *made_room: some kick moved a key or found a free candidate.
  // REQUIRES: write_mutex_ held.
  Status Kick(Workspace& workspace, const uint8_t* keys, const uint32_t* ops, uint64_t count,
              bool* made_room);
  Status CheckWritable() const;
  std::string Where() const;

  // ---- value-cell helpers (cells.cu) ----
  struct RetiredCell {
    uint64_t cell;
    uint64_t epoch;  // EpochManager::Current() after it was unlinked
  };
  // Gives the heap the retired cells no batch can still read.
  // REQUIRES: cells_mutex_ held.
  void ReclaimCells();
  // Retires the `count` cells a write batch unlinked, then starts a new epoch.
  // REQUIRES: cells_mutex_ held.
  void RetireCells(const std::vector<uint64_t>& cells);
  // Runs round(workspace, first operation, operations, order_after) over the
  // rounds (kCellChunkOps operations each) of a write batch on a value-cell
  // table, with cells_mutex_ held and the reusable retired cells reclaimed.
  using CellRound = std::function<Status(Workspace&, size_t, size_t, cudaStream_t)>;
  Status CellWriteRounds(size_t count, cudaStream_t order_after, const CellRound& round);
  // One round (<= kCellChunkOps operations) of CellPut / CellGet / CellErase.
  Status CellPutRound(Workspace& ws, const uint8_t* keys, const uint8_t* values, size_t count,
                      cudaStream_t order_after);
  Status CellGetRound(Workspace& ws, const uint8_t* keys, uint8_t* values, uint8_t* found,
                      size_t count, cudaStream_t order_after);
  Status CellEraseRound(Workspace& ws, const uint8_t* keys, uint8_t* erased, size_t count,
                        cudaStream_t order_after);
  // Writes count values (host or device memory) into cells[] (pool
  // offsets; device_cells is the workspace copy) and makes them visible
  // before any later store.
  Status FillCells(Workspace& ws, const uint64_t* cells, const uint64_t* device_cells,
                   const uint8_t* values, size_t count);

  pm::Pool& pool_;
  const std::string table_name_;
  const GpuTableOptions options_;
  std::unique_ptr<PoolRegistration> registration_;

  GphashRootSnapshot snapshot_;  // guarded by view_mutex_
  GphashDeviceView view_{};      // guarded by view_mutex_
  bool use_mirror_ = false;
  std::vector<uint8_t*> mirror_levels_;  // device copies, parallel to the LevelSet levels

  // Staged mode (registration_ is null): the log of pool stores.
  bool staged_ = false;
  StagedLog* staged_log_ = nullptr;          // device: entries, capacity, count
  StagedStore* staged_entries_ = nullptr;    // device
  StagedStore* staged_host_ = nullptr;       // pinned host copy
  StagedLog* staged_host_header_ = nullptr;  // pinned host copy of *staged_log_
  uint64_t staged_capacity_ = 0;

  mutable std::mutex write_mutex_;
  mutable std::shared_mutex view_mutex_;
  cudaEvent_t last_write_ = nullptr;

  mutable std::mutex workspaces_mutex_;
  std::vector<std::unique_ptr<Workspace>> own_workspaces_;  // every workspace with its own stream
  std::vector<Workspace*> free_workspaces_;
  std::map<cudaStream_t, std::unique_ptr<Workspace>> stream_workspaces_;

  std::atomic<uint64_t> live_keys_{0};

  // The growth protocol and open-time recovery's decisions (guarded by
  // view_mutex_), and the workspace its primitives run on while it runs.
  gphash::Core core_;
  Workspace* growth_workspace_ = nullptr;

  // Value-cell tables (value_cells()): free cells, and the epochs that keep a
  // replaced cell out of reuse while a get may still copy it.
  std::unique_ptr<ValueHeap> heap_;
  mutable util::EpochManager epoch_;
  mutable std::mutex cells_mutex_;
  std::vector<RetiredCell> retired_cells_;  // guarded by cells_mutex_

  // Direct mode's BktCache; in view_ while bkt_cache_active_ (guarded by
  // view_mutex_). Off during a resize (bucket ids change).
  std::unique_ptr<BktCache> bkt_cache_;
  std::atomic<bool> bkt_cache_active_{false};
  std::atomic<uint64_t> ops_since_reload_{0};
};

}  // namespace gpkv::gphash::gpu
