// A warp-agnostic port of the GPHash operations: one thread runs one
// operation alone, reading the candidate slots one after another — the
// "thread-per-operation" baseline GPHash is compared against, on the same
// layout and the same protocol (CAS EMPTY -> INSERT, key and value, fence,
// publish; the duplicate rule's winner). Puts use it in mirror and staged
// mode, where the probe runs in HBM and threads overlap their ordered pool
// stores (unless GpuTableOptions::warp_puts), and so do gets of 4096 keys
// or more there (IndexGet, unless GpuTableOptions::tile_index_gets). Erases,
// kicks, resize and recovery stay warp-cooperative.
//
// Each function is called by one thread for its own operation; no warp-wide
// intrinsics.
#pragma once

#include <cstdint>

#include "format/hash.h"
#include "tables/gphash/gpu/device_view.h"
#include "tables/gphash/gpu/warp.cuh"
#include "tables/gphash/layout.h"

namespace gpkv::gphash::gpu::thread {

using warp::Key;
using warp::SameKey;

// The winning VALID copy of `key` (the duplicate rule's), if any, and (for a
// put) the EMPTY slot the warp probe would choose: the top-most level with
// an EMPTY candidate, in it the bucket with the most EMPTY slots, in it the
// lowest slot.
struct ThreadProbe {
  bool found = false;
  GphashCandidate match{};
  uint64_t match_word = 0;
  bool has_empty = false;
  GphashCandidate empty{};
  uint64_t empty_word = 0;
};

// Two adjacent 8-byte words at a 16-byte aligned address, in one strong
// load (bypassing L1, as warp::LoadWord's).
__device__ __forceinline__ void LoadWordPairStrong(const uint8_t* address, uint64_t* low,
                                                   uint64_t* high) {
  unsigned long long a, b;
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(a), "=l"(b)
               : "l"(address)
               : "memory");
  *low = a;
  *high = b;
}

// The key and value word of `slot` in a bucket of the index copy, both
// strong: with the mirror's layout and 8-byte keys, one 16-byte load of one
// sector (key, then value word).
template <int kKeyWords>
__device__ __forceinline__ void LoadIndexEntry(const GphashDeviceView& view, const uint8_t* bucket,
                                               uint32_t slot, Key<kKeyWords>* key,
                                               uint64_t* value) {
  if constexpr (kKeyWords == 1) {
    if (view.mirrored) {
      LoadWordPairStrong(bucket + IndexKeyOffset(view, slot), &key->words[0], value);
      return;
    }
  }
  *value = warp::LoadWord(bucket + IndexValueWordOffset(view, slot));
  *key = warp::LoadStoredKey<kKeyWords>(bucket + IndexKeyOffset(view, slot));
}

