// The pieces of the slab hash's warp-level operations (warp_ops.cuh) that
// read and change one slab: keys and value words, tiles and what each lane's
// slab word is, slab reads (for read kernels, and for write kernels with the
// re-read of slots the running batch may be writing), the aux-word CAS and
// pending flips, deferred claims, appending a slab, retiring a value slab.
//
// Tiles: a tile of 16 or 32 lanes reads a slab in one coalesced access, tile
// lane w (w = lane & 15) word w; in a 32-lane tile lanes 16..31 repeat lanes
// 0..15. Every function is called by all lanes of its tile, converged, with
// the same arguments; "uniform" results are the same in every lane of the
// tile. For the .cu files of tables/slab_hash/gpu/ only.
#pragma once

#include <cstdint>

#include "gpu/slab_alloc.cuh"
#include "gpu/warp_work_sharing.cuh"
#include "tables/slab_hash/gpu/device_view.h"
#include "tables/slab_hash/layout.h"

namespace gpkv::slab_hash::gpu::device {

using gpkv::gpu::warp::kFullMask;
using gpkv::gpu::warp::LaneId;

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

// Words other threads of the launch may write: relaxed loads and stores at
// device scope (strong, not cached in L1; ordered by the fences and atomics
// of the protocols).
__device__ __forceinline__ uint64_t LoadRelaxed(const uint8_t* address) {
  uint64_t value;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ void StoreRelaxed(uint8_t* address, uint64_t value) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
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
  return gpkv::gpu::SlabAt(view.alloc, address);
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
  // The lane that makes the tile's single atomics.
  __device__ __forceinline__ bool Leader() const { return LaneId() == base; }
  // True in one lane per slab word (a 32-lane tile's lanes 16..31 repeat).
  __device__ __forceinline__ bool OwnsWord() const { return kTileLanes == 16 || LaneId() < 16; }
  __device__ __forceinline__ void Sync() const { __syncwarp(mask); }
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
  // Inline values of several words: the run-time shapes only (one-word and
  // out-of-line values have fixed shapes).
  static constexpr bool kWideValues = kSlotWords == 0;
};

// Whether a kernel of a tile of kTileLanes lanes may meet out-of-line values:
// only whole warps run puts of them (a value slab per put), and fixed shapes
// hold them. Half-warp kernels other than Erase never do (the host launches
// whole warps for such tables), so the compiler drops their paths.
template <int kSlotWords, int kTileLanes>
__device__ __forceinline__ bool MayBeOutOfLine(const DeviceView& view) {
  return kSlotWords != 0 && kTileLanes == 32 && view.geometry.value_out_of_line;
}

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

// True (uniform) when a pending slot of the slab may be claiming `key`: its
// key words read as `key`'s or as zero (not yet written; a free slot's words
// are zero). A word that reads neither is the claimed key's final word, so
// that slot holds another key, and a writer need not wait for it.
template <int kKeyWords, int kTileLanes>
__device__ __forceinline__ bool PendingMayHold(const Tile<kTileLanes>& tile, const LaneRole& role,
                                               const SlabRead& read, const Key<kKeyWords>& key,
                                               uint32_t slots) {
  if (PendingPairs(read.aux, slots) == 0) return false;
  const uint64_t wanted = KeyWordAt(key, role.part);
  const uint32_t other = tile.Ballot(role.key_word && read.word != 0 && read.word != wanted);
  return tile.Ballot(role.head && SlotStateOf(read.aux, role.slot) == kSlotPending &&
                     ((other >> role.word) & kKeyLaneMask<kKeyWords>) == 0) != 0;
}

// A slab that writers of the batch tagged `tag` may change meanwhile. On
// return every slot live or dead in `aux` reads whole in `word`: when a slot
// the batch touched reads a key of zeros (maybe the free slot's zeros, read
// before its claimer's key), the slab is read again after a fence, and the
// aux word of the first read is kept (its live slots were published before
// the fence).
template <int kKeyWords, int kTileLanes>
__device__ __forceinline__ SlabRead ReadSlabForWrite(const Tile<kTileLanes>& tile,
                                                     const LaneRole& role, uint8_t* slab,
                                                     uint32_t tag) {
  SlabRead read = SplitLink(tile, LoadRelaxed(slab + 8 * role.word));
  const uint32_t touched = SlotsTouchedBy(read.aux, tag);
  if (touched != 0) {
    const uint32_t nonzero = tile.Ballot(role.key_word && read.word != 0);
    const bool uncertain = role.head && ((touched >> role.slot) & 1u) != 0 &&
                           SlotStateOf(read.aux, role.slot) >= kSlotLive &&
                           ((nonzero >> role.word) & kKeyLaneMask<kKeyWords>) == 0;
    if (tile.Ballot(uncertain) != 0) {
      __threadfence();
      read.word = LoadRelaxed(slab + 8 * role.word);
    }
  }
  return read;
}

// The tile's leader CASes the aux word; true (uniform) when it changed.
template <int kTileLanes>
__device__ __forceinline__ bool CasAux(const Tile<kTileLanes>& tile, uint8_t* slab,
                                       uint32_t expected, uint32_t desired) {
  uint32_t before = 0;
  if (tile.Leader()) before = atomicCAS(AuxOf(slab), expected, desired);
  return tile.FromWord(before, 0) == expected;
}

// The tile's leader turns `slot` from pending to live (or live to pending:
// the same flip), after the tile's stores before the call.
template <int kTileLanes>
__device__ __forceinline__ void FlipPending(const Tile<kTileLanes>& tile, uint8_t* slab,
                                            uint32_t slot) {
  tile.Sync();
  __threadfence();
  if (tile.Leader()) atomicXor(AuxOf(slab), kPendingToLiveFlip << (kStateBitsPerSlot * slot));
}

// Claims whose slot words are written but whose pending -> live flip waits,
// so that a tile fences once for many claims instead of once per claim. Each
// lane holds at most one: the claim of its own operation. A tile publishes
// them (Publish) before it waits for any pending slot (it may be its own)
// and before its kernel ends; until then writers of the same key wait, and
// nobody else reads the slot.
struct DeferredClaims {
  uint32_t* aux = nullptr;  // this lane's claim's aux word, or null
  uint32_t flip = 0;

