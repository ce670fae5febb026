// Warp-level operations on a GPHash table (tables/gphash/layout.h), called by
// the kernels of kernels.cu and maintenance_kernels.cu: one-shot probe of
// every candidate slot of a key (one slot per lane, rounds of 32 when a key
// has more candidates), get, put (insert or update), erase, and the pieces of
// resize and recovery.
//
// Work sharing (WCWS, warp::ShareWork in gpu/warp_work_sharing.cuh): each
// lane of a kernel holds one operation; the warp runs the active lanes'
// operations one at a time, all 32 lanes cooperating on each. Every function
// here is called by all 32 lanes of a warp with the same arguments
// (warp-uniform key, hash, view) and under the full mask, except those that
// take a tile mask (TileGet and its helpers: the lanes of the tile, under
// its mask); "uniform" results are the same in every lane on return, "held
// by lane L" results are meaningful in lane L only.
//
// Memory: slot words, keys and values of the index copy are read with
// volatile loads (never cached in L1: other warps and other batches write
// them); slot words change by atomicCAS. Writes to the pool are plain stores
// ordered by __threadfence_system(): key and value first, then the slot word
// that publishes them (PoolStore; in staged mode, entries of a log the host
// applies in that order).
#pragma once

#include <cstdint>

#include "format/hash.h"
#include "gpu/warp_work_sharing.cuh"
#include "tables/gphash/gpu/device_view.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash::gpu::warp {

using gpkv::gpu::warp::kFullMask;
using gpkv::gpu::warp::kWarpSize;
using gpkv::gpu::warp::LaneId;
using gpkv::gpu::warp::ShareWork;

__device__ __forceinline__ uint64_t LoadWord(const uint8_t* address) {
  return *reinterpret_cast<const volatile uint64_t*>(address);
}
__device__ __forceinline__ void StoreWord(uint8_t* address, uint64_t value) {
  *reinterpret_cast<volatile uint64_t*>(address) = value;
}
// Orders this thread's loads before it against its loads after it, at GPU
// scope: an acquire-release fence, which is all a seqlock reader needs
// (__threadfence() is a sequentially consistent fence, a heavier barrier:
// 20% of a 2048-get TileGet kernel's stall samples sat on it).
__device__ __forceinline__ void FenceLoads() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ bool CasWord(uint8_t* address, uint64_t expected, uint64_t desired) {
  auto* word = reinterpret_cast<unsigned long long*>(address);
  return atomicCAS(word, expected, desired) == expected;
}

// A key as kKeyWords little-endian 64-bit words (key_size = 8 * kKeyWords).
template <int kKeyWords>
struct Key {
  uint64_t words[kKeyWords];
};

template <int kKeyWords>
__device__ __forceinline__ bool SameKey(const Key<kKeyWords>& a, const Key<kKeyWords>& b) {
  bool equal = true;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) equal &= a.words[w] == b.words[w];
  return equal;
}

// Reads a key from a batch array. REQUIRES: `source` is 8-byte aligned.
template <int kKeyWords>
__device__ __forceinline__ Key<kKeyWords> LoadKey(const uint8_t* source) {
  Key<kKeyWords> key;
  const uint64_t* words = reinterpret_cast<const uint64_t*>(source);
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) key.words[w] = words[w];
  return key;
}

// Reads a key stored in a bucket (volatile: it may be rewritten).
template <int kKeyWords>
__device__ __forceinline__ Key<kKeyWords> LoadStoredKey(const uint8_t* source) {
  Key<kKeyWords> key;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) key.words[w] = LoadWord(source + 8 * w);
  return key;
}

// Every lane of `mask` (which calls it): lane `source_lane`'s key.
template <int kKeyWords>
__device__ __forceinline__ Key<kKeyWords> ShuffleKey(const Key<kKeyWords>& key, int source_lane,
                                                     unsigned mask = kFullMask) {
  Key<kKeyWords> out;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) out.words[w] = __shfl_sync(mask, key.words[w], source_lane);
  return out;
}

