// gpu::GpuBackend: the persistent hash table (GPHash layout,
// tables/gphash/layout.h) run by CUDA kernels (a gphash::Backend, backend.h)
// — the GPU twin of cpu::CpuBackend.
// A pool written by either backend opens, verifies and answers the same on
// the other.
//
// Mapping: the pool mapping is registered with CUDA (gpkv::gpu::PoolRegistration)
// and kernels read and write the pool itself ("direct" mode). In "mirror"
// mode the table also keeps a copy of its bucket levels in GPU memory: probes
// and slot arbitration (CAS) run there and the pool receives only ordered
// plain stores of the changed words. In "staged" mode, for pool files CUDA
// cannot register (ext4, say), the mirror is the only copy the GPU sees: the
// kernels append their pool stores to a log in GPU memory and the host
// applies each log to the pool before the batch returns (staged.cu).
// Direct mode keeps the most-read buckets in GPU memory too (the BktCache,
// tables/gphash/gpu/bkt_cache.h; GpuTableOptions::bkt_cache_fraction), re-ranked by their
// access counts every bkt_cache_reload_ops operations.
// Values of up to 8 bytes live in the slot's value word; larger ones in
// value cells (the word holds the cell's offset), written and read by
// cells.cu around the same kernels: a put there also reads its keys'
// value words before and after (to retire the cells it replaced), and every
// call on such a table completes before it returns (the Async calls too).
//
// Kernels (kernels.cu) as they run by default (GpuTableOptions::warp_puts and
// tile_index_gets choose the other kernel of mirror and staged mode). A write batch
// is sorted by bucket with CUB, which also resolves duplicate keys (the last
// put and the first erase of a key are kept), and runs in that order; a
// direct-mode get batch is sorted too and reads each distinct key once (see
// sorted_get_min_ops). Then:
//  - gets in direct mode (and small get batches in every mode): a tile of
//    slots_per_bucket lanes per key reads the key's candidate buckets one at
//    a time, in the duplicate rule's order, up to the first that holds it
//    (32 / slots_per_bucket keys per warp side by side);
//  - gets in mirror and staged mode: one key per thread over the index in
//    GPU memory (tile_index_gets);
//  - puts in direct mode, erases, kicks, resize and recovery: work sharing,
//    the warp running its lanes' operations one after another, all 32 lanes
//    probing all candidate slots of each at once (levels x hash locations x
//    slots per bucket: 32 for the default 2L-2H-8S, one per lane) and
//    filtering by fingerprint;
//  - puts in mirror and staged mode: one operation per thread (warp_puts).
// Small batches give each warp fewer operations. A put inserts by CAS of the
// slot word EMPTY -> INSERT, writes key and value, __threadfence_system(),
// publishes VALID|fingerprint. A put that finds no EMPTY candidate is retried
// after a kick (one resident key of its candidate buckets moved to another of
// its own, as cpu::CpuBackend does), and placed after a resize (new top level,
// bottom level moved up, as the format describes) when kicks find no room:
// both backends fill a table to the same load factor.
//
// Durability: kernels order their pool stores with __threadfence_system()
// (key and value before the publishing slot word); the host makes a write
// batch durable with pool.Sync() when it completes. On a page-granular file
// SyncMode::kStrict therefore gives no more than kBatch here. A process
// killed during a batch leaves each operation applied or absent (SIGKILL
// tested in every mode, inline values and value cells:
// tests/gphash/gpu/gphash_gpu_kill_test.cc). Staged mode: the host stores each
// batch's logged words with the CPU backend's primitives (pool.Persist /
// Publish: key and value words, then publishing slot words, then emptied
// slot words), so it gives what cpu::CpuBackend gives on the same pool and
// SyncMode. Its Async write calls wait (the log is drained in the call).
//
// Who may call: engine/ (through the Table facade), tests and benchmarks.
// This header needs no CUDA headers: streams are passed as CUstream_st*, which
// is what cudaStream_t is.
//
// Thread safety: Put / Get / Erase (and their Async twins on distinct
// streams) may be called from several threads at once; each waiting call
// runs on a workspace (streams, scratch, staging) of its own, so concurrent
// gets overlap on the device. Write batches of one table run one at a time
// on the device (each waits for the previous write batch, in stream order;
// a host batch of one chunk copies in and resolves its duplicates while the
// previous one runs);
// gets run beside them and see, per key, the old or the new value. A resize takes the table
// exclusively and waits for the table's work in flight on every stream. The table is the only
// writer of its slots while it is open: do not open the same table with cpu::CpuBackend or a second
// GpuBackend at the same time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/backend.h"
#include "tables/gphash/stats.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace gpkv::gphash::gpu {

// Where the kernels probe and arbitrate: gpkv::HashGpuIndexMode
// (include/gpkv/options.h says what each mode does).
using GpuIndexMode = ::gpkv::HashGpuIndexMode;

// How a table runs on the GPU: the public tuning (gpkv::HashGpuOptions, whose
// comments say what each field does and why its default is what it is), the
// device, and the BktCache's share of the buckets (Options::gpu_cache_fraction).
struct GpuTableOptions : ::gpkv::HashGpuOptions {
  // CUDA device ordinal the table's kernels run on.
  int device = 0;
  // Direct mode: the BktCache (tables/gphash/gpu/bkt_cache.h), copies of the
  // most-read buckets in GPU memory, as this fraction of the table's buckets
  // (0: none). Gets of a cached bucket read HBM instead of the pool; writes
  // go to both. Not used in mirror and staged mode (the whole index is in GPU
  // memory there). When its memory cannot be had the table runs without it
  // (bkt_cache_stats().capacity_buckets == 0).
  double bkt_cache_fraction = 0.2;
};

