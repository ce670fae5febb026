// gpu::GphashDeviceView: what a kernel needs to address one GPHash table — the
// levels of the current LevelSet as device pointers, the geometry and the
// hash seed. A small trivially copyable value passed to kernels by value (the
// device-side "ref" of the table), rebuilt by the host whenever the LevelSet
// changes.
//
// Two copies of the index may exist: `index_levels` is where probes read and
// where the CAS on a slot word arbitrates (the HBM mirror in mirror mode, the
// registered pool mapping in direct mode); `pool_levels` is the pool mapping,
// which receives every write. In direct mode the two are the same pointers.
// In staged mode (a pool the GPU cannot map) there is no device pointer to
// the pool: every pool store is appended to `staged_log` instead, and the
// host applies the log to the pool after the kernel (staged.cu).
//
// Candidates of a key are numbered as gphash::CandidateSlotAt numbers them,
// so one bucket's slot words are read by slots_per_bucket adjacent lanes (one
// 64-byte read for 8 slots).
//
// Not to be confused with gphash::GphashView (tables/gphash/reader.h): the
// host's validated copy of a table root.
#pragma once

#include <cstdint>
#include <type_traits>

#include "format/hash.h"
#include "format/hd.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash::gpu {

// One pool store of staged mode: the pool offset of an 8-byte word with the
// store's kind in its low bits (offsets are 8-byte aligned), and the word.
enum StagedStoreKind : uint64_t {
  kStagedData = 0,     // a key or value word (of a reserved slot, or an update)
  kStagedPublish = 1,  // a slot word that publishes VALID
  kStagedEmpty = 2,    // a slot word that goes back to EMPTY
};
constexpr uint64_t kStagedKindMask = 7;
struct StagedStore {
  uint64_t offset_and_kind;
  uint64_t word;
};
// The log of one staged write kernel, in device memory. `count` may pass
// `capacity`: the stores past it were not kept (the host sees it).
struct StagedLog {
  StagedStore* entries;
  unsigned long long capacity;
  unsigned long long count;
};

// The BktCache of direct mode (tables/gphash/gpu/bkt_cache.h): copies of the hottest
// buckets in GPU memory. A bucket's global id is level_base[level] + its
// index in the level. slot_of[id] = cache slot + 1 (0: not cached);
// bucket_of[slot] = the id it holds (kNoCachedBucket: none); refs[slot]
// counts the gets reading the slot, so a reload waits before it reuses it;
// counts[id] are the LFU access counts reloads rank buckets by. While a
// bucket is cached its copy is where probes read and CAS arbitrates, as the
// mirror is in mirror mode, and the pool gets the same ordered stores.
// slot_of is null when the table has no cache.
constexpr uint64_t kNoCachedBucket = ~uint64_t{0};
struct BktCacheView {
  uint32_t* slot_of;
  uint64_t* bucket_of;
  uint32_t* refs;
  uint32_t* counts;
  uint8_t* buckets;  // capacity * bucket_bytes
  uint64_t capacity;
  uint64_t level_base[gphash::kMaxLevels];
  // Bucket reads of gets served by the cache ([0]) and by the pool ([1]).
  unsigned long long* reads;
};

struct GphashDeviceView {
  uint8_t* index_levels[gphash::kMaxLevels];  // probe + arbitration copy of each level
  uint8_t* pool_levels[gphash::kMaxLevels];   // the pool's copy (device pointer)
  uint64_t bucket_counts[gphash::kMaxLevels];
  uint32_t level_count;  // levels of the LevelSet, top (newest) first
  uint32_t hash_locations;
  uint32_t slots_per_bucket;
  uint32_t key_size;
  uint32_t value_size;
  uint32_t bucket_bytes;
  uint64_t hash_seed;
  bool mirrored;  // index_levels is an HBM mirror: writes go to both copies
  // Puts run one operation per thread (thread::ThreadPut) instead of
  // warp-cooperatively: mirror and staged mode, unless
  // GpuTableOptions::warp_puts.
  bool thread_puts;
  // Gets run one per thread over the index in GPU memory (thread::IndexGet):
  // mirror and staged mode, unless GpuTableOptions::tile_index_gets.
  bool index_gets;
  // Staged mode: pool stores go to this log (device memory), addressed by the
  // pool offsets of the levels; pool_levels are null. Null otherwise.
  StagedLog* staged_log;
  uint64_t pool_offsets[gphash::kMaxLevels];
  // Where slot s's key and value word sit in a bucket of the index copy:
  // s * index_key_stride after the slot words, and index_value_base +
  // s * index_value_stride (IndexKeyOffset; SetIndexLayout fills them).
  uint32_t index_key_stride;
  uint32_t index_value_base;
  uint32_t index_value_stride;
  BktCacheView cache;  // direct mode's hot-bucket cache (cache.slot_of null: none)
};
static_assert(std::is_trivially_copyable_v<GphashDeviceView>);