template <int kKeyWords>
__device__ __forceinline__ format::KeyHash HashOf(const Key<kKeyWords>& key, uint64_t seed) {
  return format::HashKey(reinterpret_cast<const uint8_t*>(key.words), 8 * kKeyWords, seed);
}

// A value of `size` bytes (1..8) as its zero-padded value word.
__device__ __forceinline__ uint64_t LoadValue(const uint8_t* source, uint32_t size) {
  if (size == 8 && (reinterpret_cast<uintptr_t>(source) & 7) == 0) {
    return *reinterpret_cast<const uint64_t*>(source);
  }
  uint64_t value = 0;
  for (uint32_t b = 0; b < size; ++b) value |= uint64_t{source[b]} << (8 * b);
  return value;
}
__device__ __forceinline__ void StoreValue(uint8_t* target, uint64_t value, uint32_t size) {
  if (size == 8 && (reinterpret_cast<uintptr_t>(target) & 7) == 0) {
    *reinterpret_cast<uint64_t*>(target) = value;
    return;
  }
  for (uint32_t b = 0; b < size; ++b) target[b] = static_cast<uint8_t>(value >> (8 * b));
}

// Minimum of `value` over the warp (all lanes receive it).
__device__ __forceinline__ uint64_t WarpMin(uint64_t value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    uint64_t other = __shfl_xor_sync(kFullMask, value, offset);
    value = other < value ? other : value;
  }
  return value;
}

// The copy of a bucket where probes read and the CAS arbitrates: the BktCache
// copy when the bucket is cached, else the index level's (pool or mirror).
// Writers and anything else the table orders against cache reloads only
// (BktCache::Reload); gets racing a reload use AcquireForGet.
__device__ __forceinline__ uint8_t* IndexBucket(const GphashDeviceView& view, uint32_t level,
                                                uint64_t bucket) {
  if (view.cache.slot_of != nullptr) {
    const uint32_t slot = *reinterpret_cast<const volatile uint32_t*>(
        &view.cache.slot_of[view.cache.level_base[level] + bucket]);
    if (slot != 0) return view.cache.buckets + uint64_t{slot - 1} * view.bucket_bytes;
  }
  return view.index_levels[level] + bucket * view.bucket_bytes;
}
// True when stores to `index_bucket` (an IndexBucket) must be repeated in
// the pool: it is the mirror's copy or the BktCache's.
__device__ __forceinline__ bool WritesBothCopies(const GphashDeviceView& view,
                                                 const uint8_t* index_bucket) {
  return view.mirrored ||
         (view.cache.slot_of != nullptr && index_bucket >= view.cache.buckets &&
          index_bucket < view.cache.buckets + view.cache.capacity * view.bucket_bytes);
}
__device__ __forceinline__ uint8_t* PoolBucket(const GphashDeviceView& view, uint32_t level,
                                               uint64_t bucket) {
  return view.pool_levels[level] + bucket * view.bucket_bytes;
}

// A get's hold on the copy of one bucket it reads (AcquireForGet).
struct GetHold {
  const uint8_t* bucket;
  uint32_t cache_slot;  // held by the tile's first lane: BktCache slot + 1, 0 for none
};

// Bucket reads of one lane's gets: from the BktCache and from the pool.
struct ReadTally {
  unsigned long long cache = 0;
  unsigned long long pool = 0;
};

