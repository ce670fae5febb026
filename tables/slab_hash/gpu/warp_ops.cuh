// Warp-level operations of the slab hash (layout.h) that the kernels of
// batch_kernels.cu and maintenance_kernels.cu run, one operation at a time
// per warp or half warp (warp work sharing, gpu/warp_work_sharing.cuh).
//
// Tiles: a search runs on a tile of 16 lanes (two searches side by side in a
// warp), every other operation on the whole warp (a tile of 32). Tile lane w
// (w = lane & 15) loads word w of a slab: one coalesced 128-byte read per
// list step; in a 32-lane tile lanes 16..31 repeat lanes 0..15. Every
// function here is called by all lanes of its tile, converged, with the same
// arguments (key, bucket, slab): "uniform" results are the same in every lane
// of the tile. Per-lane inputs and outputs say which lanes hold them.
//
// Memory order (see layout.h for the protocols):
//  - Read kernels (Get, scan, rehash's source lists) run while no writer
//    does: plain read-only loads, no re-checks.
//  - Write kernels read slabs with volatile loads; aux words change by 32-bit
//    atomics. A claim writes the slot's words, fences, then turns the slot
//    live; a reader that sees a slot of the running batch live with a key of
//    zeros re-reads after a fence (ReadSlabForWrite), one that meets a
//    pending slot where it must decide waits until it settles.
#pragma once

#include <cstdint>

#include "gpu/slab_alloc.cuh"
#include "gpu/warp_work_sharing.cuh"
#include "tables/slab_hash/gpu/device_view.h"
#include "tables/slab_hash/layout.h"

namespace gpkv::slab_hash::device {

using gpu::warp::kFullMask;
using gpu::warp::LaneId;

// ---------------------------------------------------------------- keys, words

template <int kKeyWords>
struct Key {
  uint64_t words[kKeyWords];
};

template <int kKeyWords>
__device__ __forceinline__ uint64_t KeyWordAt(const Key<kKeyWords>& key, uint32_t part) {
  uint64_t word = key.words[0];
#pragma unroll
  for (int i = 1; i < kKeyWords; ++i) {
    if (part == static_cast<uint32_t>(i)) word = key.words[i];
  }
  return word;
}

template <int kKeyWords>
__device__ __forceinline__ uint64_t HashOf(const Key<kKeyWords>& key, uint64_t seed) {
  return KeyHash64(key.words, kKeyWords, seed);
}

// Key `op` of a batch array; `aligned`: the array starts 8-byte aligned.
template <int kKeyWords>
__device__ __forceinline__ Key<kKeyWords> LoadKey(const uint8_t* keys, uint64_t op, bool aligned) {
  Key<kKeyWords> key;
  const uint8_t* source = keys + op * 8 * kKeyWords;
  if (aligned) {
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) key.words[w] = reinterpret_cast<const uint64_t*>(source)[w];
  } else {
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) {
      uint64_t word = 0;
      for (int b = 0; b < 8; ++b) word |= uint64_t{source[8 * w + b]} << (8 * b);
      key.words[w] = word;
    }
  }
  return key;
}

// Word j of value `op` of a batch array (zero padded past value_size);
// `aligned`: 8-byte aligned array and a value size that is a multiple of 8.
__device__ __forceinline__ uint64_t LoadValueWord(const uint8_t* values, uint64_t op,
                                                  uint32_t value_size, uint32_t j, bool aligned) {
  if (8 * j >= value_size) return 0;
  const uint8_t* source = values + op * value_size + 8 * j;
  if (aligned) return *reinterpret_cast<const uint64_t*>(source);
  const uint32_t bytes = value_size - 8 * j < 8 ? value_size - 8 * j : 8;
  uint64_t word = 0;
  for (uint32_t b = 0; b < bytes; ++b) word |= uint64_t{source[b]} << (8 * b);
  return word;
}

