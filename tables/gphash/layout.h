// On-media layout of a persistent hash table (GPHash): table root, level
// sets, buckets, slots and value cells; and the pure functions over them
// that the CPU backend, the GPU kernels and recovery all call.
//
// A table has levels of buckets, top (newest, largest) first; level i of a
// table with top-level bucket count N has N >> i buckets, so a lower bucket
// is shared by the upper buckets that map onto it (inter-level sharing). A
// key may sit in hash_locations buckets per level: bucket
// BucketIndex(hash, location, bucket_count). With the default 2L-2H-8S that is
// 2 levels x 2 locations x 8 slots = 32 candidate slots, one per warp lane.
//
// Bucket (bucket_bytes = AlignUp(S * (16 + K), 64), S slots, K key bytes):
//   0          u64 slot_word[S]     state + version + fingerprint (below)
//   S*8        u8  key[S][K]        keys in place
//   S*(8+K)    u64 value_word[S]    the value (<= 8 bytes, zero padded), or the
//                                   pool offset of its value cell
//
// Slot word (the commit word of a slot):
//   bits 63..60  state: 0 EMPTY, 1 INSERT (reserved by an inserter), 2 VALID
//   bits 59..52  version: +1 at each reservation, so a reader can detect that
//                a slot changed under it (seqlock) even when the fingerprint
//                is the same
//   bits 51..0   fingerprint of the key (VALID only; 0 otherwise)
// Every key value is legal: no key value is reserved as a marker.
//
// Insert (log-free): CAS slot word EMPTY -> INSERT; write key and value word
// (and value cell); persist; publish VALID|fingerprint; persist. Erase: CAS
// VALID -> EMPTY; persist. Update: store the value word (inline) or CAS it to
// a new cell written and persisted before (out of place); persist.
// Recovery clears INSERT slots. If a key is VALID in several slots (racing
// inserts, an interrupted resize) the one at the highest level_id, then the
// lowest bucket index, then the lowest slot wins; the others are erased.
//
// Table root (one 4 KiB extent, GphashRoot):
//   0    u64 magic              kGphashRootMagic
//   8    u64 table_id
//   16   u32 key_size, 20 u32 value_size
//   24   u8 levels, 25 u8 hash_locations, 26 u8 slots_per_bucket, 27 u8 value_mode
//   28   u32 bucket_bytes
//   32   u64 hash_seed
//   40   u32 cell_size          bytes of a value cell (0 when inline)
//   44   u32 reserved0
//   48   u64 cells_per_chunk
//   56   u64 checksum           Checksum64 of bytes 0..55 (immutable part)
//   64   u64 active_levelset    commit word: (generation << 1) | index of the
//                               current LevelSet
//   72   u64 resizes            statistic, advisory
//   80   u64 value_chunk_count  commit word: chunks in use in value_chunks[]
//   88   u64 reserved1[5]
//   128  LevelSet levelsets[2]  written out of place, published by active_levelset
//   640  u64 value_chunks[kMaxValueChunks]  offsets of value-cell extents
//
// LevelSet (256 bytes):
//   0    u32 level_count        1..kMaxLevels
//   4    u32 flags              kLevelSetResizing
//   8    u64 generation
//   16   LevelDesc levels[kMaxLevels]  {u64 offset; u64 bucket_count; u64 level_id}
//   208  u64 next_level_id
//   216  u64 reserved[4]
//   248  u64 checksum           Checksum64 of bytes 0..247
//
// Resize (when no candidate slot is free): allocate a new top level of twice
// the buckets and publish a LevelSet with it on top and kLevelSetResizing set;
// move every VALID slot of the bottom level into the new top (or any other
// level that has room), each by insert-then-erase; publish a LevelSet without
// the bottom level and without the flag; free the old bottom. A crash
// anywhere resumes from the published LevelSet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "format/hash.h"
#include "format/hd.h"