// Called by the lanes of a tile (tile_mask, first lane tile_base) with the
// same level and bucket: the copy of the bucket the tile reads. With a
// BktCache the first lane counts the access (LFU) and, if the bucket is
// cached, takes a reference on its cache slot and then checks that the slot
// still holds the bucket: a reload that evicts it clears slot_of and
// bucket_of first and then waits for the slot's references to drain
// (BktCache's EvictKernel), so either the get sees the bucket gone and reads
// the pool's copy (the same bytes: writers store to both) or the reload
// waits for it. Pair with ReleaseForGet.
__device__ __forceinline__ GetHold AcquireForGet(const GphashDeviceView& view, unsigned tile_mask,
                                                 uint32_t tile_base, uint32_t level,
                                                 uint64_t bucket, ReadTally& tally) {
  GetHold hold{view.index_levels[level] + bucket * view.bucket_bytes, 0};
  const BktCacheView& cache = view.cache;
  if (cache.slot_of == nullptr) return hold;
  auto address = reinterpret_cast<unsigned long long>(hold.bucket);
  if (LaneId() == tile_base) {
    const uint64_t id = cache.level_base[level] + bucket;
    atomicAdd(&cache.counts[id], 1u);
    const uint32_t slot = *reinterpret_cast<const volatile uint32_t*>(&cache.slot_of[id]);
    if (slot != 0) {
      atomicAdd(&cache.refs[slot - 1], 1u);
      __threadfence();
      if (*reinterpret_cast<const volatile uint64_t*>(&cache.bucket_of[slot - 1]) == id) {
        __threadfence();  // the slot's bytes were written before bucket_of named it
        hold.cache_slot = slot;
        address = reinterpret_cast<unsigned long long>(cache.buckets +
                                                       uint64_t{slot - 1} * view.bucket_bytes);
      } else {
        atomicSub(&cache.refs[slot - 1], 1u);
      }
    }
    if (hold.cache_slot != 0) {
      ++tally.cache;
    } else {
      ++tally.pool;
    }
  }
  hold.bucket = reinterpret_cast<const uint8_t*>(__shfl_sync(tile_mask, address, tile_base));
  __syncwarp(tile_mask);
  return hold;
}
__device__ __forceinline__ void ReleaseForGet(const GphashDeviceView& view, unsigned tile_mask,
                                              uint32_t tile_base, const GetHold& hold) {
  __syncwarp(tile_mask);
  if (LaneId() == tile_base && hold.cache_slot != 0) {
    atomicSub(&view.cache.refs[hold.cache_slot - 1], 1u);
  }
}

// Stores `word` at byte `offset` of bucket `bucket` of level `level` in the
// pool: in place, or (staged mode) appended to the view's staged log in the
// order the stores happen (one thread's stores keep their program order).
__device__ __forceinline__ void PoolStore(const GphashDeviceView& view, uint32_t level,
                                          uint64_t bucket, uint32_t offset, uint64_t word,
                                          StagedStoreKind kind) {
  if (view.staged_log == nullptr) {
    StoreWord(PoolBucket(view, level, bucket) + offset, word);
    return;
  }
  StagedLog* log = view.staged_log;
  unsigned long long at = atomicAdd(&log->count, 1ull);
  if (at < log->capacity) {
    uint64_t pool_offset = view.pool_offsets[level] + bucket * view.bucket_bytes + offset;
    log->entries[at] = StagedStore{pool_offset | kind, word};
  }
}

// The candidate slot one lane reads in a round of a probe.
struct LaneCandidate {
  bool in_range = false;  // false: the round has fewer candidates left than lanes
  GphashCandidate slot{};
  uint8_t* bucket = nullptr;  // the index copy of its bucket
  uint64_t word = 0;          // its slot word as read
};

// This lane's candidate in the round of a probe over `candidates` candidate
// slots of `hash` that starts at candidate `base`: candidate base + lane, if
// in range, with the index copy of its bucket and its slot word as read now.
__device__ __forceinline__ LaneCandidate LoadLaneCandidate(const GphashDeviceView& view,
                                                           const format::KeyHash& hash,
                                                           uint32_t candidates, uint32_t base) {
  LaneCandidate out;
  const uint32_t candidate = base + LaneId();
  out.in_range = candidate < candidates;
  if (out.in_range) {
    out.slot = CandidateOf(view, hash, candidate);
    out.bucket = IndexBucket(view, out.slot.level, out.slot.bucket);
    out.word = LoadWord(out.bucket + gphash::SlotWordOffset(out.slot.slot));
  }
  return out;
}

// What one probe of a key found.
struct Probe {
  // Uniform. match_lane < 0: the key is VALID in no candidate slot.
  uint64_t match_rank = gphash::kNoWinnerRank;
  int match_lane = -1;
  // Uniform. empty_lane < 0: no candidate slot is EMPTY (kWantEmpty only).
  int empty_lane = -1;
  uint32_t empty_level = ~0u;
  uint32_t empty_count = 0;
  // Held by match_lane: the winning slot (duplicate rule) and its slot word
  // as read.
  GphashCandidate match_slot{};
  uint64_t match_word = 0;
  // Held by empty_lane: the EMPTY slot chosen for an insert and its word.
  GphashCandidate empty_slot{};
  uint64_t empty_word = 0;
};