__device__ __forceinline__ void StoreValueWord(uint8_t* values, uint64_t op, uint32_t value_size,
                                               uint32_t j, uint64_t word, bool aligned) {
  if (8 * j >= value_size) return;
  uint8_t* target = values + op * value_size + 8 * j;
  if (aligned) {
    *reinterpret_cast<uint64_t*>(target) = word;
    return;
  }
  const uint32_t bytes = value_size - 8 * j < 8 ? value_size - 8 * j : 8;
  for (uint32_t b = 0; b < bytes; ++b) target[b] = static_cast<uint8_t>(word >> (8 * b));
}

__device__ __forceinline__ uint64_t LoadVolatile(const uint8_t* address) {
  return *reinterpret_cast<const volatile uint64_t*>(address);
}
__device__ __forceinline__ void StoreVolatile(uint8_t* address, uint64_t value) {
  *reinterpret_cast<volatile uint64_t*>(address) = value;
}
__device__ __forceinline__ uint32_t* AuxOf(uint8_t* slab) {
  return reinterpret_cast<uint32_t*>(slab + kAuxByteOffset);
}
__device__ __forceinline__ uint32_t* NextOf(uint8_t* slab) {
  return reinterpret_cast<uint32_t*>(slab + kNextByteOffset);
}
__device__ __forceinline__ uint8_t* BaseSlab(const DeviceView& view, uint64_t bucket) {
  return view.buckets + bucket * kSlabBytes;
}
__device__ __forceinline__ uint8_t* SlabOf(const DeviceView& view, uint32_t address) {
  return gpu::SlabAt(view.alloc, address);
}

// ---------------------------------------------------------------- tiles, lanes

template <int kTileLanes>
struct Tile {
  static_assert(kTileLanes == 16 || kTileLanes == 32, "a tile reads a slab with 16 or 32 lanes");
  unsigned mask;
  uint32_t base;  // the tile's first lane

  __device__ __forceinline__ static Tile Mine() {
    Tile tile;
    tile.base = kTileLanes == 32 ? 0u : (LaneId() & 16u);
    tile.mask = kTileLanes == 32 ? kFullMask : (0xffffu << tile.base);
    return tile;
  }
  // The tile's lanes 0..15 (one per slab word) where `predicate` holds.
  __device__ __forceinline__ uint32_t Ballot(bool predicate) const {
    return (__ballot_sync(mask, predicate) >> base) & 0xffffu;
  }
  // What tile lane `word` (0..15) holds.
  template <typename T>
  __device__ __forceinline__ T FromWord(T value, uint32_t word) const {
    return __shfl_sync(mask, value, static_cast<int>(base + word));
  }
};
using WarpTile = Tile<32>;

// The slot geometry, known at compile time when kSlotWords != 0 (8-byte
// values and out-of-line values: kSlotWords = kKeyWords + 1), else read
// from the view.
template <int kKeyWords, int kSlotWords>
struct Shape {
  static_assert(kSlotWords == 0 || kSlotWords == kKeyWords + 1, "fixed shapes hold one value word");
  uint32_t runtime_slot_words;
  uint32_t runtime_slots;

  __device__ __forceinline__ explicit Shape(const SlabGeometry& geometry)
      : runtime_slot_words(geometry.slot_words), runtime_slots(geometry.slots_per_slab) {}
  __device__ __forceinline__ uint32_t slot_words() const {
    return kSlotWords != 0 ? kSlotWords : runtime_slot_words;
  }
  __device__ __forceinline__ uint32_t slots() const {
    return kSlotWords != 0 ? kSlotAreaWords / kSlotWords : runtime_slots;
  }
};

// What this lane's slab word is.
struct LaneRole {
  uint32_t word;  // lane & 15
  uint32_t slot;  // the slot the word belongs to; kMaxSlotsPerSlab for none
  uint32_t part;  // word within the slot (key words first)
  bool key_word;  // a key word of a slot
  bool head;      // the first word of a slot
};

template <int kKeyWords, int kSlotWords>
__device__ __forceinline__ LaneRole RoleOf(const Shape<kKeyWords, kSlotWords>& shape) {
  LaneRole role;
  role.word = LaneId() & 15u;
  const uint32_t slot = role.word / shape.slot_words();
  role.part = role.word - slot * shape.slot_words();
  const bool in_slot = slot < shape.slots();
  role.slot = in_slot ? slot : kMaxSlotsPerSlab;
  role.key_word = in_slot && role.part < static_cast<uint32_t>(kKeyWords);
  role.head = in_slot && role.part == 0;
  return role;
}

