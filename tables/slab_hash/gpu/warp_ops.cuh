// Warp-level operations of the slab hash (layout.h) that the kernels of
// batch_kernels.cu and maintenance_kernels.cu run, one operation at a time
// per tile (warp work sharing, gpu/warp_work_sharing.cuh), over the slab
// pieces of warp_slab.cuh.
//
// Tiles: gets, erases and the puts and mixed operations of inline values run
// on tiles of 16 lanes (two operations side by side in a warp), which append
// slabs themselves (TileAllocateSlab); puts of out-of-line values (a value
// slab each) run on whole warps, which allocate from a resident block
// (SlabAllocWarp). Every function is called by all
// lanes of its tile, converged, with the same arguments (key, bucket):
// "uniform" results are the same in every lane of the tile.
//
// Memory order (layout.h has the protocols):
//  - Read kernels (Get, scan, rehash's source lists) run while no writer
//    does: read-only loads, no re-checks.
//  - Write kernels read slabs with relaxed loads (device scope); aux words
//    change by 32-bit atomics. A claim writes the slot's words, fences, then
//    turns the slot live (deferred: one fence for several claims); a reader
//    that sees a slot of the running batch live with a key of zeros re-reads
//    after a fence (ReadSlabForWrite); one that meets a pending slot that
//    may hold its key waits until it settles (PendingMayHold, BackOff).
#pragma once

#include <cstdint>

#include "gpu/slab_alloc.cuh"
#include "tables/slab_hash/gpu/device_view.h"
#include "tables/slab_hash/gpu/warp_slab.cuh"
#include "tables/slab_hash/layout.h"

namespace gpkv::slab_hash::gpu::device {

// ---------------------------------------------------------------- search

// Looks `key` up while no writer runs (Get). Returns (uniform) whether it is
// there; then tile lane j holds word j of its value in *value_word (j below
// the value's words).
template <int kKeyWords, int kSlotWords, int kTileLanes>
__device__ __forceinline__ bool TileFind(const DeviceView& view,
                                         const Shape<kKeyWords, kSlotWords>& shape,
                                         const Tile<kTileLanes>& tile, const LaneRole& role,
                                         const Key<kKeyWords>& key, uint64_t bucket,
                                         uint64_t* value_word) {
  const uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = ReadSlabStill(tile, role, slab);
    const uint32_t heads = LiveHeadsHolding(tile, role, read, key);
    if (heads != 0) {
      const uint32_t value_at = __ffs(heads) - 1 + kKeyWords;
      if (!view.geometry.value_out_of_line) {
        const uint32_t from = value_at + role.word < kSlotAreaWords ? value_at + role.word : 0;
        *value_word = tile.FromWord(read.word, from);
        return true;
      }
      const uint32_t address = static_cast<uint32_t>(tile.FromWord(read.word, value_at));
      *value_word =
          __ldg(reinterpret_cast<const unsigned long long*>(SlabOf(view, address)) + role.word);
      return true;
    }
    if (FreePairs(read.aux, shape.slots()) != 0 || read.next == kNullNext) return false;
    slab = SlabOf(view, read.next);
  }
}

