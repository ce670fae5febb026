// Launchers of the GPHash kernels (kernels.cu for batches,
// maintenance_kernels.cu for open-time recovery and resize). Each
// launcher enqueues its kernel(s) on `stream`, checks cudaPeekAtLastError and
// names the kernel in any error; none waits for the stream.
//
// Batch arrays are device pointers: keys 8-byte aligned (key_size bytes per
// key), values value_size bytes per value (any alignment), flag arrays one
// byte per operation. Counters are device memory the caller zeroed.
//
// Who may call: backend.cu, open.cu and resize.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpkv/status.h"
#include "gpu/cub_temp_storage.h"
#include "tables/gphash/gpu/device_view.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::CubTempStorage;

// What a batch or maintenance kernel did, summed over its operations.
struct BatchCounters {
  unsigned long long inserted;              // new keys placed
  unsigned long long updated;               // values replaced in place
  unsigned long long erased;                // keys erased
  unsigned long long failed;                // puts / moves that found no EMPTY candidate
  unsigned long long valid;                 // VALID slots counted
  unsigned long long reserved;              // INSERT slots counted or cleared
  unsigned long long duplicates;            // losers of duplicate resolution (counted or erased)
  unsigned long long invalid;               // slot words with an unknown state
  unsigned long long first_invalid_offset;  // pool offset of the first such word (min)
  unsigned long long kicked;                // resident keys moved to make room (kicks)
};

// ---- within-batch duplicates ----
// A batch acts as if its operations ran in order: of several puts of one key
// the last one counts, of several erases the first one (the later ones find
// the key gone).

// Scratch of the duplicate pass for `count` operations. The pass sorts the
// operations by the low 32 bits of their primary hash (= their bucket in the
// top level), so a kernel that runs them in sorted order (indices_out) walks
// the levels in address order: fewer distinct pages in flight, which is what
// limits random access to a host mapping.
struct DedupeScratch {
  uint32_t* sort_keys_in;    // count
  uint32_t* sort_keys_out;   // count
  uint32_t* indices_in;      // count
  uint32_t* indices_out;     // count: batch index of the operation at each sorted position
  CubTempStorage sort_temp;  // DedupeSortTempBytes
  uint32_t* leaders;         // count (gets only): sorted position of the key's first operation
  CubTempStorage scan_temp;  // DedupeScanTempBytes (gets only)
};
// Phase one of CUB's temporary storage (gpu/cub_temp_storage.h) for sorting
// / scanning `count` operations.
Status DedupeSortTempBytes(size_t count, size_t* bytes);
Status DedupeScanTempBytes(size_t count, size_t* bytes);
// keep[i] = 1 unless a later operation (keep_first: an earlier one) of the
// batch has the same key; scratch.indices_out holds the sorted order.
Status LaunchMarkSurvivors(const GphashDeviceView& view, const uint8_t* keys, size_t count,
                           const DedupeScratch& scratch, bool keep_first, uint8_t* keep,
                           cudaStream_t stream);

// ---- batches ----

// values[i] = the value of keys[i], or zero bytes; found[i] (if found is not
// null) = 1 / 0.
Status LaunchGet(const GphashDeviceView& view, const uint8_t* keys, uint8_t* values, uint8_t* found,
                 size_t count, cudaStream_t stream);
// Graphs of one get-kernel node, which small get batches launch instead of
// the kernel (LaunchGetGraph): on the H100 a graph launch with its node's
// parameters replaced cost the host 2.75 us against 3.5 for the kernel's
// launch, and a call with its wait 10.9 against 11.7-12.0 us
// (docs/bench/host-batches.md). One graph per get kernel launched so
// far. Launches of one graph run one after another, so a GetGraphs belongs to
// one workspace: one caller at a time, one stream.
class GetGraphs {
 public:
  GetGraphs() = default;
  ~GetGraphs();
  GetGraphs(const GetGraphs&) = delete;
  GetGraphs& operator=(const GetGraphs&) = delete;

  struct Graph {
    const void* func;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaGraphNode_t node;
  };
  // The graph of kernel `func`, or null.
  Graph* Find(const void* func);
  // Takes a graph of kernel `func` (instantiated; destroyed with this).
  Graph* Add(const Graph& graph);

 private:
  std::vector<Graph> graphs_;
};

// LaunchGet's answers, by a launch of the get kernel's graph in `graphs`
// (made on first use) with this batch's parameters.
Status LaunchGetGraph(GetGraphs& graphs, const GphashDeviceView& view, const uint8_t* keys,
                      uint8_t* values, uint8_t* found, size_t count, cudaStream_t stream);

