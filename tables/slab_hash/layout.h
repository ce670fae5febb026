// Layout of the volatile slab hash (Ashkiani, Farach-Colton and
// Owens, "A Dynamic Hash Table for the GPU", IPDPS 2018): slabs, slots, the
// aux word, the key hash and the sizing rules. Pure functions over plain
// data that the GPU kernels (tables/slab_hash/gpu/) and their CPU tests call.
// The table lives in GPU memory only: nothing here is written to a pool, so
// no format version guards it.
//
// A bucket is a list of 128-byte slabs: the bucket's base slab in a
// contiguous bucket array, then chained slabs from gpkv::gpu::SlabAlloc. A warp
// reads a slab in one coalesced access (lane l loads word l & 15).
//
// Slab (16 little-endian 64-bit words):
//   words 0..14   slots: slot s occupies words [s * slot_words, (s + 1) * slot_words)
//                 (words past slots_per_slab * slot_words are unused, zero)
//   word 15       bits  0..31  aux word (below)
//                 bits 32..63  next: SlabAlloc address of the next slab of the
//                              list, kNullNext at the end
//
// Slot (slot_words = key_words + value_words):
//   key_words     the key (key_size / 8 words: 1, 2 or 4)
//   value_words   the value, zero padded (ceil(value_size / 8) words) when
//                 key_words + that <= 15 ("inline"); otherwise one word whose
//                 low 32 bits are the SlabAlloc address of a value slab that
//                 holds the value in its first value_size bytes ("out of line").
//
// Aux word (32 bits):
//   bits  0..13   two state bits per slot s at 2s: 0 free, 1 pending (being
//                 claimed), 2 live, 3 dead (erased, kept until a flush)
//   bits 14..20   touched bits, one per slot: written by the batch named by
//                 the tag (duplicate detection within a write batch)
//   bits 21..31   tag of the batch that last touched the slab (0: none)
//
// Every key value is legal: a slot's state lives in the aux word, never in
// the key. The words of a free slot are zero (a new slab is zeroed, a flush
// zeroes the slots it frees); a claimed slot's key is written after its claim
// and before it turns live, so a reader that sees a live slot of this batch
// whose key still reads zero re-reads after a fence (SlotIsUncertain).
//
// Prefix property: an insert claims the first free slot of its list (the
// lowest free slot of the first slab that has one) and a slab is appended
// only when the last one has no free slot; dead slots stay dead until a
// flush. So free slots are only ever at the end of a list, and a search stops
// at the first slab with a free slot.
#pragma once

#include <cstdint>

#include "format/hash.h"
#include "format/hd.h"
#include "format/pool_layout.h"

