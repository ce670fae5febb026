// A warp-agnostic port of the GPHash operations: one thread runs one
// operation alone, reading the candidate slots one after another — the
// "thread-per-operation" baseline GPHash is compared against, on the same
// layout and the same protocol (CAS EMPTY -> INSERT, key and value, fence,
// publish; the duplicate rule's winner). Puts use it in mirror and staged
// mode, where the probe runs in HBM and threads overlap their ordered pool
// stores (GpuKernelVariants::warp_puts); gets and puts use it everywhere with
// GpuKernelVariants::thread_per_op, the benchmark's baseline without warp
// cooperation. Erases, kicks, resize and recovery stay warp-cooperative.
//
// Each function is called by one thread for its own operation; no warp-wide
// intrinsics.
#pragma once

#include <cstdint>

#include "format/hash.h"
#include "tables/gphash/gpu/device_view.h"
#include "tables/gphash/gpu/warp.cuh"
#include "tables/gphash/layout.h"

namespace gpkv::gpu::thread {

using warp::Key;

// The winning VALID copy of `key` (the duplicate rule's), if any, and (for a
// put) the EMPTY slot the warp probe would choose: the top-most level with
// an EMPTY candidate, in it the bucket with the most EMPTY slots, in it the
// lowest slot.
struct ThreadProbe {
  bool found = false;
  GphashCandidate match{};
  uint64_t match_word = 0;
  uint64_t match_value = 0;
  bool has_empty = false;
  GphashCandidate empty{};
  uint64_t empty_word = 0;
};

template <int kKeyWords>
__device__ bool SameKey(const uint8_t* bucket, const GphashDeviceView& view, uint32_t slot,
                        const Key<kKeyWords>& key) {
  const Key<kKeyWords> stored = warp::LoadStoredKey<kKeyWords>(
      bucket + format::KeyOffset(view.slots_per_bucket, view.key_size, slot));
  bool equal = true;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) equal &= stored.words[w] == key.words[w];
  return equal;
}

template <int kKeyWords>
__device__ ThreadProbe ThreadProbeKey(const GphashDeviceView& view, uint32_t levels,
                                      const Key<kKeyWords>& key, const format::KeyHash& hash,
                                      bool want_empty) {
  ThreadProbe probe;
  const uint64_t fingerprint = format::FingerprintOfHash(hash);
  const uint32_t slots = view.slots_per_bucket;
  uint64_t best_rank = format::kNoWinnerRank;
  uint32_t empty_count = 0;
  for (uint32_t level = 0; level < levels; ++level) {
    // Every location, as the warp probe reads them (and breaks ties).
    const format::LevelCandidates buckets =
        format::CandidateBucketsOfLevel(hash, view.hash_locations, view.bucket_counts[level],
                                        format::CandidateOrder::kEveryLocation);
    for (uint32_t i = 0; i < buckets.count; ++i) {
      const uint64_t index = buckets.buckets[i];
      const uint8_t* bucket = warp::IndexBucket(view, level, index);
      uint32_t empties = 0;
      int first_empty = -1;
      uint64_t first_empty_word = 0;
      for (uint32_t slot = 0; slot < slots; ++slot) {
        const uint64_t word = warp::LoadWord(bucket + format::SlotWordOffset(slot));
        if (format::SlotStateOf(word) == format::kSlotEmpty) {
          if (first_empty < 0) {
            first_empty = static_cast<int>(slot);
            first_empty_word = word;
          }
          ++empties;
          continue;
        }
        if (!format::SlotMatches(word, fingerprint)) continue;
        const uint64_t rank = format::WinnerRank(level, index, slot);
        if (rank >= best_rank) continue;
        const uint64_t value =
            warp::LoadWord(bucket + format::ValueWordOffset(slots, view.key_size, slot));
        if (!SameKey(bucket, view, slot, key)) continue;
        best_rank = rank;
        probe.found = true;
        probe.match = GphashCandidate{level, slot, index};
        probe.match_word = word;
        probe.match_value = value;
      }
      // The emptiest bucket of the top-most level with room.
      const bool level_taken = probe.has_empty && probe.empty.level < level;
      if (want_empty && first_empty >= 0 && !level_taken && empties > empty_count) {
        probe.has_empty = true;
        empty_count = empties;
        probe.empty = GphashCandidate{level, static_cast<uint32_t>(first_empty), index};
        probe.empty_word = first_empty_word;
      }
    }
  }
  return probe;
}