// The same answers, with the batch sorted by bucket first and each distinct
// key looked up once (its answer copied to the repeats): for direct mode,
// where a hot key read by many warps at once and scattered pages cost most.
Status LaunchGetSorted(const GphashDeviceView& view, const uint8_t* keys, uint8_t* values,
                       uint8_t* found, size_t count, const DedupeScratch& scratch,
                       cudaStream_t stream);

// Where a write kernel hands its batch's counters to the host itself, so
// that a small batch needs no copy after its kernel: the kernel's last block
// (a ticket in *blocks_done, which it leaves zero again) copies the counters
// to `host`. Null host (the default): the caller copies them.
struct CountersToHost {
  BatchCounters* host = nullptr;        // page-locked host memory, as kernels address it
  unsigned int* blocks_done = nullptr;  // device memory, zero between batches
};

// Inserts or updates operation i (i < count), which is operation
// op_index[i] of the batch when op_index is not null. Operations with
// keep[op] == 0 are skipped (keep may be null). Operations that found no
// EMPTY candidate are appended to failed[] (their batch index) and counted.
Status LaunchPut(const GphashDeviceView& view, const uint8_t* keys, const uint8_t* values,
                 const uint8_t* keep, const uint32_t* op_index, size_t count, uint32_t* failed,
                 BatchCounters* counters, cudaStream_t stream,
                 const CountersToHost& to_host = CountersToHost());

// For each of the `count` failed puts ops[i] (batch indices into keys), one
// after another in one warp: frees a slot among the key's candidate buckets
// by moving one resident key to another of its own candidate buckets (a
// kick, as cpu::CpuBackend does before it resizes), unless one is free already.
// Counts the moves in counters->kicked. One warp on purpose: a slot a kick
// empties may be refilled by the next kick, and one warp keeps the pool's
// stores (and staged mode's log) in that order. The caller retries the puts.
Status LaunchKick(const GphashDeviceView& view, const uint8_t* keys, const uint32_t* ops,
                  size_t count, BatchCounters* counters, cudaStream_t stream);

// Erases operation i (op_index[i] when op_index is not null; skipping
// keep[op] == 0); erased[op] (if not null) = 1 when the key was present.
Status LaunchErase(const GphashDeviceView& view, const uint8_t* keys, const uint8_t* keep,
                   const uint32_t* op_index, uint8_t* erased, size_t count, BatchCounters* counters,
                   cudaStream_t stream, const CountersToHost& to_host = CountersToHost());

// ---- recovery and resize (maintenance_kernels.cu) ----

// Rearranges the `bucket_count` buckets at `level`, a level's bytes just
// copied from the pool into the mirror, into the mirror's layout in place
// (MirrorKeyOffset, device_view.h). Slot words do not move.
Status LaunchToMirrorLayout(uint8_t* level, uint64_t bucket_count, uint32_t slots_per_bucket,
                            uint32_t key_size, uint32_t bucket_bytes, cudaStream_t stream);

// Counts VALID / INSERT / invalid slot words of level `level`; pool_offset is
// the level's offset in the pool (for first_invalid_offset).
Status LaunchCountSlots(const GphashDeviceView& view, uint32_t level, uint64_t pool_offset,
                        BatchCounters* counters, cudaStream_t stream);
// Slots [first, end) of a level (slot = bucket * slots_per_bucket + slot in
// bucket). The kernels below cover one range per launch, so that staged mode
// can bound the stores of one launch (staged.cu).
struct SlotRange {
  uint64_t first;
  uint64_t end;
};

// Clears the INSERT slots of `range` of level `level` (dry_run: counts them
// only).
Status LaunchClearReserved(const GphashDeviceView& view, uint32_t level, SlotRange range,
                           bool dry_run, BatchCounters* counters, cudaStream_t stream);
// Erases every VALID slot in `range` of level `level` whose key is VALID in a
// slot that wins the duplicate rule (dry_run: counts them only).
Status LaunchResolveDuplicates(const GphashDeviceView& view, uint32_t level, SlotRange range,
                               bool dry_run, BatchCounters* counters, cudaStream_t stream);
// Moves every VALID slot in `range` of the bottom level (view.level_count -
// 1) into the levels above it, each by insert-then-erase; a key already VALID
// above is only erased below. Keys that found no room stay and count as
// failed.
Status LaunchMigrateBottomLevel(const GphashDeviceView& view, SlotRange range,
                                BatchCounters* counters, cudaStream_t stream);

}  // namespace gpkv::gphash::gpu