namespace gpkv::slab_hash {

// ---- slabs ----
constexpr uint32_t kSlabBytes = 128;
constexpr uint32_t kSlabWords = 16;
constexpr uint32_t kSlotAreaWords = 15;  // words 0..14
constexpr uint32_t kLinkWord = 15;       // aux (low half) and next (high half)
constexpr uint32_t kAuxByteOffset = kLinkWord * 8;
constexpr uint32_t kNextByteOffset = kLinkWord * 8 + 4;
constexpr uint32_t kMaxSlotsPerSlab = 7;  // 15 words / (1 key word + 1 value word)
// The end of a list (equal to gpkv::gpu::kNullSlab, which this header cannot name).
constexpr uint32_t kNullNext = 0xffffffffu;

// ---- geometry ----
// How a table of key_size and value_size bytes fills its slabs.
struct SlabGeometry {
  uint32_t key_words;       // key_size / 8
  uint32_t value_size;      // bytes of a value
  uint32_t value_words;     // words of the value in a slot (1 when out of line)
  bool value_out_of_line;   // the slot holds a value slab's address
  uint32_t slot_words;      // key_words + value_words
  uint32_t slots_per_slab;  // kSlotAreaWords / slot_words
};

// Words of a value of `value_size` bytes stored in place.
GPKV_HD constexpr uint32_t InlineValueWords(uint32_t value_size) { return (value_size + 7) / 8; }

// The geometry for keys of key_size and values of value_size bytes.
// REQUIRES: format::IsValidKeySize(key_size), format::IsValidValueSize(value_size).
GPKV_HD constexpr SlabGeometry GeometryFor(uint32_t key_size, uint32_t value_size) {
  SlabGeometry geometry{};
  geometry.key_words = key_size / 8;
  geometry.value_size = value_size;
  const uint32_t inline_words = InlineValueWords(value_size);
  geometry.value_out_of_line = geometry.key_words + inline_words > kSlotAreaWords;
  geometry.value_words = geometry.value_out_of_line ? 1 : inline_words;
  geometry.slot_words = geometry.key_words + geometry.value_words;
  geometry.slots_per_slab = kSlotAreaWords / geometry.slot_words;
  return geometry;
}

// Whether a slab hash holds keys of key_size and values of value_size bytes.
GPKV_HD constexpr bool IsValidSizes(uint32_t key_size, uint32_t value_size) {
  return format::IsValidKeySize(key_size) && format::IsValidValueSize(value_size);
}

// Word of the slab holding key word `i` / value word `j` of slot `slot`.
GPKV_HD constexpr uint32_t KeyWordIndex(const SlabGeometry& geometry, uint32_t slot, uint32_t i) {
  return slot * geometry.slot_words + i;
}
GPKV_HD constexpr uint32_t ValueWordIndex(const SlabGeometry& geometry, uint32_t slot, uint32_t j) {
  return slot * geometry.slot_words + geometry.key_words + j;
}

// ---- aux word ----
enum SlotState : uint32_t { kSlotFree = 0, kSlotPending = 1, kSlotLive = 2, kSlotDead = 3 };

constexpr uint32_t kStateBitsPerSlot = 2;
constexpr uint32_t kStateMask = (1u << (kStateBitsPerSlot * kMaxSlotsPerSlab)) - 1;  // bits 0..13
constexpr uint32_t kTouchedShift = kStateBitsPerSlot * kMaxSlotsPerSlab;             // 14
constexpr uint32_t kTouchedMask = ((1u << kMaxSlotsPerSlab) - 1) << kTouchedShift;
constexpr uint32_t kTagShift = kTouchedShift + kMaxSlotsPerSlab;  // 21
constexpr uint32_t kTagBits = 32 - kTagShift;                     // 11
constexpr uint32_t kTagCount = 1u << kTagBits;                    // tags 1..kTagCount-1
static_assert(kTagShift + kTagBits == 32, "the aux word is 32 bits");
// Pending -> live flips both state bits of the slot (01 -> 10): an XOR.
constexpr uint32_t kPendingToLiveFlip = 3;

GPKV_HD constexpr uint32_t SlotStateOf(uint32_t aux, uint32_t slot) {
  return (aux >> (kStateBitsPerSlot * slot)) & 3u;
}
GPKV_HD constexpr uint32_t WithSlotState(uint32_t aux, uint32_t slot, uint32_t state) {
  const uint32_t shift = kStateBitsPerSlot * slot;
  return (aux & ~(3u << shift)) | (state << shift);
}
GPKV_HD constexpr uint32_t TagOf(uint32_t aux) { return aux >> kTagShift; }
GPKV_HD constexpr bool TouchedBit(uint32_t aux, uint32_t slot) {
  return ((aux >> (kTouchedShift + slot)) & 1u) != 0;
}

// The slots (bit s for slot s, s < slots_per_slab) in state `state`.
GPKV_HD constexpr uint32_t SlotsInState(uint32_t aux, uint32_t state, uint32_t slots_per_slab) {
  uint32_t slots = 0;
  for (uint32_t slot = 0; slot < slots_per_slab; ++slot) {
    if (SlotStateOf(aux, slot) == state) slots |= 1u << slot;
  }
  return slots;
}
// The same as pair masks: bit 2s set for slot s, from a few bit operations
// (what the kernels use on every slab they read). The lowest such slot is
// (ffs(pairs) - 1) / 2.
constexpr uint32_t kEvenBits = 0x1555u;  // bit 2s for s < kMaxSlotsPerSlab
GPKV_HD constexpr uint32_t SlotPairBits(uint32_t slots_per_slab) {
  return kEvenBits & ((1u << (kStateBitsPerSlot * slots_per_slab)) - 1);
}
GPKV_HD constexpr uint32_t FreePairs(uint32_t aux, uint32_t slots_per_slab) {
  return ~aux & ~(aux >> 1) & SlotPairBits(slots_per_slab);
}
GPKV_HD constexpr uint32_t PendingPairs(uint32_t aux, uint32_t slots_per_slab) {
  return aux & ~(aux >> 1) & SlotPairBits(slots_per_slab);
}
GPKV_HD constexpr uint32_t LivePairs(uint32_t aux, uint32_t slots_per_slab) {
  return ~aux & (aux >> 1) & SlotPairBits(slots_per_slab);
}
GPKV_HD constexpr uint32_t DeadPairs(uint32_t aux, uint32_t slots_per_slab) {
  return aux & (aux >> 1) & SlotPairBits(slots_per_slab);
}

// The slots a write of the batch tagged `tag` touched (bit s for slot s).
GPKV_HD constexpr uint32_t SlotsTouchedBy(uint32_t aux, uint32_t tag) {
  return TagOf(aux) == tag ? (aux & kTouchedMask) >> kTouchedShift : 0u;
}

// The aux word after a write of the batch tagged `tag` (1..kTagCount-1) on
// `slot` that also sets its state to `state`: a slab last touched by another
// batch takes the tag and forgets its touched bits first. *duplicate: the
// batch had touched the slot before (a key written twice in one batch).
GPKV_HD constexpr uint32_t TouchForWrite(uint32_t aux, uint32_t slot, uint32_t state, uint32_t tag,
                                         bool* duplicate) {
  if (TagOf(aux) != tag) aux = (aux & kStateMask) | (tag << kTagShift);
  *duplicate = TouchedBit(aux, slot);
  aux |= 1u << (kTouchedShift + slot);
  return WithSlotState(aux, slot, state);
}

// The aux word a flush or rehash writes: the first `live_slots` slots live,
// the others free, no tag.
GPKV_HD constexpr uint32_t PackedAux(uint32_t live_slots) {
  uint32_t aux = 0;
  for (uint32_t slot = 0; slot < live_slots; ++slot) aux |= kSlotLive << (kStateBitsPerSlot * slot);
  return aux;
}

// True when a reader must re-read a slot after a fence before trusting its
// key: the slot is live or dead, was touched by the running batch (it may
// have been claimed in this batch) and its key words read zero — possibly
// the free slot's zeros read before the claimer's key. A slot not touched by
// the batch was written by an earlier launch and reads whole.
GPKV_HD constexpr bool SlotIsUncertain(uint32_t aux, uint32_t slot, uint32_t tag,
                                       bool key_is_zero) {
  return key_is_zero && SlotStateOf(aux, slot) >= kSlotLive && TagOf(aux) == tag &&
         TouchedBit(aux, slot);
}

// The tag of the write batch after the one tagged `tag` (0 for none yet):
// 1..kTagCount-1 in turn. *wrapped when the tags start over: every slab's
// tag and touched bits must be cleared before the batch runs, so that an old
// tag is never mistaken for the new batch's.
GPKV_HD constexpr uint32_t NextBatchTag(uint32_t tag, bool* wrapped) {
  *wrapped = tag + 1 >= kTagCount;
  return *wrapped ? 1u : tag + 1;
}

// ---- hash and bucket ----
// The key's 64-bit hash (the mixing steps of format::HashKey, once): a
// seeded mix of the key's words, little-endian.
GPKV_HD uint64_t KeyHash64(const uint64_t* key_words, uint32_t word_count, uint64_t seed) {
  uint64_t h = seed ^ format::kHashP0 ^ (uint64_t{word_count} << 3);
  for (uint32_t i = 0; i < word_count; ++i) {
    h = format::Mix64(key_words[i] ^ format::kHashP1, h ^ format::kHashP2);
  }
  return format::Mix64(h ^ format::kHashP3, format::kHashP1);
}

// The bucket of `hash` among `bucket_count` (any count >= 1): the high half
// of hash * bucket_count (the high bits of the hash pick the bucket).
GPKV_HD uint64_t BucketOf(uint64_t hash, uint64_t bucket_count) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(hash, bucket_count);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * bucket_count) >> 64);
#endif
}