template <int kKeyWords>
constexpr uint32_t kKeyLaneMask = (1u << kKeyWords) - 1;

// ---------------------------------------------------------------- slab reads

struct SlabRead {
  uint64_t word;  // this lane's word (word lane & 15)
  uint32_t aux;   // the aux word, in every lane
  uint32_t next;  // the next slab, in every lane
};

template <int kTileLanes>
__device__ __forceinline__ SlabRead SplitLink(const Tile<kTileLanes>& tile, uint64_t word) {
  SlabRead read;
  read.word = word;
  const uint64_t link = tile.FromWord(word, kLinkWord);
  read.aux = static_cast<uint32_t>(link);
  read.next = static_cast<uint32_t>(link >> 32);
  return read;
}

// A slab no kernel writes meanwhile (read kernels).
template <int kTileLanes>
__device__ __forceinline__ SlabRead ReadSlabStill(const Tile<kTileLanes>& tile,
                                                  const LaneRole& role, const uint8_t* slab) {
  const uint64_t word = __ldg(reinterpret_cast<const unsigned long long*>(slab) + role.word);
  return SplitLink(tile, word);
}

// Heads (tile words that start a slot) of the slots whose key is `key` and
// where this lane's `slot_ok` holds (each head lane decides for its slot).
template <int kKeyWords, int kTileLanes>
__device__ __forceinline__ uint32_t HeadsHolding(const Tile<kTileLanes>& tile, const LaneRole& role,
                                                 const SlabRead& read, const Key<kKeyWords>& key,
                                                 bool slot_ok) {
  const uint64_t wanted = KeyWordAt(key, role.part);
  if constexpr (kKeyWords == 1) {
    return tile.Ballot(role.head && slot_ok && read.word == wanted);
  } else {
    const uint32_t differ = tile.Ballot(role.key_word && read.word != wanted);
    return tile.Ballot(role.head && slot_ok &&
                       ((differ >> role.word) & kKeyLaneMask<kKeyWords>) == 0);
  }
}

template <int kKeyWords, int kTileLanes>
__device__ __forceinline__ uint32_t LiveHeadsHolding(const Tile<kTileLanes>& tile,
                                                     const LaneRole& role, const SlabRead& read,
                                                     const Key<kKeyWords>& key) {
  return HeadsHolding(tile, role, read, key, SlotStateOf(read.aux, role.slot) == kSlotLive);
}

// A slab that writers of the batch tagged `tag` may change meanwhile. On
// return every slot live or dead in `aux` reads whole in `word`: when a slot
// the batch touched reads a key of zeros (maybe the free slot's zeros, read
// before its claimer's key), the slab is read again after a fence, and the
// aux word of the first read is kept (its live slots were published before
// the fence).
template <int kKeyWords>
__device__ __forceinline__ SlabRead ReadSlabForWrite(const WarpTile& tile, const LaneRole& role,
                                                     uint8_t* slab, uint32_t tag) {
  SlabRead read = SplitLink(tile, LoadVolatile(slab + 8 * role.word));
  const uint32_t touched = SlotsTouchedBy(read.aux, tag);
  if (touched != 0) {
    const uint32_t nonzero = tile.Ballot(role.key_word && read.word != 0);
    const bool uncertain = role.head && ((touched >> role.slot) & 1u) != 0 &&
                           SlotStateOf(read.aux, role.slot) >= kSlotLive &&
                           ((nonzero >> role.word) & kKeyLaneMask<kKeyWords>) == 0;
    if (tile.Ballot(uncertain) != 0) {
      __threadfence();
      read.word = LoadVolatile(slab + 8 * role.word);
    }
  }
  return read;
}

// Lane 0 CASes the aux word; true (uniform) when it changed.
__device__ __forceinline__ bool CasAux(uint8_t* slab, uint32_t expected, uint32_t desired) {
  uint32_t before = 0;
  if (LaneId() == 0) before = atomicCAS(AuxOf(slab), expected, desired);
  return __shfl_sync(kFullMask, before, 0) == expected;
}