// Get of one key by one thread; the slot is read again after key and value
// (seqlock) and the probe repeated if it changed.
template <int kKeyWords>
__device__ bool ThreadGet(const GphashDeviceView& view, const Key<kKeyWords>& key,
                          const format::KeyHash& hash, uint64_t* value) {
  for (;;) {
    ThreadProbe probe = ThreadProbeKey(view, view.level_count, key, hash, false);
    if (!probe.found) return false;
    __threadfence();
    const uint8_t* bucket = warp::IndexBucket(view, probe.match.level, probe.match.bucket);
    if (warp::LoadWord(bucket + format::SlotWordOffset(probe.match.slot)) == probe.match_word) {
      *value = probe.match_value;
      return true;
    }
  }
}

// Insert or update of one key by one thread (warp::WarpPut's protocol).
template <int kKeyWords>
__device__ warp::PutOutcome ThreadPut(const GphashDeviceView& view, const Key<kKeyWords>& key,
                                      const format::KeyHash& hash, uint64_t value_word) {
  const uint64_t fingerprint = format::FingerprintOfHash(hash);
  const uint32_t slots = view.slots_per_bucket;
  for (;;) {
    ThreadProbe probe = ThreadProbeKey(view, view.level_count, key, hash, true);
    if (probe.found) {
      const GphashCandidate& slot = probe.match;
      const uint32_t offset = format::ValueWordOffset(slots, view.key_size, slot.slot);
      warp::PoolStore(view, slot.level, slot.bucket, offset, value_word, kStagedData);
      uint8_t* index_bucket = warp::IndexBucket(view, slot.level, slot.bucket);
      if (warp::WritesBothCopies(view, index_bucket)) {
        warp::StoreWord(index_bucket + offset, value_word);
      }
      __threadfence_system();
      return warp::PutOutcome::kUpdated;
    }
    if (!probe.has_empty) return warp::PutOutcome::kNoRoom;
    const GphashCandidate& slot = probe.empty;
    uint8_t* index_bucket = warp::IndexBucket(view, slot.level, slot.bucket);
    const uint64_t reservation = format::ReserveWord(probe.empty_word);
    if (!warp::CasWord(index_bucket + format::SlotWordOffset(slot.slot), probe.empty_word,
                       reservation)) {
      continue;  // another thread took the slot: probe again
    }
    const uint32_t key_offset = format::KeyOffset(slots, view.key_size, slot.slot);
    const uint32_t value_offset = format::ValueWordOffset(slots, view.key_size, slot.slot);
    const bool both = warp::WritesBothCopies(view, index_bucket);
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) {
      warp::PoolStore(view, slot.level, slot.bucket, key_offset + 8 * w, key.words[w], kStagedData);
      if (both) warp::StoreWord(index_bucket + key_offset + 8 * w, key.words[w]);
    }
    warp::PoolStore(view, slot.level, slot.bucket, value_offset, value_word, kStagedData);
    if (both) warp::StoreWord(index_bucket + value_offset, value_word);
    __threadfence_system();
    const uint64_t published = format::PublishWord(reservation, fingerprint);
    warp::PoolStore(view, slot.level, slot.bucket, format::SlotWordOffset(slot.slot), published,
                    kStagedPublish);
    if (both) warp::StoreWord(index_bucket + format::SlotWordOffset(slot.slot), published);
    __threadfence_system();
    return warp::PutOutcome::kInserted;
  }
}

}  // namespace gpkv::gpu::thread