namespace gpkv::format {

constexpr uint64_t kGphashRootMagic = 0x31544f4f52485047ULL;  // "GPHROOT1"
constexpr uint32_t kMaxLevels = 8;
constexpr uint32_t kMaxValueChunks = 432;
constexpr uint32_t kLevelSetResizing = 1u;
constexpr uint64_t kGphashRootSize = 4096;

enum ValueMode : uint8_t { kValueInline = 0, kValueCells = 1 };

// ---- slot words ----
enum SlotState : uint32_t { kSlotEmpty = 0, kSlotInsert = 1, kSlotValid = 2 };

constexpr uint64_t kFingerprintBits = 52;
constexpr uint64_t kFingerprintMask = (uint64_t{1} << kFingerprintBits) - 1;
constexpr uint64_t kStateMatchMask = ~(uint64_t{0xff} << kFingerprintBits);  // state + fp

GPKV_HD uint32_t SlotStateOf(uint64_t word) { return static_cast<uint32_t>(word >> 60); }
GPKV_HD uint32_t SlotVersionOf(uint64_t word) {
  return static_cast<uint32_t>((word >> kFingerprintBits) & 0xff);
}
GPKV_HD uint64_t FingerprintOf(uint64_t word) { return word & kFingerprintMask; }
GPKV_HD uint64_t MakeSlotWord(uint32_t state, uint32_t version, uint64_t fingerprint) {
  return (uint64_t{state} << 60) | (uint64_t{version & 0xff} << kFingerprintBits) |
         (fingerprint & kFingerprintMask);
}
// The reservation word that replaces `empty_word` (version + 1).
GPKV_HD uint64_t ReserveWord(uint64_t empty_word) {
  return MakeSlotWord(kSlotInsert, SlotVersionOf(empty_word) + 1, 0);
}
// The published word for a reservation `insert_word`.
GPKV_HD uint64_t PublishWord(uint64_t insert_word, uint64_t fingerprint) {
  return MakeSlotWord(kSlotValid, SlotVersionOf(insert_word), fingerprint);
}
// The word an erase leaves (the version is kept).
GPKV_HD uint64_t EmptyWord(uint64_t word) {
  return MakeSlotWord(kSlotEmpty, SlotVersionOf(word), 0);
}
// True if `word` is VALID with `fingerprint` (one compare, as for a whole
// bucket in one step: (word & kStateMatchMask) == ValidPattern(fingerprint)).
GPKV_HD uint64_t ValidPattern(uint64_t fingerprint) {
  return (uint64_t{kSlotValid} << 60) | (fingerprint & kFingerprintMask);
}
GPKV_HD bool SlotMatches(uint64_t word, uint64_t fingerprint) {
  return (word & kStateMatchMask) == ValidPattern(fingerprint);
}
GPKV_HD bool SlotStateIsKnown(uint64_t word) {
  uint32_t state = SlotStateOf(word);
  if (state == kSlotValid) return true;
  return (state == kSlotEmpty || state == kSlotInsert) && FingerprintOf(word) == 0;
}

GPKV_HD uint64_t FingerprintOfHash(const KeyHash& hash) {
  return (hash.secondary >> 12) & kFingerprintMask;
}

// Duplicate resolution: true if the slot (level_id_a, bucket_a, slot_a) wins
// over (level_id_b, bucket_b, slot_b) when both hold the same key VALID: the
// higher level_id, then the lower bucket index, then the lower slot.
GPKV_HD bool SlotOutranks(uint64_t level_id_a, uint64_t bucket_a, uint32_t slot_a,
                          uint64_t level_id_b, uint64_t bucket_b, uint32_t slot_b) {
  if (level_id_a != level_id_b) return level_id_a > level_id_b;
  if (bucket_a != bucket_b) return bucket_a < bucket_b;
  return slot_a < slot_b;
}

// ---- buckets ----
GPKV_HD uint32_t BucketBytes(uint32_t slots_per_bucket, uint32_t key_size) {
  uint32_t raw = slots_per_bucket * (16 + key_size);
  return (raw + 63) / 64 * 64;
}
GPKV_HD uint32_t SlotWordOffset(uint32_t slot) { return slot * 8; }
GPKV_HD uint32_t KeyOffset(uint32_t slots_per_bucket, uint32_t key_size, uint32_t slot) {
  return slots_per_bucket * 8 + slot * key_size;
}
GPKV_HD uint32_t ValueWordOffset(uint32_t slots_per_bucket, uint32_t key_size, uint32_t slot) {
  return slots_per_bucket * (8 + key_size) + slot * 8;
}

// Bucket of `hash` for hash location `location` in a level of `bucket_count`
// buckets (a power of two). Location 0 uses the primary hash, 1 the
// secondary, further ones a rotation of their sum.
GPKV_HD uint64_t BucketIndex(const KeyHash& hash, uint32_t location, uint64_t bucket_count) {
  uint64_t h;
  if (location == 0) {
    h = hash.primary;
  } else if (location == 1) {
    h = hash.secondary;
  } else {
    uint64_t sum = hash.primary + location * hash.secondary;
    h = (sum << 29) | (sum >> 35);
  }
  return h & (bucket_count - 1);
}

// ---- root ----
struct LevelDesc {
  uint64_t offset;        // extent of the level's buckets
  uint64_t bucket_count;  // a power of two
  uint64_t level_id;      // newer levels have higher ids
};
static_assert(sizeof(LevelDesc) == 24);

struct LevelSet {
  uint32_t level_count;
  uint32_t flags;
  uint64_t generation;
  LevelDesc levels[kMaxLevels];
  uint64_t next_level_id;
  uint64_t reserved[4];
  uint64_t checksum;
};
static_assert(sizeof(LevelSet) == 256);
static_assert(offsetof(LevelSet, checksum) == 248);
static_assert(std::is_trivially_copyable_v<LevelSet>);

struct GphashRoot {
  uint64_t magic;
  uint64_t table_id;
  uint32_t key_size;
  uint32_t value_size;
  uint8_t levels;
  uint8_t hash_locations;
  uint8_t slots_per_bucket;
  uint8_t value_mode;
  uint32_t bucket_bytes;
  uint64_t hash_seed;
  uint32_t cell_size;
  uint32_t reserved0;
  uint64_t cells_per_chunk;
  uint64_t checksum;  // of bytes 0..55
  uint64_t active_levelset;
  uint64_t resizes;
  uint64_t value_chunk_count;
  uint64_t reserved1[5];
  LevelSet levelsets[2];
  uint64_t value_chunks[kMaxValueChunks];
};
static_assert(offsetof(GphashRoot, checksum) == 56);
static_assert(offsetof(GphashRoot, active_levelset) == 64);
static_assert(offsetof(GphashRoot, levelsets) == 128);
static_assert(offsetof(GphashRoot, value_chunks) == 640);
static_assert(sizeof(GphashRoot) <= kGphashRootSize);
static_assert(std::is_trivially_copyable_v<GphashRoot>);

GPKV_HD uint32_t ActiveLevelSetIndex(uint64_t active_word) {
  return static_cast<uint32_t>(active_word & 1);
}
GPKV_HD uint64_t ActiveLevelSetGeneration(uint64_t active_word) { return active_word >> 1; }
GPKV_HD uint64_t MakeActiveLevelSetWord(uint64_t generation, uint32_t index) {
  return (generation << 1) | (index & 1);
}

// Value cell size for a value of value_size bytes (multiple of 8).
GPKV_HD uint32_t CellSizeFor(uint32_t value_size) { return (value_size + 7) / 8 * 8; }

}  // namespace gpkv::format