// Lane 0 turns `slot` from pending to live (or live to pending: the same
// flip), after the warp's stores before the call.
__device__ __forceinline__ void FlipPending(uint8_t* slab, uint32_t slot) {
  __syncwarp();
  __threadfence();
  if (LaneId() == 0) atomicXor(AuxOf(slab), kPendingToLiveFlip << (kStateBitsPerSlot * slot));
}

// Waiting for a pending slot to settle: its claimer is another warp that is
// between two of its own instructions.
__device__ __forceinline__ void BackOff() { __nanosleep(32); }

// ---------------------------------------------------------------- allocation

// Appends a zeroed slab after `slab` (the last of its list). Returns
// (uniform) the address of the slab that follows `slab` now — the new one, or
// the one another warp appended first — or kNullNext when SlabAlloc is full.
__device__ __forceinline__ uint32_t AppendSlab(const DeviceView& view, gpu::SlabAllocWarp* alloc,
                                               uint8_t* slab) {
  const uint32_t fresh = gpu::WarpAllocateSlab(view.alloc, alloc);
  if (fresh == kNullNext) return kNullNext;
  const uint32_t lane = LaneId();
  if (lane < kSlabWords) {
    StoreVolatile(SlabOf(view, fresh) + 8 * lane,
                  lane == kLinkWord ? uint64_t{kNullNext} << 32 : uint64_t{0});
  }
  __syncwarp();
  __threadfence();
  uint32_t winner = 0;
  if (lane == 0) {
    winner = atomicCAS(NextOf(slab), kNullNext, fresh);
    if (winner != kNullNext) gpu::FreeSlab(view.alloc, fresh);  // never published
  }
  winner = __shfl_sync(kFullMask, winner, 0);
  return winner == kNullNext ? fresh : winner;
}

// One lane records a value slab to free after the launch.
__device__ __forceinline__ void Retire(const WriteSink& sink, uint32_t address) {
  const unsigned long long at = atomicAdd(&sink.counters->retired, 1ull);
  sink.retired[at] = address;
}

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
template <int kKeyWords, int kSlotWords>
__device__ __forceinline__ bool WarpFindConcurrent(const DeviceView& view,
                                                   const Shape<kKeyWords, kSlotWords>& shape,
                                                   const LaneRole& role, const Key<kKeyWords>& key,
                                                   uint64_t bucket, uint64_t* value_word) {
  const WarpTile tile = WarpTile::Mine();
  const bool out_of_line = view.geometry.value_out_of_line;
  const bool locked = !out_of_line && view.geometry.value_words > 1;
  uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = ReadSlabForWrite<kKeyWords>(tile, role, slab, view.tag);
    const uint32_t heads = LiveHeadsHolding(tile, role, read, key);
    if (heads != 0) {
      const uint32_t head = __ffs(heads) - 1;
      const uint32_t slot = tile.FromWord(role.slot, head);
      const uint32_t value_at = head + kKeyWords;
      const uint32_t from = value_at + role.word < kSlotAreaWords ? value_at + role.word : 0;
      if (locked) {
        if (!CasAux(slab, read.aux, WithSlotState(read.aux, slot, kSlotPending))) continue;
        __threadfence();  // the last writer's words, published before it unlocked
        const uint64_t word = LoadVolatile(slab + 8 * role.word);
        *value_word = tile.FromWord(word, from);
        FlipPending(slab, slot);  // pending -> live; the copy is in registers
        return true;
      }
      uint64_t word = read.word;
      const bool recent = ((SlotsTouchedBy(read.aux, view.tag) >> slot) & 1u) != 0;
      if (recent) {
        __threadfence();
        word = LoadVolatile(slab + 8 * role.word);
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
      *value_word = LoadVolatile(SlabOf(view, address) + 8 * role.word);
      return true;
    }
    if (PendingPairs(read.aux, shape.slots()) != 0) {
      BackOff();
      continue;
    }
    if (FreePairs(read.aux, shape.slots()) != 0 || read.next == kNullNext) return false;
    slab = SlabOf(view, read.next);
  }
}

// ---------------------------------------------------------------- writes

enum class WriteOutcome : uint32_t { kInserted, kReplaced, kErased, kMissing, kRetry };

