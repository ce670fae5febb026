// Maintenance kernels of the GPHash GPU backend: slot census, open-time
// recovery (INSERT slots cleared, duplicates resolved) and the move of the
// bottom level's keys during a resize. One thread per slot of a level; warps
// share out the slots that need a probe (warp::ShareWork, warp.cuh).
#include <algorithm>

#include "tables/gphash/gpu/kernel_common.cuh"
#include "tables/gphash/gpu/kernels.h"

namespace gpkv::gphash::gpu {
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

__device__ __forceinline__ LevelSlot SlotOfThread(const GphashDeviceView& view, uint32_t level,
                                                  uint64_t index) {
  LevelSlot out;
  out.bucket = index / view.slots_per_bucket;
  out.slot = static_cast<uint32_t>(index % view.slots_per_bucket);
  out.index_bucket = warp::IndexBucket(view, level, out.bucket);
  return out;
}

__device__ __forceinline__ uint64_t SlotsOfLevel(const GphashDeviceView& view, uint32_t level) {
  return view.bucket_counts[level] * view.slots_per_bucket;
}

// The slot of `level` that position `index` of `range` covers, if in range:
// *at and its slot word *word as read now. True when the slot is VALID.
__device__ __forceinline__ bool LoadValidSlot(const GphashDeviceView& view, uint32_t level,
                                              SlotRange range, uint64_t index, LevelSlot* at,
                                              uint64_t* word) {
  if (index >= range.end) return false;
  *at = SlotOfThread(view, level, index);
  *word = warp::LoadWord(at->index_bucket + gphash::SlotWordOffset(at->slot));
  return gphash::SlotStateOf(*word) == gphash::kSlotValid;
}

__global__ void __launch_bounds__(kBlockThreads)
    CountSlotsKernel(GphashDeviceView view, uint32_t level, uint64_t pool_offset,
                     BatchCounters* counters) {
  const uint64_t index = ThreadIndex();
  unsigned long long valid = 0, reserved = 0, invalid = 0;
  if (index < SlotsOfLevel(view, level)) {
    LevelSlot at = SlotOfThread(view, level, index);
    uint64_t word = warp::LoadWord(at.index_bucket + gphash::SlotWordOffset(at.slot));
    if (!gphash::SlotStateIsKnown(word)) {
      invalid = 1;
      atomicMin(&counters->first_invalid_offset,
                static_cast<unsigned long long>(pool_offset + at.bucket * view.bucket_bytes +
                                                gphash::SlotWordOffset(at.slot)));
    } else if (gphash::SlotStateOf(word) == gphash::kSlotValid) {
      valid = 1;
    } else if (gphash::SlotStateOf(word) == gphash::kSlotInsert) {
      reserved = 1;
    }
  }
  AddWarpCount(&counters->valid, valid);
  AddWarpCount(&counters->reserved, reserved);
  AddWarpCount(&counters->invalid, invalid);
}

__global__ void __launch_bounds__(kBlockThreads)
    ClearReservedKernel(GphashDeviceView view, uint32_t level, SlotRange range, bool dry_run,
                        BatchCounters* counters) {
  const uint64_t index = range.first + ThreadIndex();
  unsigned long long cleared = 0;
  if (index < range.end) {
    LevelSlot at = SlotOfThread(view, level, index);
    uint64_t word = warp::LoadWord(at.index_bucket + gphash::SlotWordOffset(at.slot));
    if (gphash::SlotStateOf(word) == gphash::kSlotInsert && gphash::FingerprintOf(word) == 0) {
      if (dry_run || warp::EraseSlot(view, level, at.bucket, at.slot, word)) cleared = 1;
    }
  }
  if (cleared != 0 && !dry_run) __threadfence_system();
  AddWarpCount(&counters->reserved, cleared);
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    ResolveDuplicatesKernel(GphashDeviceView view, uint32_t level, SlotRange range, bool dry_run,
                            BatchCounters* counters) {
  LevelSlot at{};
  uint64_t word = 0;
  const bool has_op = LoadValidSlot(view, level, range, range.first + ThreadIndex(), &at, &word);
  Key<kKeyWords> my_key{};
  if (has_op) {
    my_key = warp::LoadStoredKey<kKeyWords>(at.index_bucket + IndexKeyOffset(view, at.slot));
  }
  const uint64_t my_rank = gphash::WinnerRank(level, at.bucket, at.slot);
  unsigned long long losers = 0;
  warp::ShareWork(kFullMask, has_op, [&](int source) {
    const Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    const uint64_t rank = __shfl_sync(kFullMask, my_rank, source);
    warp::Probe probe;
    warp::ProbeKey(view, view.level_count, key, warp::HashOf(key, view.hash_seed), 0, probe);
    if (warp::LaneId() == static_cast<uint32_t>(source) && probe.match_rank < rank) {
      if (dry_run || warp::EraseSlot(view, level, at.bucket, at.slot, word)) ++losers;
    }
  });
  if (losers != 0 && !dry_run) __threadfence_system();
  AddWarpCount(&counters->duplicates, losers);
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    MigrateBottomKernel(GphashDeviceView view, SlotRange range, BatchCounters* counters) {
  const uint32_t bottom = view.level_count - 1;
  LevelSlot at{};
  uint64_t word = 0;
  const bool has_op = LoadValidSlot(view, bottom, range, range.first + ThreadIndex(), &at, &word);
  uint64_t my_value = 0;
  Key<kKeyWords> my_key{};
  if (has_op) {
    my_key = warp::LoadStoredKey<kKeyWords>(at.index_bucket + IndexKeyOffset(view, at.slot));
    my_value = warp::LoadWord(at.index_bucket + IndexValueWordOffset(view, at.slot));
  }
  unsigned long long moved = 0, failed = 0;
  warp::ShareWork(kFullMask, has_op, [&](int source) {
    const Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    const uint64_t value = __shfl_sync(kFullMask, my_value, source);
    // A copy already above (an interrupted resize) wins over this one and
    // may be newer: keep it, drop this one.
    const warp::PutOutcome outcome =
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
  });
  AddWarpCount(&counters->inserted, moved);
  AddWarpCount(&counters->failed, failed);
}

// One warp per bucket (a grid-stride loop over buckets): the lanes read the
// bucket's keys and value words (the pool's layout) into registers, then
// write each where the mirror keeps it. No other warp touches the bucket.
constexpr uint32_t kMaxEntryWords = gphash::kMaxSlotsPerBucket * (format::kMaxKeySize / 8 + 1);
constexpr uint32_t kEntryWordsPerLane = (kMaxEntryWords + warp::kWarpSize - 1) / warp::kWarpSize;

__global__ void __launch_bounds__(kBlockThreads)
    ToMirrorLayoutKernel(uint8_t* level, uint64_t bucket_count, uint32_t slots, uint32_t key_size,
                         uint32_t bucket_bytes) {
  const uint32_t lane = warp::LaneId();
  const uint32_t key_words = key_size / 8;
  const uint32_t keys_end = slots * key_words;  // entry words [0, keys_end) are keys
  const uint32_t words = slots * (key_words + 1);
  const uint64_t warps = uint64_t{gridDim.x} * (blockDim.x / warp::kWarpSize);
  for (uint64_t bucket = ThreadIndex() / warp::kWarpSize; bucket < bucket_count; bucket += warps) {
    auto* entries = reinterpret_cast<uint64_t*>(level + bucket * bucket_bytes + slots * 8);
    uint64_t held[kEntryWordsPerLane];
#pragma unroll
    for (uint32_t i = 0; i < kEntryWordsPerLane; ++i) {
      const uint32_t word = lane + i * warp::kWarpSize;
      if (word < words) held[i] = entries[word];
    }
    __syncwarp();
#pragma unroll
    for (uint32_t i = 0; i < kEntryWordsPerLane; ++i) {
      const uint32_t word = lane + i * warp::kWarpSize;
      if (word >= words) continue;
      // Pool: key word j of slot s at s * key_words + j, value word of s at
      // keys_end + s. Mirror: slot s's key words, then its value word.
      const uint32_t slot = word < keys_end ? word / key_words : word - keys_end;
      const uint32_t within = word < keys_end ? word % key_words : key_words;
      entries[slot * (key_words + 1) + within] = held[i];
    }
    __syncwarp();
  }
}

}  // namespace

Status LaunchToMirrorLayout(uint8_t* level, uint64_t bucket_count, uint32_t slots_per_bucket,
                            uint32_t key_size, uint32_t bucket_bytes, cudaStream_t stream) {
  if (bucket_count == 0) return Status::OK();
  constexpr uint64_t kWarpsPerBlock = kBlockThreads / warp::kWarpSize;
  const uint64_t blocks =
      std::min<uint64_t>((bucket_count + kWarpsPerBlock - 1) / kWarpsPerBlock, uint64_t{1} << 16);
  ToMirrorLayoutKernel<<<static_cast<unsigned int>(blocks), kBlockThreads, 0, stream>>>(
      level, bucket_count, slots_per_bucket, key_size, bucket_bytes);
  return CheckLaunch("ToMirrorLayoutKernel");
}

Status LaunchCountSlots(const GphashDeviceView& view, uint32_t level, uint64_t pool_offset,
                        BatchCounters* counters, cudaStream_t stream) {
  uint64_t slots = view.bucket_counts[level] * view.slots_per_bucket;
  CountSlotsKernel<<<BlocksFor(slots), kBlockThreads, 0, stream>>>(view, level, pool_offset,
                                                                   counters);
  return CheckLaunch("CountSlotsKernel");
}

Status LaunchClearReserved(const GphashDeviceView& view, uint32_t level, SlotRange range,
                           bool dry_run, BatchCounters* counters, cudaStream_t stream) {
  if (range.end <= range.first) return Status::OK();
  ClearReservedKernel<<<BlocksFor(range.end - range.first), kBlockThreads, 0, stream>>>(
      view, level, range, dry_run, counters);
  return CheckLaunch("ClearReservedKernel");
}

Status LaunchResolveDuplicates(const GphashDeviceView& view, uint32_t level, SlotRange range,
                               bool dry_run, BatchCounters* counters, cudaStream_t stream) {
  if (range.end <= range.first) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    ResolveDuplicatesKernel<decltype(words)::value>
        <<<BlocksFor(range.end - range.first), kBlockThreads, 0, stream>>>(view, level, range,
                                                                           dry_run, counters);
    return CheckLaunch("ResolveDuplicatesKernel");
  });
}

Status LaunchMigrateBottomLevel(const GphashDeviceView& view, SlotRange range,
                                BatchCounters* counters, cudaStream_t stream) {
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

}  // namespace gpkv::gphash::gpu