  __device__ __forceinline__ void Hold(bool mine, uint8_t* slab, uint32_t slot) {
    if (mine) {
      aux = AuxOf(slab);
      flip = kPendingToLiveFlip << (kStateBitsPerSlot * slot);
    }
  }
  // Every lane of the tile, converged.
  template <int kTileLanes>
  __device__ __forceinline__ void Publish(const Tile<kTileLanes>& tile) {
    if (__ballot_sync(tile.mask, aux != nullptr) == 0) return;
    tile.Sync();
    __threadfence();  // every claimed slot's words before any of them turns live
    if (aux != nullptr) {
      atomicXor(aux, flip);
      aux = nullptr;
    }
  }
};

// Waiting for a pending slot to settle: its claimer is another tile that is
// between two of its own instructions, or holds deferred claims until its
// next wait. This tile's own deferred claims go out first.
template <int kTileLanes>
__device__ __forceinline__ void BackOff(const Tile<kTileLanes>& tile, DeferredClaims* deferred) {
  deferred->Publish(tile);
  __nanosleep(32);
}

// ---------------------------------------------------------------- allocation

// Allocation by a 16-lane tile, which has no resident block of its own
// (SlabAllocWarp is a whole warp's): lane j of the tile loads words j and
// j + 16 of a hashed block's bitmap, and one lane with a free bit claims its
// lowest one with one atomicOr (as WarpAllocateSlab). `salt` (uniform) varies
// the block between a tile's allocations. Returns (uniform) the slab or
// kNullNext when kMaxBlockAttempts blocks were full. Appends are a few
// percent of a batch's puts, so a bitmap load each costs little, and half
// warps need no second launch on whole warps for them.
template <int kTileLanes>
__device__ __forceinline__ uint32_t TileAllocateSlab(const gpkv::gpu::SlabAllocView& view,
                                                     const Tile<kTileLanes>& tile, uint32_t salt) {
  namespace detail = gpkv::gpu::slab_alloc_detail;
  if (view.super_block_count == 0) return kNullNext;
  const uint32_t lane = LaneId() & 15u;
  const uint32_t tile_id = 2 * detail::GlobalWarpId() + (tile.base >> 4);
  const uint32_t rotation = tile_id & 15u;
  for (uint32_t attempt = 0; attempt <= gpkv::gpu::kMaxBlockAttempts; ++attempt) {
    const uint32_t block = detail::ChooseBlock(view, tile_id, salt * 0x61c88647u + attempt);
    uint32_t* bitmap = detail::BlockBitmap(view, block);
    uint32_t low = __ldcg(bitmap + lane);
    uint32_t high = __ldcg(bitmap + lane + 16);
    while (true) {
      const uint32_t with_free =
          tile.Ballot(low != detail::kFullBitmapWord || high != detail::kFullBitmapWord);
      if (with_free == 0) break;  // full: another block
      const uint32_t spread = with_free | (with_free << 16);
      const uint32_t claimer = (__ffs(spread >> rotation) - 1 + rotation) & 15u;
      uint32_t address = kNullNext;
      if (lane == claimer) {
        const bool use_low = low != detail::kFullBitmapWord;
        const uint32_t word_index = use_low ? lane : lane + 16;
        const uint32_t word = use_low ? low : high;
        const uint32_t bit_index = __ffs(~word) - 1;
        const uint32_t bit = 1u << bit_index;
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device> target(bitmap[word_index]);
        const uint32_t before = target.fetch_or(bit, cuda::memory_order_acquire);
        if (use_low) {
          low = before | bit;
        } else {
          high = before | bit;
        }
        if ((before & bit) == 0) {
          address = (block << gpkv::gpu::kSlabAddressSlabBits) | (word_index << 5) | bit_index;
        }
      }
      address = tile.FromWord(address, claimer);
      if (address != kNullNext) return address;
    }
  }
  return kNullNext;
}

// Appends a zeroed slab after `slab` (the last of its list). Returns
// (uniform) the address of the slab that follows `slab` now — the new one, or
// the one another tile appended first — or kNullNext when SlabAlloc is full.
// Whole warps allocate from their resident block (`alloc`), 16-lane tiles
// with TileAllocateSlab (salt: see there). *allocated (uniform) counts the
// slabs taken, for the host's bound on the slabs in use.
template <int kTileLanes>
__device__ __forceinline__ uint32_t AppendSlab(const DeviceView& view,
                                               gpkv::gpu::SlabAllocWarp* alloc,
                                               const Tile<kTileLanes>& tile, uint8_t* slab,
                                               uint32_t* allocated) {
  uint32_t fresh;
  if constexpr (kTileLanes == 32) {
    fresh = gpkv::gpu::WarpAllocateSlab(view.alloc, alloc);
  } else {
    fresh = TileAllocateSlab(view.alloc, tile, *allocated);
  }
  if (fresh == kNullNext) return kNullNext;
  ++*allocated;
  const uint32_t word = LaneId() & 15u;
  if (tile.OwnsWord()) {
    StoreRelaxed(SlabOf(view, fresh) + 8 * word,
                 word == kLinkWord ? uint64_t{kNullNext} << 32 : uint64_t{0});
  }
  tile.Sync();
  __threadfence();
  uint32_t winner = 0;
  if (tile.Leader()) {
    winner = atomicCAS(NextOf(slab), kNullNext, fresh);
    if (winner != kNullNext) gpkv::gpu::FreeSlab(view.alloc, fresh);  // never published
  }
  winner = tile.FromWord(winner, 0);
  return winner == kNullNext ? fresh : winner;
}

__device__ __forceinline__ uint32_t AppendSlab(const DeviceView& view,
                                               gpkv::gpu::SlabAllocWarp* alloc, uint8_t* slab) {
  uint32_t allocated = 0;
  return AppendSlab(view, alloc, WarpTile::Mine(), slab, &allocated);
}

// One lane records a value slab to free after the launch.
__device__ __forceinline__ void Retire(const WriteSink& sink, uint32_t address) {
  const unsigned long long at = atomicAdd(&sink.counters->retired, 1ull);
  sink.retired[at] = address;
}

}  // namespace gpkv::slab_hash::gpu::device