// Inserts `key` or replaces its value (Put; kMixed: a replace of Mixed).
// value_word: tile lane j holds word j of the new value (j below its words;
// for one-word values every lane may hold word 0). Uniform result: kRetry
// when SlabAlloc had no slab (nothing changed).
// Put batches detect a key written twice by the touched bits
// (sink.counters->duplicate); Mixed ignores them, and with inline values of
// several words locks the slot while it writes (WarpFindConcurrent).
template <int kKeyWords, int kSlotWords, bool kMixed>
__device__ __forceinline__ WriteOutcome WarpUpsert(const DeviceView& view, const WriteSink& sink,
                                                   gpu::SlabAllocWarp* alloc,
                                                   const Shape<kKeyWords, kSlotWords>& shape,
                                                   const LaneRole& role, const Key<kKeyWords>& key,
                                                   uint64_t bucket, uint64_t value_word) {
  const WarpTile tile = WarpTile::Mine();
  const uint32_t lane = LaneId();
  const bool out_of_line = view.geometry.value_out_of_line;
  const bool locked = kMixed && !out_of_line && view.geometry.value_words > 1;
  uint32_t value_slab = kNullNext;
  if (out_of_line) {
    value_slab = gpu::WarpAllocateSlab(view.alloc, alloc);
    if (value_slab == kNullNext) return WriteOutcome::kRetry;
    if (lane < kSlabWords) StoreVolatile(SlabOf(view, value_slab) + 8 * lane, value_word);
  }
  // The word this lane writes into a slot it claims or whose value it replaces.
  const uint32_t value_part = role.part >= kKeyWords ? role.part - kKeyWords : 0;
  const uint64_t shared_value = __shfl_sync(kFullMask, value_word, value_part);
  const uint64_t slot_word = role.key_word ? KeyWordAt(key, role.part)
                             : out_of_line ? uint64_t{value_slab}
                                           : shared_value;
  const bool writes_value = lane < kSlabWords && !role.key_word;
  uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = ReadSlabForWrite<kKeyWords>(tile, role, slab, view.tag);
    const uint32_t heads = LiveHeadsHolding(tile, role, read, key);
    if (heads != 0) {
      const uint32_t head = __ffs(heads) - 1;
      const uint32_t slot = tile.FromWord(role.slot, head);
      const bool in_slot = writes_value && role.slot == slot;
      bool duplicate = false;
      if (locked) {
        const uint32_t desired = TouchForWrite(read.aux, slot, kSlotPending, view.tag, &duplicate);
        if (!CasAux(slab, read.aux, desired)) continue;
        if (in_slot) StoreVolatile(slab + 8 * role.word, slot_word);
        FlipPending(slab, slot);
        return WriteOutcome::kReplaced;
      }
      if (TagOf(read.aux) == view.tag && TouchedBit(read.aux, slot)) {
        duplicate = true;
      } else {
        const uint32_t desired = TouchForWrite(read.aux, slot, kSlotLive, view.tag, &duplicate);
        if (!CasAux(slab, read.aux, desired)) continue;
      }
      if (!kMixed && duplicate && lane == 0) atomicOr(&sink.counters->duplicate, 1u);
      if (out_of_line) {
        __syncwarp();
        __threadfence();  // the value slab's words before its address
        if (in_slot) {
          const uint32_t old =
              atomicExch(reinterpret_cast<uint32_t*>(slab + 8 * role.word), value_slab);
          // kNullNext: a delete of this launch took the old slab; the dead
          // slot keeps ours, which nobody frees else.
          Retire(sink, old != kNullNext ? old : value_slab);
        }
      } else if (in_slot) {
        StoreVolatile(slab + 8 * role.word, slot_word);
      }
      return WriteOutcome::kReplaced;
    }
    const uint32_t slots = shape.slots();
    if (PendingPairs(read.aux, slots) != 0) {
      BackOff();  // maybe `key`, being claimed
      continue;
    }
    const uint32_t free_pairs = FreePairs(read.aux, slots);
    if (free_pairs != 0) {
      const uint32_t slot = (__ffs(free_pairs) - 1) / 2;
      bool duplicate = false;  // a free slot was never touched
      const uint32_t desired = TouchForWrite(read.aux, slot, kSlotPending, view.tag, &duplicate);
      if (!CasAux(slab, read.aux, desired)) continue;
      if (lane < kSlabWords && role.slot == slot) StoreVolatile(slab + 8 * role.word, slot_word);
      FlipPending(slab, slot);
      return WriteOutcome::kInserted;
    }
    uint32_t next = read.next;
    if (next == kNullNext) {
      next = AppendSlab(view, alloc, slab);
      if (next == kNullNext) {
        if (out_of_line && lane == 0) gpu::FreeSlab(view.alloc, value_slab);
        return WriteOutcome::kRetry;
      }
    }
    slab = SlabOf(view, next);
  }
}

