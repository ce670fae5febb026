// Launchers of the slab hash's kernels: the batch kernels (batch_kernels.cu:
// get, put, erase, mixed), the maintenance kernels (maintenance_kernels.cu:
// bucket arrays, flush, rehash, tag clearing, scan, freeing) and the
// within-batch duplicate resolution (duplicate_kernels.cu). Each enqueues on
// `stream` and does not wait; errors name the kernel.
//
// Who may call: the host side of tables/slab_hash/gpu/ (backend.cu,
// maintenance.cu). Includes the CUDA runtime.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpkv/status.h"
#include "gpu/cub_temp_storage.h"
#include "tables/slab_hash/gpu/device_view.h"

namespace gpkv::slab_hash::gpu {

// The device arrays of a batch. Operation op has its key at keys + op *
// key_size and its value at values + op * value_size; position i of a launch
// runs operation op_index[i] (i when op_index is null).
struct BatchArrays {
  const uint8_t* keys = nullptr;
  uint8_t* values = nullptr;           // put, mixed: read; get, mixed searches: written
  uint8_t* flags = nullptr;            // get: found; erase: erased; mixed: results (may be null)
  const uint8_t* ops = nullptr;        // mixed: MixedOp codes
  const uint32_t* op_index = nullptr;  // null: every operation in order
  // Mixed batches in kind order (LaunchMixedOrder): op_index is
  // MixedOrder::positions, and position i runs the i-th operation of
  // [deletes, replaces, searches], kind_counts[0] deletes and kind_counts[1]
  // replaces. Null: op_index as above.
  const uint32_t* kind_counts = nullptr;
  uint64_t count = 0;           // positions
  bool keys_aligned = false;    // keys start 8-byte aligned
  bool values_aligned = false;  // values start 8-byte aligned and value_size % 8 == 0
};

// ---- batch kernels (batch_kernels.cu) ----
// Looks the keys up (no writer may run): values (zeros for a missing key)
// and found flags.
Status LaunchGet(const DeviceView& view, const BatchArrays& batch, cudaStream_t stream);
// Inserts or replaces (view.tag set): counts in sink, replaced value slabs
// in sink.retired, and in sink.retry_ops the operations not run: those that
// found SlabAlloc full and, unless whole_warps, those that need a slab at
// all (half-warp tiles run the others, twice as many at a time; a slab
// takes a whole warp to allocate).
Status LaunchPut(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                 bool whole_warps, cudaStream_t stream);
// Erases: erased flags, counts; erased value slabs in sink.retired. Always
// on half-warp tiles (an erase allocates nothing).
Status LaunchErase(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                   bool whole_warps, cudaStream_t stream);
// Searches, replaces and deletes in one launch (GpuBackend::Mixed); the
// replaces that need a slab as LaunchPut's.
Status LaunchMixed(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                   bool whole_warps, cudaStream_t stream);

// ---- the kind order of a mixed batch (mixed_order.cu) ----
struct MixedOrder {
  uint32_t* positions = nullptr;    // 3 * count: deletes, replaces, searches (each from its third)
  uint32_t* kind_counts = nullptr;  // 2: deletes, replaces
  gpkv::gpu::CubTempStorage temp;   // MixedOrderTempBytes(count)
};
Status MixedOrderTempBytes(uint64_t count, size_t* bytes);
// Partitions the operations of `batch` (op_index null) by kind into `order`.
Status LaunchMixedOrder(const BatchArrays& batch, const MixedOrder& order, cudaStream_t stream);

// ---- maintenance (maintenance_kernels.cu) ----
// Empty base slabs (zero, next = kNullNext) for `bucket_count` buckets.
Status LaunchInitBuckets(uint8_t* buckets, uint64_t bucket_count, cudaStream_t stream);
// Frees the sink.counters->retired value slabs of sink.retired.
Status LaunchFreeRetired(const DeviceView& view, const WriteSink& sink, cudaStream_t stream);
// Clears every slab's tag and touched bits (the batch tags start over).
Status LaunchClearTags(const DeviceView& view, cudaStream_t stream);
// Compacts every list: live slots packed from the base slab on, dead slots
// dropped, emptied chained slabs freed, tags cleared.
Status LaunchFlush(const DeviceView& view, cudaStream_t stream);
// Moves every live pair of `from` into `to` (same geometry and SlabAlloc;
// `to` empty, seeded differently or not). counters->failed when SlabAlloc
// ran out: `to` is then partial and `from` untouched.
Status LaunchRehash(const DeviceView& from, const DeviceView& to, BatchCounters* counters,
                    cudaStream_t stream);
// Frees every chained slab of the view's lists (not the value slabs).
Status LaunchFreeChains(const DeviceView& view, cudaStream_t stream);
// Writes the live pairs of buckets [first_bucket, last_bucket): pair p's key
// words at keys_out + p * key_words, its value padded to whole words at
// values_out + p * InlineValueWords(value_size), for p < capacity;
// counters->pairs counts every pair found.
Status LaunchScan(const DeviceView& view, uint64_t first_bucket, uint64_t last_bucket,
                  uint64_t* keys_out, uint64_t* values_out, uint64_t capacity,
                  BatchCounters* counters, cudaStream_t stream);

// ---- duplicates within a batch (duplicate_kernels.cu) ----
// Scratch of the sort of one batch of `count` operations.
struct DuplicateScratch {
  uint32_t* sort_keys_in = nullptr;  // count each
  uint32_t* sort_keys_out = nullptr;
  uint32_t* indices_in = nullptr;
  uint32_t* indices_out = nullptr;
  gpkv::gpu::CubTempStorage sort_temp;  // DuplicateSortTempBytes(count)
};
Status DuplicateSortTempBytes(uint64_t count, size_t* bytes);
// Lists (list[0, counters->retries)) the operations of a put batch to run
// again: for each key the batch puts more than once, its last put.
Status LaunchListLastPuts(const DeviceView& view, const BatchArrays& batch,
                          const DuplicateScratch& scratch, uint32_t* list, BatchCounters* counters,
                          cudaStream_t stream);
// Rewrites an erase batch's flags (batch.flags, count of them) so that of
// the operations on one key only the first reports it, when any did.
// `resolved`: count bytes of scratch.
Status LaunchResolveErased(const DeviceView& view, const BatchArrays& batch,
                           const DuplicateScratch& scratch, uint8_t* resolved, cudaStream_t stream);

}  // namespace gpkv::slab_hash::gpu