// The 32 bits of the hash a within-batch duplicate sort orders by (the low
// half: independent of the bucket's high bits).
GPKV_HD constexpr uint32_t DuplicateSortKey(uint64_t hash) { return static_cast<uint32_t>(hash); }

// ---- sizing ----
// Buckets for `keys` keys at create and in a bulk build: lists of one slab
// filled to 70%.
constexpr double kInitialSlabFill = 0.7;
GPKV_HD constexpr uint64_t BucketsFor(uint64_t keys, uint32_t slots_per_slab) {
  const double per_bucket = slots_per_slab * kInitialSlabFill;
  const double wanted = static_cast<double>(keys) / per_bucket;
  uint64_t buckets = static_cast<uint64_t>(wanted);
  if (static_cast<double>(buckets) < wanted) ++buckets;
  return buckets < 1 ? 1 : buckets;
}

// Growth: lists average more than kRehashSlabsPerList slabs of keys.
constexpr uint64_t kRehashSlabsPerList = 2;
constexpr uint64_t kRehashGrowthFactor = 4;
GPKV_HD constexpr bool NeedsRehash(uint64_t keys, uint64_t buckets, uint32_t slots_per_slab) {
  return keys > buckets * slots_per_slab * kRehashSlabsPerList;
}
// Buckets after a rehash of a table of `buckets` buckets holding `keys` keys.
GPKV_HD constexpr uint64_t RehashBuckets(uint64_t keys, uint64_t buckets, uint32_t slots_per_slab) {
  const uint64_t grown = buckets * kRehashGrowthFactor;
  const uint64_t sized = BucketsFor(keys, slots_per_slab);
  return grown > sized ? grown : sized;
}

// Automatic flush: dead slots outnumber a quarter of the live keys and a
// quarter of the base slabs' slots, and there are enough of them to pay for
// a pass over every list. The base-slot bound keeps a flush (a pass over
// every bucket) amortised when a table empties: deleting every key of a
// table flushes about twice, not once per quarter of what is left (measured
// on an H100: 14 flushes at 2^26 keys took the delete rate to 0.16 G/s).
constexpr uint64_t kMinDeadSlotsForFlush = uint64_t{1} << 16;
GPKV_HD constexpr bool NeedsFlush(uint64_t dead_slots, uint64_t live_keys, uint64_t buckets,
                                  uint32_t slots_per_slab) {
  return dead_slots > live_keys / 4 && dead_slots > buckets * slots_per_slab / 4 &&
         dead_slots >= kMinDeadSlotsForFlush;
}

}  // namespace gpkv::slab_hash