// Looks `key` up while writers of the same launch run (Mixed). As TileFind;
// never returns a value the key did not have: a hit on a slot the launch
// touched re-reads after a fence, and a table with inline values of more
// than one word locks the slot (live -> pending -> live) while it copies.
template <int kKeyWords, int kSlotWords, int kTileLanes>
__device__ __forceinline__ bool FindConcurrent(const DeviceView& view,
                                               const Shape<kKeyWords, kSlotWords>& shape,
                                               const Tile<kTileLanes>& tile, const LaneRole& role,
                                               DeferredClaims* deferred, const Key<kKeyWords>& key,
                                               uint64_t bucket, uint64_t* value_word) {
  const bool out_of_line = MayBeOutOfLine<kSlotWords, kTileLanes>(view);
  constexpr bool kLocked = Shape<kKeyWords, kSlotWords>::kWideValues;
  uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = ReadSlabForWrite<kKeyWords>(tile, role, slab, view.tag);
    const uint32_t heads = LiveHeadsHolding(tile, role, read, key);
    if (heads != 0) {
      const uint32_t head = __ffs(heads) - 1;
      const uint32_t slot = tile.FromWord(role.slot, head);
      const uint32_t value_at = head + kKeyWords;
      const uint32_t from = value_at + role.word < kSlotAreaWords ? value_at + role.word : 0;
      if constexpr (kLocked) {
        if (!CasAux(tile, slab, read.aux, WithSlotState(read.aux, slot, kSlotPending))) continue;
        __threadfence();  // the last writer's words, published before it unlocked
        const uint64_t word = LoadRelaxed(slab + 8 * role.word);
        *value_word = tile.FromWord(word, from);
        FlipPending(tile, slab, slot);  // pending -> live; the copy is in registers
        return true;
      }
      uint64_t word = read.word;
      const bool recent = ((SlotsTouchedBy(read.aux, view.tag) >> slot) & 1u) != 0;
      if (recent) {
        __threadfence();
        word = LoadRelaxed(slab + 8 * role.word);
      }
      if (!out_of_line) {
        *value_word = tile.FromWord(word, from);
        return true;
      }
      const uint32_t address = static_cast<uint32_t>(tile.FromWord(word, value_at));
      if (address == kNullNext) return false;  // erased by this launch meanwhile
      // The value slab's words before its address: a replace of this launch
      // may have swapped the address in after the aux word was read.
      __threadfence();
      *value_word = LoadRelaxed(SlabOf(view, address) + 8 * role.word);
      return true;
    }
    if (PendingMayHold(tile, role, read, key, shape.slots())) {
      BackOff(tile, deferred);
      continue;
    }
    if (FreePairs(read.aux, shape.slots()) != 0 || read.next == kNullNext) return false;
    slab = SlabOf(view, read.next);
  }
}

// ---------------------------------------------------------------- writes

// kNeedsWarp: a 16-lane tile met a put of an out-of-line value (the host
// launches those on whole warps, so it never happens): nothing changed.
// kRetry: SlabAlloc had no slab (nothing changed; the host grows it and
// runs the operation again).
enum class WriteOutcome : uint32_t { kInserted, kReplaced, kErased, kMissing, kRetry, kNeedsWarp };

// Upsert's replace of the value of live slot `slot` of `slab` (read with
// aux word `aux`): touches the slot for the batch (a second touch flags a
// duplicate in a Put batch) and writes the value word(s) this lane holds
// (in_slot: a value word of the slot; slot_word: what goes there). Inline
// values of several words in Mixed (kLocked) are written with the slot
// pending (locked); out-of-line values swap the value slab's address and
// retire the old slab. False (uniform) when the aux word changed first.
template <int kTileLanes, bool kMixed, bool kLocked>
__device__ __forceinline__ bool ReplaceValue(const DeviceView& view, const WriteSink& sink,
                                             const Tile<kTileLanes>& tile, const LaneRole& role,
                                             uint8_t* slab, uint32_t aux, uint32_t slot,
                                             bool in_slot, bool out_of_line, uint64_t slot_word) {
  bool duplicate = false;
  if constexpr (kLocked) {
    if (!CasAux(tile, slab, aux, TouchForWrite(aux, slot, kSlotPending, view.tag, &duplicate))) {
      return false;
    }
    if (in_slot) StoreRelaxed(slab + 8 * role.word, slot_word);
    FlipPending(tile, slab, slot);
    return true;
  }
  if (TagOf(aux) == view.tag && TouchedBit(aux, slot)) {
    duplicate = true;  // touched already: no CAS needed
  } else if (!CasAux(tile, slab, aux, TouchForWrite(aux, slot, kSlotLive, view.tag, &duplicate))) {
    return false;
  }
  if (!kMixed && duplicate && tile.Leader()) atomicOr(&sink.counters->duplicate, 1u);
  if (out_of_line) {
    tile.Sync();
    __threadfence();  // the value slab's words before its address
    if (in_slot) {
      const uint32_t old =
          atomicExch(reinterpret_cast<uint32_t*>(slab + 8 * role.word), uint32_t(slot_word));
      // kNullNext: a delete of this launch took the old slab; the dead slot
      // keeps ours, which nobody frees else.
      Retire(sink, old != kNullNext ? old : uint32_t(slot_word));
    }
  } else if (in_slot) {
    StoreRelaxed(slab + 8 * role.word, slot_word);
  }
  return true;
}