enum ProbeFlags : uint32_t {
  kWantEmpty = 2,     // choose an EMPTY slot for an insert
  kEraseMatches = 4,  // CAS every matching slot VALID -> EMPTY
};

// Probes the candidates of `key` in levels [0, levels) of `view`. The insert
// choice: the top-most level with an EMPTY candidate, in it the bucket with
// the most EMPTY slots, in it the lowest EMPTY slot. With kEraseMatches,
// *erased (uniform) says whether this call erased a slot.
template <int kKeyWords>
__device__ void ProbeKey(const GphashDeviceView& view, uint32_t levels, const Key<kKeyWords>& key,
                         const format::KeyHash& hash, uint32_t flags, Probe& probe,
                         bool* erased = nullptr) {
  const uint32_t lane = LaneId();
  const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
  const uint32_t candidates = CandidateCount(view, levels);
  const uint32_t slots = view.slots_per_bucket;
  bool erased_here = false;
  for (uint32_t base = 0; base < candidates; base += kWarpSize) {
    const auto [in_range, slot, bucket, word] = LoadLaneCandidate(view, hash, candidates, base);
    bool match = false;
    if (in_range && gphash::SlotMatches(word, fingerprint)) {
      const Key<kKeyWords> stored =
          LoadStoredKey<kKeyWords>(bucket + IndexKeyOffset(view, slot.slot));
      match = SameKey(stored, key);
    }
    if (flags & kEraseMatches) {
      if (match) {
        uint64_t empty = gphash::EmptyWord(word);
        if (CasWord(bucket + gphash::SlotWordOffset(slot.slot), word, empty)) {
          if (WritesBothCopies(view, bucket)) {
            PoolStore(view, slot.level, slot.bucket, gphash::SlotWordOffset(slot.slot), empty,
                      kStagedEmpty);
          }
          erased_here = true;
        }
      }
    } else {
      uint64_t rank =
          match ? gphash::WinnerRank(slot.level, slot.bucket, slot.slot) : gphash::kNoWinnerRank;
      uint64_t round_min = WarpMin(rank);
      if (round_min < probe.match_rank) {
        unsigned winners = __ballot_sync(kFullMask, rank == round_min);
        probe.match_rank = round_min;
        probe.match_lane = __ffs(winners) - 1;
        if (lane == static_cast<uint32_t>(probe.match_lane)) {
          probe.match_slot = slot;
          probe.match_word = word;
        }
      }
    }
    if (flags & kWantEmpty) {
      unsigned empty_mask =
          __ballot_sync(kFullMask, in_range && gphash::SlotStateOf(word) == gphash::kSlotEmpty);
      const unsigned segment_mask = slots >= 32 ? ~0u : ((1u << slots) - 1);
      bool chosen_here = false;
      for (uint32_t first = 0; first < kWarpSize && empty_mask != 0; first += slots) {
        unsigned segment = (empty_mask >> first) & segment_mask;
        if (segment == 0) continue;
        uint32_t level = gphash::CandidateSlotAt(base + first, view.hash_locations, slots).level;
        uint32_t count = __popc(segment);
        if (level < probe.empty_level ||
            (level == probe.empty_level && count > probe.empty_count)) {
          probe.empty_level = level;
          probe.empty_count = count;
          probe.empty_lane = static_cast<int>(first) + __ffs(segment) - 1;
          chosen_here = true;
        }
      }
      if (chosen_here && lane == static_cast<uint32_t>(probe.empty_lane)) {
        probe.empty_slot = slot;
        probe.empty_word = word;
      }
    }
  }
  if (erased != nullptr) *erased = __any_sync(kFullMask, erased_here);
}