// Erases `key` (Erase; kMixed: a delete of Mixed). Uniform result: kErased
// or kMissing. In an Erase batch a key the batch erased already (dead,
// touched by the batch) flags a duplicate.
template <int kKeyWords, int kSlotWords, bool kMixed>
__device__ __forceinline__ WriteOutcome WarpErase(const DeviceView& view, const WriteSink& sink,
                                                  const Shape<kKeyWords, kSlotWords>& shape,
                                                  const LaneRole& role, const Key<kKeyWords>& key,
                                                  uint64_t bucket) {
  const WarpTile tile = WarpTile::Mine();
  const uint32_t lane = LaneId();
  uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = ReadSlabForWrite<kKeyWords>(tile, role, slab, view.tag);
    const uint32_t heads = LiveHeadsHolding(tile, role, read, key);
    if (heads != 0) {
      const uint32_t head = __ffs(heads) - 1;
      const uint32_t slot = tile.FromWord(role.slot, head);
      bool duplicate = false;
      const uint32_t desired = TouchForWrite(read.aux, slot, kSlotDead, view.tag, &duplicate);
      if (!CasAux(slab, read.aux, desired)) continue;
      if (view.geometry.value_out_of_line && lane == head + kKeyWords) {
        // A dead slot owns no value slab: retire it (freed after the launch).
        const uint32_t old =
            atomicExch(reinterpret_cast<uint32_t*>(slab + 8 * (head + kKeyWords)), kNullNext);
        if (old != kNullNext) Retire(sink, old);
      }
      return WriteOutcome::kErased;
    }
    const uint32_t slots = shape.slots();
    if (!kMixed && (DeadPairs(read.aux, slots) != 0) && SlotsTouchedBy(read.aux, view.tag) != 0) {
      const bool erased_here = SlotStateOf(read.aux, role.slot) == kSlotDead &&
                               ((SlotsTouchedBy(read.aux, view.tag) >> role.slot) & 1u) != 0;
      if (HeadsHolding(tile, role, read, key, erased_here) != 0) {
        if (lane == 0) atomicOr(&sink.counters->duplicate, 1u);
        return WriteOutcome::kMissing;
      }
    }
    if (PendingPairs(read.aux, slots) != 0) {
      BackOff();  // maybe a locked slot holding `key`
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
__device__ __forceinline__ bool WarpInsertAbsent(const DeviceView& view, gpu::SlabAllocWarp* alloc,
                                                 const Shape<kKeyWords, kSlotWords>& shape,
                                                 const LaneRole& role, uint64_t bucket,
                                                 uint64_t slot_word) {
  const WarpTile tile = WarpTile::Mine();
  uint8_t* slab = BaseSlab(view, bucket);
  while (true) {
    const SlabRead read = SplitLink(tile, LoadVolatile(slab + 8 * role.word));
    const uint32_t free_pairs = FreePairs(read.aux, shape.slots());
    if (free_pairs != 0) {
      const uint32_t slot = (__ffs(free_pairs) - 1) / 2;
      // Nobody reads keys during a rehash: the slot is live at once.
      if (!CasAux(slab, read.aux, WithSlotState(read.aux, slot, kSlotLive))) continue;
      if (LaneId() < kSlabWords && role.slot == slot) {
        StoreVolatile(slab + 8 * role.word, slot_word);
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

}  // namespace gpkv::slab_hash::device