// Inserts `key` or replaces its value (Put; kMixed: a replace of Mixed).
// value_word: tile lane j holds word j of the new value (j below its words;
// for one-word values every lane may hold word 0). mine: this lane holds
// the operation (a claim it defers is held there). Uniform result.
// *allocated (uniform) counts the slabs taken (appends, value slabs).
// Put batches detect a key written twice by the touched bits
// (sink.counters->duplicate); Mixed ignores them, and with inline values of
// several words locks the slot while it writes (FindConcurrent).
template <int kKeyWords, int kSlotWords, int kTileLanes, bool kMixed>
__device__ __forceinline__ WriteOutcome Upsert(const DeviceView& view, const WriteSink& sink,
                                               gpkv::gpu::SlabAllocWarp* alloc,
                                               const Shape<kKeyWords, kSlotWords>& shape,
                                               const Tile<kTileLanes>& tile, const LaneRole& role,
                                               DeferredClaims* deferred, bool mine,
                                               const Key<kKeyWords>& key, uint64_t bucket,
                                               uint64_t value_word, uint32_t* allocated) {
  constexpr bool kWholeWarp = kTileLanes == 32;
  const bool out_of_line = MayBeOutOfLine<kSlotWords, kTileLanes>(view);
  constexpr bool kLocked = kMixed && Shape<kKeyWords, kSlotWords>::kWideValues;
  if (!kWholeWarp && view.geometry.value_out_of_line) return WriteOutcome::kNeedsWarp;
  uint32_t value_slab = kNullNext;
  if constexpr (kWholeWarp) {
    if (out_of_line) {
      value_slab = gpkv::gpu::WarpAllocateSlab(view.alloc, alloc);
      if (value_slab == kNullNext) return WriteOutcome::kRetry;
      ++*allocated;
      if (tile.OwnsWord()) StoreRelaxed(SlabOf(view, value_slab) + 8 * role.word, value_word);
    }
  }
  // The word this lane writes into a slot it claims or whose value it replaces.
  const uint32_t value_part = role.part >= kKeyWords ? role.part - kKeyWords : 0;
  const uint64_t shared_value = tile.FromWord(value_word, value_part);
  const uint64_t slot_word = role.key_word ? KeyWordAt(key, role.part)
                             : out_of_line ? uint64_t{value_slab}
                                           : shared_value;
  uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = ReadSlabForWrite<kKeyWords>(tile, role, slab, view.tag);
    const uint32_t heads = LiveHeadsHolding(tile, role, read, key);
    if (heads != 0) {
      const uint32_t slot = tile.FromWord(role.slot, __ffs(heads) - 1);
      const bool in_slot = tile.OwnsWord() && !role.key_word && role.slot == slot;
      if (!ReplaceValue<kTileLanes, kMixed, kLocked>(view, sink, tile, role, slab, read.aux, slot,
                                                     in_slot, out_of_line, slot_word)) {
        continue;  // the aux word changed: read the slab again
      }
      return WriteOutcome::kReplaced;
    }
    const uint32_t slots = shape.slots();
    if (PendingMayHold(tile, role, read, key, slots)) {
      BackOff(tile, deferred);  // maybe `key`, being claimed
      continue;
    }
    const uint32_t free_pairs = FreePairs(read.aux, slots);
    if (free_pairs != 0) {
      const uint32_t slot = (__ffs(free_pairs) - 1) / 2;
      bool duplicate = false;  // a free slot was never touched
      const uint32_t desired = TouchForWrite(read.aux, slot, kSlotPending, view.tag, &duplicate);
      if (!CasAux(tile, slab, read.aux, desired)) continue;
      if (tile.OwnsWord() && role.slot == slot) StoreRelaxed(slab + 8 * role.word, slot_word);
      // Live later, with the tile's other claims (DeferredClaims::Publish).
      deferred->Hold(mine, slab, slot);
      return WriteOutcome::kInserted;
    }
    uint32_t next = read.next;
    if (next == kNullNext) {
      next = AppendSlab(view, alloc, tile, slab, allocated);
      if (next == kNullNext) {
        if (out_of_line && tile.Leader()) gpkv::gpu::FreeSlab(view.alloc, value_slab);
        return WriteOutcome::kRetry;
      }
    }
    slab = SlabOf(view, next);
  }
}