// Looks `key` up with a tile of view.slots_per_bucket lanes (the lanes
// [tile_base, tile_base + slots_per_bucket) of the warp, `tile_mask`): the
// candidate buckets one at a time in the duplicate rule's order (top level
// first; in a level, the lower bucket index first), one slot word per lane,
// stopping at the first bucket that holds the key: its lowest matching slot
// is the winner. Most keys sit in their first or second bucket, so a get
// reads one or two buckets instead of all of them, and a warp runs 32 /
// slots_per_bucket keys at once. True (tile-uniform) when found, with the
// value word in *value. The slot is read again after key and value
// (seqlock), and the whole probe repeated if it changed.
// REQUIRES: keys move between slots only while no get runs (a resize or a
// kick takes the table exclusively), so an early stop cannot miss a key in
// flight between two buckets.
template <int kKeyWords>
__device__ bool TileGet(const GphashDeviceView& view, unsigned tile_mask, uint32_t tile_base,
                        const Key<kKeyWords>& key, const format::KeyHash& hash, uint64_t* value,
                        ReadTally& tally) {
  const uint32_t lane = LaneId();
  const uint32_t slot = lane - tile_base;
  const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
  for (;;) {
    bool retry = false;
    for (uint32_t level = 0; level < view.level_count && !retry; ++level) {
      uint64_t buckets[gphash::kMaxHashLocations];
      const uint32_t count =
          gphash::WinnerOrderBuckets(hash, view.hash_locations, view.bucket_counts[level], buckets);
      for (uint32_t i = 0; i < count; ++i) {
        if (i > 0 && buckets[i] == buckets[i - 1]) continue;  // two locations, one bucket
        const GetHold hold = AcquireForGet(view, tile_mask, tile_base, level, buckets[i], tally);
        const uint8_t* bucket = hold.bucket;
        const uint64_t word = LoadWord(bucket + gphash::SlotWordOffset(slot));
        bool match = false;
        uint64_t value_word = 0;
        if (gphash::SlotMatches(word, fingerprint)) {
          value_word = LoadWord(bucket + IndexValueWordOffset(view, slot));
          const Key<kKeyWords> stored =
              LoadStoredKey<kKeyWords>(bucket + IndexKeyOffset(view, slot));
          match = SameKey(stored, key);
        }
        const unsigned matches = __ballot_sync(tile_mask, match);
        if (matches == 0) {
          ReleaseForGet(view, tile_mask, tile_base, hold);
          continue;
        }
        const int winner = __ffs(matches) - 1;
        bool stable = true;
        if (lane == static_cast<uint32_t>(winner)) {
          FenceLoads();  // key and value before the slot word's second read
          stable = LoadWord(bucket + gphash::SlotWordOffset(slot)) == word;
        }
        stable = __shfl_sync(tile_mask, stable, winner);
        value_word = __shfl_sync(tile_mask, value_word, winner);
        ReleaseForGet(view, tile_mask, tile_base, hold);
        if (!stable) {
          retry = true;
          break;
        }
        *value = value_word;
        return true;
      }
    }
    if (!retry) return false;
  }
}

enum class PutOutcome : uint32_t { kInserted, kUpdated, kPresent, kNoRoom };

