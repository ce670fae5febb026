// On-media layout of a persistent hash table (GPHash): table root, level
// sets, buckets, slots and value cells; and the pure functions over them
// that the CPU backend, the GPU kernels and recovery all call. Each rule of
// the format is written here once: the limits (what a table may be), the
// candidate buckets of a key and the order in which they are read, and the
// winner rule of duplicate resolution.
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
// the flag and without the bottom level; add one to `resizes`; free the old
// bottom. If some key of the bottom level found no room above, the LevelSet
// published without the flag keeps the bottom level (one more level, up to
// kMaxLevels) and nothing is freed. A crash anywhere resumes from the
// published LevelSet (gphash::Core, core.h, runs this for both backends).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "format/hash.h"
#include "format/hd.h"
#include "format/pool_layout.h"

namespace gpkv::gphash {

constexpr uint64_t kGphashRootMagic = 0x31544f4f52485047ULL;  // "GPHROOT1"
constexpr uint32_t kMaxValueChunks = 432;
constexpr uint32_t kLevelSetResizing = 1u;
constexpr uint64_t kGphashRootSize = 4096;

enum ValueMode : uint8_t { kValueInline = 0, kValueCells = 1 };

// ---- limits ----
// What a table may be. Checked when a table is created (both backends), when
// its root is read (ReadGphash: a root outside them is corruption), and by
// the engine and the CLI before that; the kernels are instantiated for
// exactly these key sizes and slot counts.
// Key and value sizes: the pool-wide limits of format/pool_layout.h
// (kMinKeySize..kMaxKeySize, kMinValueSize..kMaxValueSize).
// Values of up to this many bytes sit in the slot's value word; larger ones
// in a value cell the value word points to.
constexpr uint32_t kMaxInlineValueSize = 8;
// Levels of the geometry chosen at create (GphashRoot::levels).
constexpr uint32_t kMinGeometryLevels = 1;
constexpr uint32_t kMaxGeometryLevels = 4;
// Levels a LevelSet may hold: the geometry's, one more while a resize runs,
// and any a resize could not empty.
constexpr uint32_t kMaxLevels = 8;
constexpr uint32_t kMinHashLocations = 1;
constexpr uint32_t kMaxHashLocations = 4;
// Slots per bucket: the powers of two kMinSlotsPerBucket..kMaxSlotsPerBucket.
constexpr uint32_t kMinSlotsPerBucket = 4;
constexpr uint32_t kMaxSlotsPerBucket = 16;
// Buckets of one level (a power of two): a resize that would double the top
// level past this is PoolFull on both backends.
constexpr uint64_t kMaxBucketCount = uint64_t{1} << 40;
constexpr uint64_t kMaxCellsPerChunk = uint64_t{1} << 22;
// Candidate buckets of a key, over every level and hash location.
constexpr uint32_t kMaxCandidateBuckets = kMaxLevels * kMaxHashLocations;
static_assert(kMaxGeometryLevels < kMaxLevels, "a resize adds a level to the geometry's");

GPKV_HD constexpr bool IsValidGeometryLevels(uint32_t levels) {
  return levels >= kMinGeometryLevels && levels <= kMaxGeometryLevels;
}
GPKV_HD constexpr bool IsValidHashLocations(uint32_t hash_locations) {
  return hash_locations >= kMinHashLocations && hash_locations <= kMaxHashLocations;
}
GPKV_HD constexpr bool IsValidSlotsPerBucket(uint32_t slots_per_bucket) {
  return format::IsPowerOfTwo(slots_per_bucket) && slots_per_bucket >= kMinSlotsPerBucket &&
         slots_per_bucket <= kMaxSlotsPerBucket;
}
GPKV_HD constexpr bool IsValidGeometry(uint32_t levels, uint32_t hash_locations,
                                       uint32_t slots_per_bucket) {
  return IsValidGeometryLevels(levels) && IsValidHashLocations(hash_locations) &&
         IsValidSlotsPerBucket(slots_per_bucket);
}
// Where a table with values of `value_size` bytes keeps them.
GPKV_HD constexpr ValueMode ValueModeFor(uint32_t value_size) {
  return value_size > kMaxInlineValueSize ? kValueCells : kValueInline;
}

// ---- slot words ----
enum SlotState : uint32_t { kSlotEmpty = 0, kSlotInsert = 1, kSlotValid = 2 };

constexpr uint64_t kFingerprintBits = 52;
constexpr uint64_t kFingerprintMask = (uint64_t{1} << kFingerprintBits) - 1;
constexpr uint64_t kStateMatchMask = ~(uint64_t{0xff} << kFingerprintBits);  // state + fp
constexpr uint64_t kSlotStateMask = uint64_t{0xf} << 60;  // state only: 0 when EMPTY

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

GPKV_HD uint64_t FingerprintOfHash(const format::KeyHash& hash) {
  return (hash.secondary >> 12) & kFingerprintMask;
}

// ---- buckets ----
// constexpr: code compiled per (slots per bucket, key size), as the CPU
// backend's hot path, gets them as constants.
GPKV_HD constexpr uint32_t BucketBytes(uint32_t slots_per_bucket, uint32_t key_size) {
  return (slots_per_bucket * (16 + key_size) + 63) / 64 * 64;
}
GPKV_HD constexpr uint32_t SlotWordOffset(uint32_t slot) { return slot * 8; }
GPKV_HD constexpr uint32_t KeyOffset(uint32_t slots_per_bucket, uint32_t key_size, uint32_t slot) {
  return slots_per_bucket * 8 + slot * key_size;
}
GPKV_HD constexpr uint32_t ValueWordOffset(uint32_t slots_per_bucket, uint32_t key_size,
                                           uint32_t slot) {
  return slots_per_bucket * (8 + key_size) + slot * 8;
}

// Bucket of `hash` for hash location `location` in a level of `bucket_count`
// buckets (a power of two). Location 0 uses the primary hash, 1 the
// secondary, further ones a rotation of their sum.
GPKV_HD uint64_t BucketIndex(const format::KeyHash& hash, uint32_t location,
                             uint64_t bucket_count) {
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

// ---- candidate buckets ----
// A key's candidate buckets: in each level of the LevelSet, top (index 0)
// first, the bucket of each hash location, BucketIndex(hash, location, the
// level's bucket_count). Two locations of a level may name the same bucket.

// The orders in which CandidateBucketsOfLevel lists a level's candidates.
enum class CandidateOrder : uint32_t {
  // Hash location 0, 1, ...: a bucket two locations name comes twice.
  kEveryLocation,
  // Hash location order, each bucket once (where its first location puts it):
  // the order in which an insert breaks ties between equally empty buckets.
  kFirstLocation,
  // Ascending bucket index: the winner rule's order within a level, so that
  // reading levels top first and a level's buckets in this order, the first
  // bucket that holds a key holds its winning copy. A bucket two locations
  // name comes twice, next to itself: readers skip it with RepeatsPrevious
  // (no pass to drop repeats: this order serves the GPU's get path, where
  // the registers a compaction costs cut occupancy by a third).
  kWinner,
};

// The candidate buckets of one level.
struct LevelCandidates {
  uint64_t buckets[kMaxHashLocations];  // [0, count)
  uint32_t count;
};

// The candidate buckets of `hash` in a level of `bucket_count` buckets.
// REQUIRES: hash_locations <= kMaxHashLocations; bucket_count a power of two.
// The candidate buckets of `hash` in a level of `bucket_count` buckets in
// kWinner order, written to buckets[0, hash_locations): ascending, a bucket
// two locations name next to itself (skip it with buckets[i] ==
// buckets[i - 1]). Returns hash_locations. A plain array, so that the GPU's
// tile get keeps it in registers (measured: a returned struct cost it 16
// registers and a fifth of its rate).
GPKV_HD uint32_t WinnerOrderBuckets(const format::KeyHash& hash, uint32_t hash_locations,
                                    uint64_t bucket_count, uint64_t (&buckets)[kMaxHashLocations]) {
  for (uint32_t location = 0; location < hash_locations; ++location) {
    const uint64_t bucket = BucketIndex(hash, location, bucket_count);
    uint32_t at = location;
    for (; at > 0 && buckets[at - 1] > bucket; --at) buckets[at] = buckets[at - 1];
    buckets[at] = bucket;
  }
  return hash_locations;
}

// The same in kFirstLocation order (each bucket once, where its first
// location puts it), into a plain array; returns how many. The CPU backend's
// probe calls this per key and level (a returned struct cost its gets ~10%).
GPKV_HD uint32_t FirstLocationBuckets(const format::KeyHash& hash, uint32_t hash_locations,
                                      uint64_t bucket_count,
                                      uint64_t (&buckets)[kMaxHashLocations]) {
  uint32_t count = 0;
  for (uint32_t location = 0; location < hash_locations; ++location) {
    const uint64_t bucket = BucketIndex(hash, location, bucket_count);
    bool repeat = false;
    for (uint32_t i = 0; i < count; ++i) repeat |= buckets[i] == bucket;
    if (!repeat) buckets[count++] = bucket;
  }
  return count;
}

// The same in kEveryLocation order (location 0, 1, ...; repeats kept), into
// a plain array; returns hash_locations. What the CPU backend's prefetchers
// touch per key.
GPKV_HD uint32_t EveryLocationBuckets(const format::KeyHash& hash, uint32_t hash_locations,
                                      uint64_t bucket_count,
                                      uint64_t (&buckets)[kMaxHashLocations]) {
  for (uint32_t location = 0; location < hash_locations; ++location) {
    buckets[location] = BucketIndex(hash, location, bucket_count);
  }
  return hash_locations;
}

GPKV_HD LevelCandidates CandidateBucketsOfLevel(const format::KeyHash& hash,
                                                uint32_t hash_locations, uint64_t bucket_count,
                                                CandidateOrder order) {
  LevelCandidates out;
  out.count = 0;
  if (order == CandidateOrder::kWinner) {
    out.count = WinnerOrderBuckets(hash, hash_locations, bucket_count, out.buckets);
  } else if (order == CandidateOrder::kFirstLocation) {
    out.count = FirstLocationBuckets(hash, hash_locations, bucket_count, out.buckets);
  } else {
    out.count = EveryLocationBuckets(hash, hash_locations, bucket_count, out.buckets);
  }
  return out;
}

// True if candidate i names the same bucket as candidate i - 1 (kWinner
// lists a bucket two locations name twice, next to itself).
GPKV_HD bool RepeatsPrevious(const LevelCandidates& candidates, uint32_t i) {
  return i > 0 && candidates.buckets[i] == candidates.buckets[i - 1];
}

// True if bucket `bucket` of a level of `bucket_count` buckets is a candidate
// bucket of `hash` (a VALID slot anywhere else is misplaced).
GPKV_HD bool IsCandidateBucket(const format::KeyHash& hash, uint32_t hash_locations,
                               uint64_t bucket_count, uint64_t bucket) {
  for (uint32_t location = 0; location < hash_locations; ++location) {
    if (BucketIndex(hash, location, bucket_count) == bucket) return true;
  }
  return false;
}

// The candidate slots of a key numbered for a probe that reads them all at
// once (one per warp lane): candidate = (level * hash_locations + location) *
// slots_per_bucket + slot, i.e. level by level from the top, location by
// location (kEveryLocation), slot by slot, so a bucket's slots are adjacent.
struct CandidateSlot {
  uint32_t level;     // index in the LevelSet (0 = top)
  uint32_t location;  // hash location: the bucket is BucketIndex(hash, location, ...)
  uint32_t slot;      // slot in the bucket
};
GPKV_HD uint32_t CandidateSlotCount(uint32_t levels, uint32_t hash_locations,
                                    uint32_t slots_per_bucket) {
  return levels * hash_locations * slots_per_bucket;
}
GPKV_HD CandidateSlot CandidateSlotAt(uint32_t candidate, uint32_t hash_locations,
                                      uint32_t slots_per_bucket) {
  const uint32_t per_level = hash_locations * slots_per_bucket;
  CandidateSlot out;
  out.level = candidate / per_level;
  out.location = (candidate % per_level) / slots_per_bucket;
  out.slot = candidate % slots_per_bucket;
  return out;
}

// ---- duplicate resolution (the winner rule) ----
// If a key is VALID in several slots (racing inserts, an interrupted resize
// or kick), the copy in the newest level wins — the highest level_id, which
// is the lowest index in a LevelSet: level ids strictly decrease from the top
// down (ReadGphash checks it, a resize puts a new id on top) — then the one
// in the lowest bucket index, then in the lowest slot. Slots are named by
// their level's index in one LevelSet.
//
// WinnerRank is that order as one number: the smaller rank wins.
// REQUIRES: level < kMaxLevels, bucket < kMaxRankedBucketCount,
// slot < kMaxSlotsPerBucket.
constexpr uint64_t kMaxRankedBucketCount = uint64_t{1} << 56;
// Ranks after every slot ("no copy found").
constexpr uint64_t kNoWinnerRank = ~uint64_t{0};
static_assert(kMaxLevels <= 15 && kMaxSlotsPerBucket <= 16 &&
                  kMaxBucketCount <= kMaxRankedBucketCount,
              "WinnerRank packs level, bucket and slot into 4 + 56 + 4 bits below kNoWinnerRank");

GPKV_HD constexpr uint64_t WinnerRank(uint32_t level, uint64_t bucket, uint32_t slot) {
  return (uint64_t{level} << 60) | (bucket << 4) | slot;
}
// True if the slot (level_a, bucket_a, slot_a) wins over (level_b, bucket_b,
// slot_b) when both hold the same key VALID.
GPKV_HD constexpr bool SlotOutranks(uint32_t level_a, uint64_t bucket_a, uint32_t slot_a,
                                    uint32_t level_b, uint64_t bucket_b, uint32_t slot_b) {
  return WinnerRank(level_a, bucket_a, slot_a) < WinnerRank(level_b, bucket_b, slot_b);
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

// What reading and writing a table's buckets needs from its root: sizes,
// bucket shape, where values live and the hash seed, fixed at create.
// GeometryOf takes them from a root that has been validated (reader.h).
struct Geometry {
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t slots_per_bucket = 0;
  uint32_t hash_locations = 0;
  uint32_t bucket_bytes = 0;
  uint32_t cell_size = 0;  // 0 when values are inline
  bool value_cells = false;
  uint64_t hash_seed = 0;
};
inline Geometry GeometryOf(const GphashRoot& root) {
  return Geometry{
      root.key_size,     root.value_size, root.slots_per_bucket,          root.hash_locations,
      root.bucket_bytes, root.cell_size,  root.value_mode == kValueCells, root.hash_seed};
}

GPKV_HD uint32_t ActiveLevelSetIndex(uint64_t active_word) {
  return static_cast<uint32_t>(active_word & 1);
}
GPKV_HD uint64_t ActiveLevelSetGeneration(uint64_t active_word) { return active_word >> 1; }
GPKV_HD uint64_t MakeActiveLevelSetWord(uint64_t generation, uint32_t index) {
  return (generation << 1) | (index & 1);
}

// ---- catalog parameter block (format::CatalogEntry::params) ----
// The hash geometry chosen at create; the root holds the same numbers and
// recovery checks that they agree.
//   0  u8 levels           1..4
//   1  u8 hash_locations   1..4
//   2  u8 slots_per_bucket 4, 8 or 16
//   3  u8 log2_batch       logged mode: b = 2^log2_batch; 0 in place
//   4  u16 log_batches     0: in place (every table written before the
//                          logged mode); 1..1024: logged (logged/layout.h)
//   6  u8 reserved[18]     zero
struct CatalogParams {
  uint8_t levels;
  uint8_t hash_locations;
  uint8_t slots_per_bucket;
  uint8_t log2_batch;
  uint16_t log_batches;
  uint8_t reserved[18];
};
static_assert(sizeof(CatalogParams) == 24);
static_assert(offsetof(CatalogParams, log_batches) == 4);
static_assert(std::is_trivially_copyable_v<CatalogParams>);

// Value cell size for a value of value_size bytes (multiple of 8).
GPKV_HD constexpr uint32_t CellSizeFor(uint32_t value_size) { return (value_size + 7) / 8 * 8; }
constexpr uint32_t kMaxCellSize = CellSizeFor(format::kMaxValueSize);

}  // namespace gpkv::gphash