// The HBM mirror's bucket layout. The pool's (gphash::KeyOffset,
// gphash::ValueWordOffset) keeps a bucket's keys together and its value
// words together, so a get that matches a slot reads two sectors after the
// slot words. The mirror is volatile and ours to lay out for reads
// (docs/ARCHITECTURE.md, GPU mapping modes): it keeps each slot's key and value word
// side by side, the key first, in a bucket of the same size. A matched slot's
// key and value then share a sector (8-byte keys: one 16-byte load). The
// slot words stay where the pool keeps them, and the mirror is built from the
// pool and written beside it word by word, so every store computes both
// offsets (PoolStore takes the pool's).
GPKV_HD uint32_t MirrorKeyOffset(uint32_t slots_per_bucket, uint32_t key_size, uint32_t slot) {
  return slots_per_bucket * 8 + slot * (key_size + 8);
}
GPKV_HD uint32_t MirrorValueWordOffset(uint32_t slots_per_bucket, uint32_t key_size,
                                       uint32_t slot) {
  return MirrorKeyOffset(slots_per_bucket, key_size, slot) + key_size;
}

// Where a slot's key and value word sit in a bucket of the index copy
// (index_levels, or a BktCache copy): the mirror's layout when mirrored,
// else the pool's (direct mode reads the pool; the cache copies its buckets).
// Strides in the view rather than a branch per access: the probes unroll
// over a bucket's slots.
inline void SetIndexLayout(GphashDeviceView& view) {
  const uint32_t slots = view.slots_per_bucket;
  const uint32_t key_size = view.key_size;
  view.index_key_stride = view.mirrored ? key_size + 8 : key_size;
  view.index_value_base = view.mirrored ? MirrorValueWordOffset(slots, key_size, 0)
                                        : gphash::ValueWordOffset(slots, key_size, 0);
  view.index_value_stride = view.mirrored ? key_size + 8 : 8;
}
GPKV_HD uint32_t IndexKeyOffset(const GphashDeviceView& view, uint32_t slot) {
  return view.slots_per_bucket * 8 + slot * view.index_key_stride;
}
GPKV_HD uint32_t IndexValueWordOffset(const GphashDeviceView& view, uint32_t slot) {
  return view.index_value_base + slot * view.index_value_stride;
}

// One candidate slot of a key.
struct GphashCandidate {
  uint32_t level;   // index into the view's levels (0 = top)
  uint32_t slot;    // slot in the bucket
  uint64_t bucket;  // bucket index in the level
};

// The candidate slots of a key in levels [0, levels) of the view.
GPKV_HD uint32_t CandidateCount(const GphashDeviceView& view, uint32_t levels) {
  return gphash::CandidateSlotCount(levels, view.hash_locations, view.slots_per_bucket);
}

// Candidate `candidate` of `hash` (gphash::CandidateSlotAt's numbering).
GPKV_HD GphashCandidate CandidateOf(const GphashDeviceView& view, const format::KeyHash& hash,
                                    uint32_t candidate) {
  const gphash::CandidateSlot at =
      gphash::CandidateSlotAt(candidate, view.hash_locations, view.slots_per_bucket);
  GphashCandidate out;
  out.level = at.level;
  out.slot = at.slot;
  out.bucket = gphash::BucketIndex(hash, at.location, view.bucket_counts[at.level]);
  return out;
}

}  // namespace gpkv::gphash::gpu