// Reserves the slot probe.empty_slot (CAS EMPTY -> INSERT in the index copy),
// writes key and value to the pool (and mirror), then publishes VALID. False
// (uniform) when another writer took the slot first.
template <int kKeyWords>
__device__ bool InsertAt(const GphashDeviceView& view, const Probe& probe,
                         const Key<kKeyWords>& key, uint64_t fingerprint, uint64_t value_word) {
  bool reserved = false;
  if (LaneId() == static_cast<uint32_t>(probe.empty_lane)) {
    const GphashCandidate& slot = probe.empty_slot;
    const uint32_t slots = view.slots_per_bucket;
    uint8_t* index_bucket = IndexBucket(view, slot.level, slot.bucket);
    uint64_t reservation = gphash::ReserveWord(probe.empty_word);
    reserved =
        CasWord(index_bucket + gphash::SlotWordOffset(slot.slot), probe.empty_word, reservation);
    if (reserved) {
      uint32_t key_offset = gphash::KeyOffset(slots, view.key_size, slot.slot);
      uint32_t value_offset = gphash::ValueWordOffset(slots, view.key_size, slot.slot);
#pragma unroll
      for (int w = 0; w < kKeyWords; ++w) {
        PoolStore(view, slot.level, slot.bucket, key_offset + 8 * w, key.words[w], kStagedData);
      }
      PoolStore(view, slot.level, slot.bucket, value_offset, value_word, kStagedData);
      const bool both = WritesBothCopies(view, index_bucket);
      if (both) {
        const uint32_t index_key_offset = IndexKeyOffset(view, slot.slot);
#pragma unroll
        for (int w = 0; w < kKeyWords; ++w) {
          StoreWord(index_bucket + index_key_offset + 8 * w, key.words[w]);
        }
        StoreWord(index_bucket + IndexValueWordOffset(view, slot.slot), value_word);
      }
      __threadfence_system();
      uint64_t published = gphash::PublishWord(reservation, fingerprint);
      PoolStore(view, slot.level, slot.bucket, gphash::SlotWordOffset(slot.slot), published,
                kStagedPublish);
      if (both) StoreWord(index_bucket + gphash::SlotWordOffset(slot.slot), published);
      __threadfence_system();
    }
  }
  return __shfl_sync(kFullMask, reserved, probe.empty_lane);
}

// Inserts `key` -> `value_word` in levels [0, levels), or (update_existing)
// stores the value word of the slot that holds the key (the duplicate-rule
// winner). Without update_existing a present key is left as it is (kPresent).
template <int kKeyWords>
__device__ PutOutcome WarpPut(const GphashDeviceView& view, uint32_t levels,
                              const Key<kKeyWords>& key, const format::KeyHash& hash,
                              uint64_t value_word, bool update_existing) {
  const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
  for (;;) {
    Probe probe;
    ProbeKey(view, levels, key, hash, kWantEmpty, probe);
    if (probe.match_lane >= 0) {
      if (!update_existing) return PutOutcome::kPresent;
      if (LaneId() == static_cast<uint32_t>(probe.match_lane)) {
        const GphashCandidate& slot = probe.match_slot;
        PoolStore(view, slot.level, slot.bucket,
                  gphash::ValueWordOffset(view.slots_per_bucket, view.key_size, slot.slot),
                  value_word, kStagedData);
        uint8_t* index_bucket = IndexBucket(view, slot.level, slot.bucket);
        if (WritesBothCopies(view, index_bucket)) {
          StoreWord(index_bucket + IndexValueWordOffset(view, slot.slot), value_word);
        }
        __threadfence_system();
      }
      return PutOutcome::kUpdated;
    }
    if (probe.empty_lane < 0) return PutOutcome::kNoRoom;
    if (InsertAt(view, probe, key, fingerprint, value_word)) return PutOutcome::kInserted;
    // Another writer reserved the slot first: probe again.
  }
}

// Erases every slot holding `key`; true (uniform) if one was erased.
template <int kKeyWords>
__device__ bool WarpErase(const GphashDeviceView& view, const Key<kKeyWords>& key,
                          const format::KeyHash& hash) {
  Probe probe;
  bool erased = false;
  ProbeKey(view, view.level_count, key, hash, kEraseMatches, probe, &erased);
  if (erased) __threadfence_system();
  return erased;
}

// CAS of one slot word from `word` to its EMPTY word in the index copy (and a
// store to the pool copy when mirrored). Called by one lane.
__device__ __forceinline__ bool EraseSlot(const GphashDeviceView& view, uint32_t level,
                                          uint64_t bucket, uint32_t slot, uint64_t word) {
  uint64_t empty = gphash::EmptyWord(word);
  uint8_t* index_bucket = IndexBucket(view, level, bucket);
  if (!CasWord(index_bucket + gphash::SlotWordOffset(slot), word, empty)) return false;
  if (WritesBothCopies(view, index_bucket))
    PoolStore(view, level, bucket, gphash::SlotWordOffset(slot), empty, kStagedEmpty);
  return true;
}