// ThreadProbeKey for kSlots slots per bucket: a bucket's slot words are read
// at once in 16-byte loads before any of them is looked at, instead of one
// by one with a branch on each (mirror updates of 4096: +7%, YCSB A +10-20%;
// 2^20: unchanged, bound elsewhere; docs/bench/mirror-gets.md). The
// next bucket's words are loaded before the current bucket is looked at (two
// reads in flight, not one after the other) where a bucket has at most 8
// slots (16 would hold 32 more registers a thread), and a key found in a
// level ends the probe: every copy in a lower level ranks after it
// (docs/bench/host-batches.md).
template <int kKeyWords, int kSlots>
__device__ ThreadProbe ThreadProbeKeyIn(const GphashDeviceView& view, uint32_t levels,
                                        const Key<kKeyWords>& key, const format::KeyHash& hash,
                                        bool want_empty) {
  static_assert(kSlots % 2 == 0, "slot words are read in pairs");
  ThreadProbe probe;
  const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
  uint64_t best_rank = gphash::kNoWinnerRank;
  uint32_t empty_count = 0;
  for (uint32_t level = 0; level < levels && !probe.found; ++level) {
    // Every location, as the warp probe reads them (and breaks ties).
    const gphash::LevelCandidates buckets =
        gphash::CandidateBucketsOfLevel(hash, view.hash_locations, view.bucket_counts[level],
                                        gphash::CandidateOrder::kEveryLocation);
    constexpr bool kReadAhead = kSlots <= 8;
    uint64_t next[kSlots];  // the words of bucket i + 1, read ahead
    auto read_words = [&](uint32_t i, uint64_t(&words)[kSlots]) {
      const uint8_t* bucket = warp::IndexBucket(view, level, buckets.buckets[i]);
#pragma unroll
      for (int s = 0; s < kSlots; s += 2) {
        LoadWordPairStrong(bucket + gphash::SlotWordOffset(s), &words[s], &words[s + 1]);
      }
    };
    if constexpr (kReadAhead) read_words(0, next);
    for (uint32_t i = 0; i < buckets.count; ++i) {
      const uint64_t index = buckets.buckets[i];
      const uint8_t* bucket = warp::IndexBucket(view, level, index);
      uint64_t words[kSlots];
      if constexpr (kReadAhead) {
#pragma unroll
        for (int s = 0; s < kSlots; ++s) words[s] = next[s];
        if (i + 1 < buckets.count) read_words(i + 1, next);
      } else {
        read_words(i, words);
      }
      uint32_t empties = 0;
      int first_empty = -1;
      uint64_t first_empty_word = 0;
#pragma unroll
      for (int slot = 0; slot < kSlots; ++slot) {
        const uint64_t word = words[slot];
        if (gphash::SlotStateOf(word) == gphash::kSlotEmpty) {
          if (first_empty < 0) {
            first_empty = slot;
            first_empty_word = word;
          }
          ++empties;
          continue;
        }
        if (!gphash::SlotMatches(word, fingerprint)) continue;
        const uint64_t rank = gphash::WinnerRank(level, index, slot);
        if (rank >= best_rank) continue;
        const Key<kKeyWords> stored =
            warp::LoadStoredKey<kKeyWords>(bucket + IndexKeyOffset(view, slot));
        if (!SameKey(stored, key)) continue;
        best_rank = rank;
        probe.found = true;
        probe.match = GphashCandidate{level, static_cast<uint32_t>(slot), index};
        probe.match_word = word;
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

template <int kKeyWords>
__device__ ThreadProbe ThreadProbeKey(const GphashDeviceView& view, uint32_t levels,
                                      const Key<kKeyWords>& key, const format::KeyHash& hash,
                                      bool want_empty) {
  static_assert(gphash::kMinSlotsPerBucket == 4 && gphash::kMaxSlotsPerBucket == 16,
                "ThreadProbeKeyIn is instantiated for 4, 8 and 16 slots per bucket");
  switch (view.slots_per_bucket) {
    case 4:
      return ThreadProbeKeyIn<kKeyWords, 4>(view, levels, key, hash, want_empty);
    case 16:
      return ThreadProbeKeyIn<kKeyWords, 16>(view, levels, key, hash, want_empty);
    default:  // 8: the format allows no other count (IsValidSlotsPerBucket)
      return ThreadProbeKeyIn<kKeyWords, 8>(view, levels, key, hash, want_empty);
  }
}

// Two adjacent 8-byte words at a 16-byte aligned address, in one weak load:
// it may be served by the multiprocessor's L1, which other multiprocessors'
// writes do not invalidate, so the words may be older than the latest store
// (but not older than the launch: L1 starts each kernel empty). IndexGet
// reads a bucket's slot words this way and checks the one that matters with
// a second, strong read (warp::LoadWord after a fence) before it answers.
__device__ __forceinline__ void LoadWordPairWeak(const uint8_t* address, uint64_t* low,
                                                 uint64_t* high) {
  unsigned long long a, b;
  asm volatile("ld.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(address) : "memory");
  *low = a;
  *high = b;
}

// Get of one key by one thread over an index in GPU memory (the mirror):
// the key's buckets in the duplicate rule's order (warp::TileGet's order, so
// the same copy wins), each bucket's kSlots slot words read at once in
// 16-byte weak loads and matched against the fingerprint in registers, then
// the key and value of a match read (strong) and the slot word read again
// after an acquire-release fence (seqlock; the probe is repeated if it
// changed).
//
// A weak slot word is one that held at some moment of this kernel: if the
// strong read finds the same word (state, fingerprint and the version a
// reservation bumps), the slot held this key and value throughout, so the
// answer holds at that moment; a weak word that misses a key inserted
// meanwhile answers "absent", as the table was when it was read. Weak loads
// let hot buckets stay in L1 (zipfian gets +40%).
//
// Where warp::TileGet spends a tile of kSlots lanes and several warp
// instructions per key and bucket (over HBM it was bound by instruction
// issue), this spends one lane and is bound by the latency of its dependent
// reads (docs/bench/mirror-gets.md). Not for the pool over the link (direct
// mode): there the tile's coalesced 64-byte read wins.
template <int kKeyWords, int kSlots>
__device__ bool IndexGet(const GphashDeviceView& view, const Key<kKeyWords>& key,
                         const format::KeyHash& hash, uint64_t* value) {
  static_assert(kSlots % 2 == 0, "slot words are read in pairs");
  const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
  for (;;) {
    bool retry = false;
    for (uint32_t level = 0; level < view.level_count && !retry; ++level) {
      uint64_t buckets[gphash::kMaxHashLocations];
      const uint32_t count =
          gphash::WinnerOrderBuckets(hash, view.hash_locations, view.bucket_counts[level], buckets);
#pragma unroll
      for (uint32_t i = 0; i < gphash::kMaxHashLocations; ++i) {
        if (i >= count || retry) break;
        if (i > 0 && buckets[i] == buckets[i - 1]) continue;  // two locations, one bucket
        const uint8_t* bucket = view.index_levels[level] + buckets[i] * view.bucket_bytes;
        uint64_t words[kSlots];
#pragma unroll
        for (int s = 0; s < kSlots; s += 2) {
          LoadWordPairWeak(bucket + gphash::SlotWordOffset(s), &words[s], &words[s + 1]);
        }
        // The matching slots, and the first one's word: only it stays in
        // registers (a second match, which takes a 52-bit fingerprint
        // collision or a duplicate, reads its word again).
        uint32_t matches = 0;
        uint64_t word = 0;
#pragma unroll
        for (int s = kSlots - 1; s >= 0; --s) {
          if (gphash::SlotMatches(words[s], fingerprint)) {
            matches |= 1u << s;
            word = words[s];
          }
        }
        for (bool first = true; matches != 0; first = false) {
          const uint32_t s = __ffs(matches) - 1;
          matches &= matches - 1;
          if (!first) {
            word = warp::LoadWord(bucket + gphash::SlotWordOffset(s));
            warp::FenceLoads();  // the seqlock's first read before the data
          }
          Key<kKeyWords> stored;
          uint64_t stored_value = 0;
          LoadIndexEntry(view, bucket, s, &stored, &stored_value);
          if (!gphash::SlotMatches(word, fingerprint) || !SameKey(stored, key)) continue;
          warp::FenceLoads();  // the data before the seqlock's second read
          if (warp::LoadWord(bucket + gphash::SlotWordOffset(s)) != word) {
            retry = true;
            break;
          }
          *value = stored_value;
          return true;
        }
      }
    }
    if (!retry) return false;
  }
}

// Insert or update of one key by one thread (warp::WarpPut's protocol).
template <int kKeyWords>
__device__ warp::PutOutcome ThreadPut(const GphashDeviceView& view, const Key<kKeyWords>& key,
                                      const format::KeyHash& hash, uint64_t value_word) {
  const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
  const uint32_t slots = view.slots_per_bucket;
  for (;;) {
    ThreadProbe probe = ThreadProbeKey(view, view.level_count, key, hash, true);
    if (probe.found) {
      const GphashCandidate& slot = probe.match;
      warp::PoolStore(view, slot.level, slot.bucket,
                      gphash::ValueWordOffset(slots, view.key_size, slot.slot), value_word,
                      kStagedData);
      uint8_t* index_bucket = warp::IndexBucket(view, slot.level, slot.bucket);
      if (warp::WritesBothCopies(view, index_bucket)) {
        warp::StoreWord(index_bucket + IndexValueWordOffset(view, slot.slot), value_word);
      }
      // No fence: nothing this thread stores later must follow the value
      // word, and the batch is durable only after its kernels complete
      // (which makes every store visible to the host) and pool.Sync().
      return warp::PutOutcome::kUpdated;
    }
    if (!probe.has_empty) return warp::PutOutcome::kNoRoom;
    const GphashCandidate& slot = probe.empty;
    uint8_t* index_bucket = warp::IndexBucket(view, slot.level, slot.bucket);
    const uint64_t reservation = gphash::ReserveWord(probe.empty_word);
    if (!warp::CasWord(index_bucket + gphash::SlotWordOffset(slot.slot), probe.empty_word,
                       reservation)) {
      continue;  // another thread took the slot: probe again
    }
    const uint32_t key_offset = gphash::KeyOffset(slots, view.key_size, slot.slot);
    const uint32_t value_offset = gphash::ValueWordOffset(slots, view.key_size, slot.slot);
    const uint32_t index_key_offset = IndexKeyOffset(view, slot.slot);
    const bool both = warp::WritesBothCopies(view, index_bucket);
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) {
      warp::PoolStore(view, slot.level, slot.bucket, key_offset + 8 * w, key.words[w], kStagedData);
      if (both) warp::StoreWord(index_bucket + index_key_offset + 8 * w, key.words[w]);
    }
    warp::PoolStore(view, slot.level, slot.bucket, value_offset, value_word, kStagedData);
    if (both) warp::StoreWord(index_bucket + IndexValueWordOffset(view, slot.slot), value_word);
    __threadfence_system();
    const uint64_t published = gphash::PublishWord(reservation, fingerprint);
    warp::PoolStore(view, slot.level, slot.bucket, gphash::SlotWordOffset(slot.slot), published,
                    kStagedPublish);
    if (both) warp::StoreWord(index_bucket + gphash::SlotWordOffset(slot.slot), published);
    // The fence above orders key and value before the publish, which is what
    // a crash needs; the publish itself needs none (as for an update).
    return warp::PutOutcome::kInserted;
  }
}

}  // namespace gpkv::gphash::gpu::thread