using ::gpkv::gphash::BktCacheStats;  // stats.h

class GpuBackend final : public gphash::Backend {
 public:
  // OK when a CUDA device can run this backend; else Unsupported("no usable
  // CUDA device: ..."). Cheap enough to call at DB open.
  static Status DeviceUsable(int device = 0);

  // Creates a table root and its levels exactly as the format describes (the
  // same bytes cpu::CpuBackend::Create writes, up to the initial sizing and the
  // random hash seed). Durable, unlinked: the caller links it into the
  // catalog. Values over 8 bytes get value cells.
  static Result<uint64_t> Create(pm::Pool& pool, uint64_t table_id, const TableOptions& options);

  // Opens the table rooted at root_offset on the GPU: validates the root and
  // LevelSet (Corruption naming table and offset), registers the pool mapping
  // (when it cannot be registered, e.g. on ext4: kAuto goes on in staged
  // mode, kDirect and kMirror are Unsupported; kStaged never registers;
  // staged mode needs the index to fit in GPU memory), builds the
  // mirror if chosen, then runs open-time recovery on the device: INSERT
  // slots cleared, duplicates resolved (the winner rule), an interrupted
  // resize finished. `report` (optional) receives what recovery changed. A
  // read-only pool that needs recovery gives NeedsRecovery. A value-cell table
  // then scans its slots on the host to learn which cells are free
  // (Corruption for a value word that is not a cell). Unsupported when no
  // device is usable.
  // REQUIRES: the pool outlives the table.
  static Result<std::unique_ptr<GpuBackend>> Open(pm::Pool& pool, const std::string& table_name,
                                                  uint64_t root_offset,
                                                  const GpuTableOptions& options,
                                                  recovery::Report* report);
  ~GpuBackend() override;

  // Batches of `count` keys (key_size bytes each) and values (value_size
  // bytes each), in host or device memory (any kind the CUDA runtime can
  // copy; detected per call and per array). Host arrays run as a pipeline of
  // chunks of GpuTableOptions::host_chunk_ops over host_lanes streams:
  // pinned or registered arrays (cudaHostAlloc, cudaHostRegister,
  // gpkv::DB::RegisterHostMemory) are copied by DMA in place, pageable ones
  // through pinned staging the table keeps per workspace; a write batch's
  // chunks apply in order. See gpkv::Table for the contract: per-operation
  // atomicity; within a batch, the last put of a key wins and the first erase
  // of a key reports it. Each call waits for its kernels, and a write batch
  // is durable on return (pool.Sync()). PoolFull when a resize cannot get
  // pool space. `order_after` (a cudaStream_t or null, e.g.
  // gpkv::BatchOptions::stream; the calls without it order after nothing):
  // the batch starts only after the work enqueued on that stream so far (the
  // kernel that produced device-memory keys, say); the table keeps nothing of
  // the stream after the call.
  using Backend::Erase;
  using Backend::Get;
  using Backend::Put;
  Status Put(const uint8_t* keys, const uint8_t* values, size_t count, void* order_after) override;
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
             void* order_after) override;
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* order_after) override;

  // Stream-ordered twins: enqueue the batch on `stream` and return. Outputs
  // are written when the stream reaches them. A write batch (PutAsync,
  // EraseAsync) is complete and durable only after Synchronize(stream)
  // returns OK: that call also places the puts that found no room (resize).
  // Until then a get on the same stream may miss those. One write batch per
  // stream is outstanding at a time: a second PutAsync / EraseAsync on the
  // stream first synchronizes the previous one (waits). Host input arrays
  // are copied before return; device input arrays must stay valid until the
  // stream reaches a get, and until Synchronize(stream) returns for a write
  // (puts that found no room are re-read from them).
  // A batch of more than 2^24 operations (one launch chunk) runs to
  // completion instead, as the waiting call ordered after `stream` would.
  // `stream` is a cudaStream_t (gpkv::BatchOptions::stream); null is
  // InvalidArgument.
  // REQUIRES: one thread at a time per stream.
  Status PutAsync(const uint8_t* keys, const uint8_t* values, size_t count, void* stream) override;
  Status GetAsync(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                  void* stream) override;
  Status EraseAsync(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) override;
  // Waits for `stream`, finishes its outstanding write batch and makes it
  // durable.
  Status Synchronize(void* stream) override;
  // Synchronize for every stream an Async call has used; the first error.
  Status SynchronizeAll() override;
  // Synchronize(stream), then drops the table's workspace (scratch arena) for
  // it. REQUIRES: a stream given to an Async call stays valid until it is
  // forgotten or the table is destroyed.
  Status ForgetStream(CUstream_st* stream);

  // Visits every live pair (see gpkv::Table::Scan) by reading the pool on
  // the host; single-threaded.
  Status Scan(const Table::ScanVisitor& visit) const override;

  gphash::Stats Stats() const override;
  uint32_t key_size() const override;
  uint32_t value_size() const override;
  // True when the index is mirrored in GPU memory (mirror and staged mode).
  bool mirrored() const;
  // True in staged mode: the pool is not mapped by the GPU.
  bool staged() const;
  // The index mode the table runs in: "direct", "mirror" or "staged".
  const char* mode() const override;
  // The BktCache's counters (direct mode).
  BktCacheStats bkt_cache_stats() const;
  // The options the table was opened with.
  const GpuTableOptions& options() const;

  class Impl;

 private:
  explicit GpuBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpkv::gphash::gpu