// One step of WarpKick: moves the resident key `resident` (value word
// `value`) that lane `source` found in its candidate slot `at` to an EMPTY
// slot of another of the resident's candidate buckets. True (uniform) when
// `hash`'s key has room now: the resident moved, or its move found an EMPTY
// slot that is a candidate of `hash` already.
template <int kKeyWords>
__device__ bool KickResident(const GphashDeviceView& view, const format::KeyHash& hash,
                             const Key<kKeyWords>& resident, uint64_t value, int source,
                             const LaneCandidate& at) {
  const uint32_t lane = LaneId();
  const format::KeyHash resident_hash = HashOf(resident, view.hash_seed);
  Probe probe;
  ProbeKey(view, view.level_count, resident, resident_hash, kWantEmpty, probe);
  if (probe.empty_lane < 0) return false;  // the resident has no room elsewhere either
  bool room_for_key = false;
  if (lane == static_cast<uint32_t>(probe.empty_lane)) {
    room_for_key = gphash::IsCandidateBucket(hash, view.hash_locations,
                                             view.bucket_counts[probe.empty_slot.level],
                                             probe.empty_slot.bucket);
  }
  if (__shfl_sync(kFullMask, room_for_key, probe.empty_lane)) return true;
  const uint64_t fingerprint = gphash::FingerprintOfHash(resident_hash);
  if (!InsertAt(view, probe, resident, fingerprint, value)) return false;
  bool moved = false;
  if (lane == static_cast<uint32_t>(source)) {
    moved = EraseSlot(view, at.slot.level, at.slot.bucket, at.slot.slot, at.word);
  }
  moved = __shfl_sync(kFullMask, moved, source);
  if (!moved) {
    if (lane == static_cast<uint32_t>(probe.empty_lane)) {
      const uint64_t published =
          gphash::PublishWord(gphash::ReserveWord(probe.empty_word), fingerprint);
      EraseSlot(view, probe.empty_slot.level, probe.empty_slot.bucket, probe.empty_slot.slot,
                published);
      __threadfence_system();
    }
    __syncwarp();
    return false;
  }
  if (lane == static_cast<uint32_t>(source)) __threadfence_system();
  __syncwarp();
  return true;
}

// Makes room for `hash`'s key (a put that found no EMPTY candidate): moves
// one resident key of its candidate buckets to an EMPTY slot of another of
// the resident's own candidate buckets. The copy is published before the
// source is emptied, so the resident stays visible to concurrent gets; if the
// source changed meanwhile the copy is dropped again. A crash in between
// leaves a duplicate with the same value, which recovery resolves. True
// (uniform) when a resident moved or a candidate slot is EMPTY already.
// The residents of one round of candidates are tried one after another
// (ShareWork: each lane offers the key of its candidate slot).
// REQUIRES: no other warp writes the table meanwhile (LaunchKick).
template <int kKeyWords>
__device__ bool WarpKick(const GphashDeviceView& view, const format::KeyHash& hash) {
  const uint32_t candidates = CandidateCount(view, view.level_count);
  for (uint32_t base = 0; base < candidates; base += kWarpSize) {
    const LaneCandidate mine = LoadLaneCandidate(view, hash, candidates, base);
    if (__any_sync(kFullMask,
                   mine.in_range && gphash::SlotStateOf(mine.word) == gphash::kSlotEmpty)) {
      return true;
    }
    const bool resident_here =
        mine.in_range && gphash::SlotStateOf(mine.word) == gphash::kSlotValid;
    Key<kKeyWords> my_resident{};
    uint64_t my_value = 0;
    if (resident_here) {
      my_resident = LoadStoredKey<kKeyWords>(mine.bucket + IndexKeyOffset(view, mine.slot.slot));
      my_value = LoadWord(mine.bucket + IndexValueWordOffset(view, mine.slot.slot));
    }
    const bool made_room = ShareWork(kFullMask, resident_here, [&](int source) {
      const Key<kKeyWords> resident = ShuffleKey(my_resident, source);
      const uint64_t value = __shfl_sync(kFullMask, my_value, source);
      return KickResident(view, hash, resident, value, source, mine);
    });
    if (made_room) return true;
  }
  return false;
}

}  // namespace gpkv::gphash::gpu::warp
