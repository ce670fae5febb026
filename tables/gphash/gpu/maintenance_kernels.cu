// Maintenance kernels of the GPHash GPU backend: slot census, open-time
// recovery (INSERT slots cleared, duplicates resolved) and the move of the
// bottom level's keys during a resize. One thread per slot of a level; warps
// share out the slots that need a probe (warp.cuh).
#include "tables/gphash/gpu/kernel_common.cuh"
#include "tables/gphash/gpu/kernels.h"

namespace gpkv::gpu {
namespace {

using warp::Key;
using warp::kFullMask;

// The slot of `level` that thread `index` covers.
struct LevelSlot {
  uint64_t bucket;
  uint32_t slot;
  uint8_t* index_bucket;
};

__device__ __forceinline__ uint64_t ThreadIndex() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ LevelSlot SlotOfThread(const GphashView& view, uint32_t level,
                                                  uint64_t index) {
  LevelSlot out;
  out.bucket = index / view.slots_per_bucket;
  out.slot = static_cast<uint32_t>(index % view.slots_per_bucket);
  out.index_bucket = warp::IndexBucket(view, level, out.bucket);
  return out;
}

__device__ __forceinline__ uint64_t SlotsOfLevel(const GphashView& view, uint32_t level) {
  return view.bucket_counts[level] * view.slots_per_bucket;
}

__global__ void __launch_bounds__(kBlockThreads)
    CountSlotsKernel(GphashView view, uint32_t level, uint64_t pool_offset,
                     BatchCounters* counters) {
  const uint64_t index = ThreadIndex();
  unsigned long long valid = 0, reserved = 0, invalid = 0;
  if (index < SlotsOfLevel(view, level)) {
    LevelSlot at = SlotOfThread(view, level, index);
    uint64_t word = warp::LoadWord(at.index_bucket + format::SlotWordOffset(at.slot));
    if (!format::SlotStateIsKnown(word)) {
      invalid = 1;
      atomicMin(&counters->first_invalid_offset,
                static_cast<unsigned long long>(pool_offset + at.bucket * view.bucket_bytes +
                                                format::SlotWordOffset(at.slot)));
    } else if (format::SlotStateOf(word) == format::kSlotValid) {
      valid = 1;
    } else if (format::SlotStateOf(word) == format::kSlotInsert) {
      reserved = 1;
    }
  }
  AddWarpCount(&counters->valid, valid);
  AddWarpCount(&counters->reserved, reserved);
  AddWarpCount(&counters->invalid, invalid);
}

__global__ void __launch_bounds__(kBlockThreads)
    ClearReservedKernel(GphashView view, uint32_t level, SlotRange range, bool dry_run,
                        BatchCounters* counters) {
  const uint64_t index = range.first + ThreadIndex();
  unsigned long long cleared = 0;
  if (index < range.end) {
    LevelSlot at = SlotOfThread(view, level, index);
    uint64_t word = warp::LoadWord(at.index_bucket + format::SlotWordOffset(at.slot));
    if (format::SlotStateOf(word) == format::kSlotInsert && format::FingerprintOf(word) == 0) {
      if (dry_run || warp::EraseSlot(view, level, at.bucket, at.slot, word)) cleared = 1;
    }
  }
  if (cleared != 0 && !dry_run) __threadfence_system();
  AddWarpCount(&counters->reserved, cleared);
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    ResolveDuplicatesKernel(GphashView view, uint32_t level, SlotRange range, bool dry_run,
                            BatchCounters* counters) {
  const uint64_t index = range.first + ThreadIndex();
  bool has_op = false;
  LevelSlot at{};
  uint64_t word = 0;
  Key<kKeyWords> my_key{};
  if (index < range.end) {
    at = SlotOfThread(view, level, index);
    word = warp::LoadWord(at.index_bucket + format::SlotWordOffset(at.slot));
    has_op = format::SlotStateOf(word) == format::kSlotValid;
    if (has_op) {
      my_key = warp::LoadStoredKey<kKeyWords>(
          at.index_bucket + format::KeyOffset(view.slots_per_bucket, view.key_size, at.slot));
    }
  }
  const uint64_t my_rank = WinnerRank(level, at.bucket, at.slot);
  unsigned long long losers = 0;
  unsigned active = __ballot_sync(kFullMask, has_op);
  while (active != 0) {
    const int source = __ffs(active) - 1;
    active &= active - 1;
    Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    uint64_t rank = __shfl_sync(kFullMask, my_rank, source);
    warp::Probe probe;
    warp::ProbeKey(view, view.level_count, key, warp::HashOf(key, view.hash_seed), 0, probe);
    if (warp::LaneId() == static_cast<uint32_t>(source) && probe.match_rank < rank) {
      if (dry_run || warp::EraseSlot(view, level, at.bucket, at.slot, word)) ++losers;
    }
  }
  if (losers != 0 && !dry_run) __threadfence_system();
  AddWarpCount(&counters->duplicates, losers);
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    MigrateBottomKernel(GphashView view, SlotRange range, BatchCounters* counters) {
  const uint32_t bottom = view.level_count - 1;
  const uint64_t index = range.first + ThreadIndex();
  bool has_op = false;
  LevelSlot at{};
  uint64_t word = 0;
  uint64_t my_value = 0;
  Key<kKeyWords> my_key{};
  if (index < range.end) {
    at = SlotOfThread(view, bottom, index);
    word = warp::LoadWord(at.index_bucket + format::SlotWordOffset(at.slot));
    has_op = format::SlotStateOf(word) == format::kSlotValid;
    if (has_op) {
      const uint32_t slots = view.slots_per_bucket;
      my_key = warp::LoadStoredKey<kKeyWords>(at.index_bucket +
                                              format::KeyOffset(slots, view.key_size, at.slot));
      my_value =
          warp::LoadWord(at.index_bucket + format::ValueWordOffset(slots, view.key_size, at.slot));
    }
  }
  unsigned long long moved = 0, failed = 0;
  unsigned active = __ballot_sync(kFullMask, has_op);
  while (active != 0) {
    const int source = __ffs(active) - 1;
    active &= active - 1;
    Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    uint64_t value = __shfl_sync(kFullMask, my_value, source);
    // A copy already above (an interrupted resize) wins over this one and
    // may be newer: keep it, drop this one.
    warp::PutOutcome outcome =
        warp::WarpPut(view, bottom, key, warp::HashOf(key, view.hash_seed), value, false);
    if (warp::LaneId() == static_cast<uint32_t>(source)) {
      if (outcome == warp::PutOutcome::kNoRoom) {
        ++failed;
      } else {
        warp::EraseSlot(view, bottom, at.bucket, at.slot, word);
        __threadfence_system();
        ++moved;
      }
    }
  }
  AddWarpCount(&counters->inserted, moved);
  AddWarpCount(&counters->failed, failed);
}

}  // namespace

Status LaunchCountSlots(const GphashView& view, uint32_t level, uint64_t pool_offset,
                        BatchCounters* counters, cudaStream_t stream) {
  uint64_t slots = view.bucket_counts[level] * view.slots_per_bucket;
  CountSlotsKernel<<<BlocksFor(slots), kBlockThreads, 0, stream>>>(view, level, pool_offset,
                                                                   counters);
  return CheckLaunch("CountSlotsKernel");
}

Status LaunchClearReserved(const GphashView& view, uint32_t level, SlotRange range, bool dry_run,
                           BatchCounters* counters, cudaStream_t stream) {
  if (range.end <= range.first) return Status::OK();
  ClearReservedKernel<<<BlocksFor(range.end - range.first), kBlockThreads, 0, stream>>>(
      view, level, range, dry_run, counters);
  return CheckLaunch("ClearReservedKernel");
}

Status LaunchResolveDuplicates(const GphashView& view, uint32_t level, SlotRange range,
                               bool dry_run, BatchCounters* counters, cudaStream_t stream) {
  if (range.end <= range.first) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    ResolveDuplicatesKernel<decltype(words)::value>
        <<<BlocksFor(range.end - range.first), kBlockThreads, 0, stream>>>(view, level, range,
                                                                           dry_run, counters);
    return CheckLaunch("ResolveDuplicatesKernel");
  });
}

Status LaunchMigrateBottomLevel(const GphashView& view, SlotRange range, BatchCounters* counters,
                                cudaStream_t stream) {
  if (view.level_count < 2) {
    return Status::InvalidArgument("resize: a level set being resized has at least two levels");
  }
  if (range.end <= range.first) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    MigrateBottomKernel<decltype(words)::value>
        <<<BlocksFor(range.end - range.first), kBlockThreads, 0, stream>>>(view, range, counters);
    return CheckLaunch("MigrateBottomKernel");
  });
}

}  // namespace gpkv::gpu