// Erases `key` (Erase; kMixed: a delete of Mixed). Uniform result: kErased
// or kMissing. In an Erase batch a key the batch erased already (dead,
// touched by the batch) flags a duplicate.
template <int kKeyWords, int kSlotWords, int kTileLanes, bool kMixed>
__device__ __forceinline__ WriteOutcome Erase(const DeviceView& view, const WriteSink& sink,
                                              const Shape<kKeyWords, kSlotWords>& shape,
                                              const Tile<kTileLanes>& tile, const LaneRole& role,
                                              DeferredClaims* deferred, const Key<kKeyWords>& key,
                                              uint64_t bucket) {
  uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = ReadSlabForWrite<kKeyWords>(tile, role, slab, view.tag);
    const uint32_t heads = LiveHeadsHolding(tile, role, read, key);
    if (heads != 0) {
      const uint32_t head = __ffs(heads) - 1;
      const uint32_t slot = tile.FromWord(role.slot, head);
      bool duplicate = false;
      const uint32_t desired = TouchForWrite(read.aux, slot, kSlotDead, view.tag, &duplicate);
      if (!CasAux(tile, slab, read.aux, desired)) continue;
      // Out-of-line values: whole warps, or the Erase kernel (half warps).
      const bool out_of_line =
          kSlotWords != 0 && (!kMixed || kTileLanes == 32) && view.geometry.value_out_of_line;
      if (out_of_line && tile.OwnsWord() && role.word == head + kKeyWords) {
        // A dead slot owns no value slab: retire it (freed after the launch).
        const uint32_t old =
            atomicExch(reinterpret_cast<uint32_t*>(slab + 8 * role.word), kNullNext);
        if (old != kNullNext) Retire(sink, old);
      }
      return WriteOutcome::kErased;
    }
    const uint32_t slots = shape.slots();
    if (!kMixed && (DeadPairs(read.aux, slots) != 0) && SlotsTouchedBy(read.aux, view.tag) != 0) {
      const bool erased_here = SlotStateOf(read.aux, role.slot) == kSlotDead &&
                               ((SlotsTouchedBy(read.aux, view.tag) >> role.slot) & 1u) != 0;
      if (HeadsHolding(tile, role, read, key, erased_here) != 0) {
        if (tile.Leader()) atomicOr(&sink.counters->duplicate, 1u);
        return WriteOutcome::kMissing;
      }
    }
    if (PendingMayHold(tile, role, read, key, slots)) {
      BackOff(tile, deferred);  // maybe a locked slot holding `key`
      continue;
    }
    if (FreePairs(read.aux, slots) != 0 || read.next == kNullNext) return WriteOutcome::kMissing;
    slab = SlabOf(view, read.next);
  }
}

// Puts a pair known to be absent into its list (rehash): the first free
// slot, no search. slot_word: this lane's word of the pair (word `part` of
// the slot). Returns (uniform) false when SlabAlloc had no slab.
template <int kKeyWords, int kSlotWords>
__device__ __forceinline__ bool InsertAbsent(const DeviceView& view,
                                             gpkv::gpu::SlabAllocWarp* alloc,
                                             const Shape<kKeyWords, kSlotWords>& shape,
                                             const LaneRole& role, uint64_t bucket,
                                             uint64_t slot_word) {
  const WarpTile tile = WarpTile::Mine();
  uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = SplitLink(tile, LoadRelaxed(slab + 8 * role.word));
    const uint32_t free_pairs = FreePairs(read.aux, shape.slots());
    if (free_pairs != 0) {
      const uint32_t slot = (__ffs(free_pairs) - 1) / 2;
      // Nobody reads keys during a rehash: the slot is live at once.
      if (!CasAux(tile, slab, read.aux, WithSlotState(read.aux, slot, kSlotLive))) continue;
      if (LaneId() < kSlabWords && role.slot == slot) {
        StoreRelaxed(slab + 8 * role.word, slot_word);
      }
      return true;
    }
    uint32_t next = read.next;
    if (next == kNullNext) {
      next = AppendSlab(view, alloc, slab);
      if (next == kNullNext) return false;
    }
    slab = SlabOf(view, next);
  }
}

}  // namespace gpkv::slab_hash::gpu::device
