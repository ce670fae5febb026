// gpu::BktCache: GPHash's frozen hot-bucket cache for direct mode. A fixed
// share of the table's buckets (GpuTableOptions::bkt_cache_fraction) is
// copied into GPU memory; gets of a cached bucket read HBM instead of
// crossing the link to the pool. The set of cached buckets is frozen between
// reloads: gets count their bucket reads per bucket (LFU counts), and every
// GpuTableOptions::bkt_cache_reload_ops operations the table asks for a
// reload, which runs on the cache's own stream:
//
//   1. snapshot the counts and halve them (so old accesses fade),
//   2. sort the buckets by count (CUB radix sort, descending; a cached
//      bucket wins a tie, so equal counts do not churn the cache),
//   3. mark the `capacity` most-read buckets hot,
//   4. evict every cached bucket that is no longer hot: clear its F entry
//      (slot_of: bucket -> slot) and G entry (bucket_of: slot -> bucket), then
//      wait for the slot's reference count (gets reading it) to drain,
//   5. load every hot bucket not yet cached into a freed slot: copy it from
//      the pool, then publish G, then F.
//
// Steps 1-3 overlap the table's batches. Steps 4-5 are ordered after the
// table's last write batch and before its next one (the table's last_write_
// event), so no writer runs while buckets move; gets may, on any stream, and
// the reference counts keep them off a slot being refilled
// (warp::AcquireForGet). While a bucket is cached its copy is where probes
// read and the CAS arbitrates, and every store goes to the cache and the
// pool (as mirror mode's), so the pool never lags the cache and eviction
// needs no write-back.
//
// Thread safety: Reload, Reset and Shape are called with the table's
// write_mutex_ held; Reset and Shape also with no kernel using the cache
// (the table waits for every stream first). stats() may be called any time.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "gpkv/status.h"
#include "gpu/cub_temp_storage.h"
#include "tables/gphash/gpu/backend.h"
#include "tables/gphash/gpu/device_view.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::CubTempBuffer;

class BktCache {
 public:
  // An empty cache on the current device; Shape sizes it. `where` names the
  // table in errors.
  static Result<std::unique_ptr<BktCache>> Create(std::string where);
  ~BktCache();
  BktCache(const BktCache&) = delete;
  BktCache& operator=(const BktCache&) = delete;

  // Sizes the cache for the levels of `view` (capacity = fraction of their
  // buckets, at least 1), empties it and zeroes the counts. Allocates only
  // when the table grew past what the cache holds.
  Status Shape(const GphashDeviceView& view, double fraction);
  // Empties the cache (every bucket read from the pool again) and zeroes the
  // counts, keeping the shape.
  Status Reset();
  // The cache's part of a view of the levels Shape saw.
  BktCacheView view() const { return view_; }

  // Enqueues a reload (steps 1-5 above) on the cache's stream, its steps 4-5
  // after `last_write` and recording `last_write` after them. `view`: the
  // table's current view (the pool's levels to copy from). Returns at once.
  Status Reload(const GphashDeviceView& view, cudaEvent_t last_write);
  // True while an enqueued reload has not finished.
  bool Reloading() const;
  // Reloads started since the last Shape.
  uint64_t reloads() const { return reloads_since_shape_.load(); }
  // Waits for the cache's stream.
  Status Wait();
  cudaStream_t stream() const { return stream_; }

  BktCacheStats stats() const;

 private:
  explicit BktCache(std::string where) : where_(std::move(where)) {}
  void Free();

  std::string where_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t reloaded_ = nullptr;
  BktCacheView view_{};
  uint64_t table_buckets_ = 0;
  uint64_t allocated_buckets_ = 0;   // slot_of, counts, sort arrays
  uint64_t allocated_capacity_ = 0;  // bucket_of, refs, buckets, free list
  uint32_t bucket_bytes_ = 0;
  uint64_t reloads_ = 0;
  std::atomic<uint64_t> reloads_since_shape_{0};

  // Reload scratch (device).
  uint32_t* snapshot_in_ = nullptr;
  uint32_t* snapshot_out_ = nullptr;
  uint32_t* ids_in_ = nullptr;
  uint32_t* ids_out_ = nullptr;
  uint8_t* hot_ = nullptr;
  uint32_t* free_slots_ = nullptr;
  CubTempBuffer sort_temp_;  // of the ranking sort
  // [0] reads from the cache, [1] from the pool, [2] buckets loaded; then the
  // reload's free-list counters (free slots pushed, taken).
  unsigned long long* counters_ = nullptr;
};

}  // namespace gpkv::gphash::gpu
