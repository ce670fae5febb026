// On-media layout of a persistent ordered table (the LSM family): table root,
// manifests and sorted runs, and how the table uses the shared batch log
// (tables/log/layout.h: its bytes are the log's); and the pure functions over
// them that the CPU backend, the GPU backend and recovery all call. Each rule of
// the format is written here once: the limits, the key order, the entry's
// meta word, the level capacities and the run header.
//
// A table is levels of sorted runs (GPU LSM, Ashkiani et al., IPDPS 2018):
// level i holds at most one run of at most b * 2^i entries (b = 2^log2_batch,
// chosen at create). Lower levels are newer. A run holds each key at most
// once, in ascending key order; an entry is (key, meta, value), where meta =
// sequence number of the batch that wrote it | kTombstoneBit for an erase.
// Every key value is legal: the tombstone flag lives in the meta word.
//
// Write path: a batch is sorted (stable, the last occurrence of a key wins).
// A batch that fits the write buffer (fewer than M * b entries in all, M =
// log_batches, chosen at create) is appended to the log as one record, then
// published by the root's log word: the record is the batch's durability, and
// the buffer's entries reach the levels when it fills (with M > 1 a level
// run is written once per M batches of b, not once per batch). Otherwise
// the buffer and the batch are merged with the occupied levels 0..k-1 into one
// new run for the first free level k that can hold it (merges drop stale
// versions, and tombstones when no older level remains); the run is written
// whole and persisted, then a manifest naming it is written out of place and
// published by the root's active_manifest word, which also empties the log
// (a new log epoch). The replaced runs are freed after that publish; a crash
// before leaves them allocated but unreferenced, and the open-time sweep
// frees them. Every batch is visible by one 8-byte publish, or not at all.
//
// Checkpoint behind the batches (tables created with M >= 2; the root's
// kRootTwoHalfLog flag): the log extent is two halves of the capacity above,
// each published by a log word of its own. When the manifest's half (epoch
// e) cannot take a batch that an empty half could, that batch starts a
// checkpoint: the buffer (the half's records) and the occupied levels merge
// down the cascade into a new run, written (on the GPU: copied to the pool
// while the next batches run), and the batch goes to the other half as the
// first record of epoch e + 1. The checkpoint's manifest (the new levels,
// applied_seq = the last sequence number of the first half, log_epoch e +
// 1, log_half = the other half) is published before the
// CheckpointPublishBatch(M)-th batch of the new half, or before the next
// checkpoint, a synchronous flush, a compaction or the table's close,
// whichever comes first. Recovery replays the manifest's half, then the
// other half when its word's epoch is the manifest's + 1 (records written
// while a checkpoint was in flight; their sequence numbers follow), and a
// writable open completes that checkpoint before the first batch.
//
// Table root (one 4 KiB extent, LsmRoot):
//   0    u64 magic              kLsmRootMagic ("GPKVLSMR")
//   8    u64 table_id
//   16   u32 key_size, 20 u32 value_size
//   24   u32 log2_batch         b = 2^log2_batch entries
//   28   u32 log_batches        M: the write buffer holds < M * b entries;
//                               1..kMaxLogBatches (0 in pools written before
//                               it existed, read as 1)
//   32   u64 log_offset         extent of the write-buffer log
//   40   u64 log_capacity       bytes of that extent (LogCapacity)
//   48   u64 flags              kRootTwoHalfLog, or 0 (a log of one half)
//   56   u64 checksum           Checksum64 of bytes 0..55 (immutable part)
//   64   u64 active_manifest    commit word: (generation << 1) | index
//   72   u64 log_word           commit word of log half 0:
//                               (log epoch << 32) | (log bytes / 8)
//   80   u64 second_log_word    commit word of log half 1 (kRootTwoHalfLog)
//   88   u64 reserved2[5]
//   128  Manifest manifests[2]  written out of place, published by active_manifest
//
// Manifest (712 bytes):
//   0    u64 generation
//   8    u64 applied_seq        every batch with a sequence number <= this is in the runs
//   16   u64 log_epoch          log records of this epoch (< 2^32) follow the runs
//   24   u32 level_count        highest occupied level + 1 (0..kMaxLevels)
//   28   u32 flags              0
//   32   u64 compactions        statistic
//   40   u64 log_half           the log half of log_epoch's records (0 unless
//                               kRootTwoHalfLog)
//   48   u64 reserved
//   56   RunRef levels[kMaxLevels]  {u64 offset; u64 entries}; offset 0 = empty
//   696  u64 reserved2
//   704  u64 checksum           Checksum64 of bytes 0..703
//
// Run (one extent; n entries, K key bytes, V value bytes; arrays, so that a
// search reads keys only and a GPU reads each array coalesced):
//   0              RunHeader (64 bytes)
//   64             u64 keys[n][K/8]   ascending, unique
//   64 + n*K       u64 meta[n]        sequence number | kTombstoneBit
//   64 + n*(K+8)   u8  values[n][V]   then zero padding to a multiple of 8, then to 64
//   F              u64 filter[B]      the run's key filter (RunFilterOffset,
//                                     B = RunFilterWords(n) words)
//   F + 8*B        u64 filter_checksum  the run filter checksum (below)
//                                     then zero padding to the extent's end
//
// Log: the shared batch log's bytes (tables/log/layout.h owns them: record
// header, row and columnar records, checksums, commit words and epochs). The
// root embeds its commit words (log_word for half 0, second_log_word for
// half 1) and names its extent (log_offset, log_capacity; with
// kRootTwoHalfLog two halves of log_capacity / 2 bytes, half 1 after half
// 0). The manifest's half is published when its word's epoch equals the
// manifest's log_epoch (the epoch before: a flush had not yet reset the
// word, the half is empty); the other half's records are replayed when its
// word's epoch is log_epoch + 1, else it is empty. What the LSM puts in a
// record: a sorted batch, keys ascending and unique, seq = the batch's
// sequence number (> applied_seq, ascending); in a row record each entry's
// meta word has that sequence number; in a columnar record every entry's
// meta is MakeMeta(seq, flags & log::kRecordTombstones): a batch is all puts
// or all erases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "format/checksum.h"
#include "format/hd.h"
#include "format/pool_layout.h"
#include "tables/log/layout.h"

namespace gpkv::lsm {

// "GPKVLSMR", "GPKVLRUN" as little-endian words.
constexpr uint64_t kLsmRootMagic = 0x524d534c564b5047ULL;
constexpr uint64_t kRunMagic = 0x4e55524c564b5047ULL;
constexpr uint64_t kLsmRootSize = 4096;

// Limits.
constexpr uint32_t kMinLog2Batch = 4;
constexpr uint32_t kMaxLog2Batch = 24;
constexpr uint32_t kMaxLevels = 40;
constexpr uint64_t kRunHeaderSize = 64;
constexpr uint32_t kMaxLogBatches = 1024;

// Root flags.
constexpr uint64_t kRootTwoHalfLog = 1;

// Meta word of an entry: bit 63 marks a tombstone (an erase), bits 62..0 hold
// the sequence number of the batch that wrote it (1, 2, ...).
constexpr uint64_t kTombstoneBit = uint64_t{1} << 63;
constexpr uint64_t kSeqMask = kTombstoneBit - 1;
GPKV_HD constexpr uint64_t MakeMeta(uint64_t seq, bool tombstone) {
  return (seq & kSeqMask) | (tombstone ? kTombstoneBit : 0);
}
static_assert(kSeqMask == log::kMaxSeq, "a log record's sequence number is a meta word's");
GPKV_HD constexpr bool IsTombstone(uint64_t meta) { return (meta & kTombstoneBit) != 0; }
GPKV_HD constexpr uint64_t SeqOf(uint64_t meta) { return meta & kSeqMask; }

// Key order: unsigned little-endian integers of key_words 8-byte words, the
// last word the most significant. -1, 0, 1.
GPKV_HD int CompareKeys(const uint64_t* a, const uint64_t* b, uint32_t key_words) {
  for (uint32_t i = key_words; i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

// Capacity of level i in entries: b * 2^i.
GPKV_HD constexpr uint64_t LevelCapacity(uint32_t log2_batch, uint32_t level) {
  return uint64_t{1} << (log2_batch + level);
}

using log::AlignUp8;

// Bytes of a run of `entries` entries, header included.
GPKV_HD constexpr uint64_t RunBytes(uint64_t entries, uint32_t key_size, uint32_t value_size) {
  return kRunHeaderSize + entries * (key_size + 8) + AlignUp8(entries * value_size);
}
// Offsets of a run's arrays from the start of the run.
GPKV_HD constexpr uint64_t RunKeysOffset() { return kRunHeaderSize; }
GPKV_HD constexpr uint64_t RunMetaOffset(uint64_t entries, uint32_t key_size) {
  return kRunHeaderSize + entries * key_size;
}
GPKV_HD constexpr uint64_t RunValuesOffset(uint64_t entries, uint32_t key_size) {
  return kRunHeaderSize + entries * (key_size + 8);
}

// The write buffer flushes before its logged entries reach M * b.
GPKV_HD constexpr uint64_t BufferEntries(uint32_t log2_batch, uint32_t log_batches) {
  return uint64_t{log_batches == 0 ? 1u : log_batches} << log2_batch;
}
// The flush rule both backends follow: a batch of `count` entries whose
// record takes record_bytes is appended to the log when the logged entries
// stay below M * b (buffer_entries) and the record fits the log's capacity;
// otherwise the buffer and the batch are merged into the levels. Logged
// entries count a key once per record (not as the buffer merges them).
GPKV_HD constexpr bool GoesToLog(uint64_t logged_entries, uint64_t logged_bytes, uint64_t count,
                                 uint64_t record_bytes, uint64_t buffer_entries,
                                 uint64_t log_capacity) {
  return logged_entries + count < buffer_entries &&
         log::RecordFits(logged_bytes, record_bytes, log_capacity);
}
// What a write batch does (both backends, so that they write the same
// bytes): publish a pending checkpoint first when the batch would be the
// CheckpointPublishBatch-th of its half (publish_batch) or does not go to
// the log; then append to the log (GoesToLog on the half batches go to),
// start a checkpoint (a two-half log whose empty half would take the
// batch: the batch opens it), or flush the buffer and the batch into the
// levels.
enum class WriteStep { kAppend, kCheckpoint, kFlush };
struct WritePlan {
  bool publish_first;
  WriteStep step;
};
GPKV_HD constexpr WritePlan PlanWrite(bool pending, uint64_t pending_batches,
                                      uint64_t publish_batch, uint32_t log_halves,
                                      uint64_t logged_entries, uint64_t logged_bytes,
                                      uint64_t count, uint64_t record_bytes,
                                      uint64_t buffer_entries, uint64_t half_capacity) {
  const WriteStep step =
      GoesToLog(logged_entries, logged_bytes, count, record_bytes, buffer_entries, half_capacity)
          ? WriteStep::kAppend
      : log_halves == 2 && GoesToLog(0, 0, count, record_bytes, buffer_entries, half_capacity)
          ? WriteStep::kCheckpoint
          : WriteStep::kFlush;
  return {pending && (pending_batches + 1 >= publish_batch || step != WriteStep::kAppend), step};
}

// Capacity of a log half: M * b entries in row records of any size (a
// buffer of M * b - 1 entries flushes before it grows past M * b), plus 64
// KiB of record headers; a full half flushes the buffer early.
inline uint64_t LogCapacity(uint32_t log2_batch, uint32_t key_size, uint32_t value_size,
                            uint32_t log_batches) {
  return format::AlignUp(
      BufferEntries(log2_batch, log_batches) * log::RowEntryBytes(key_size, value_size) +
          (uint64_t{64} << 10),
      format::kExtentAlignment);
}
// Root flags of a table created with M log batches: a checkpoint behind the
// batches (two log halves) from M = 2 on.
constexpr uint64_t RootFlagsFor(uint32_t log_batches) {
  return log_batches >= 2 ? kRootTwoHalfLog : 0;
}
constexpr uint32_t LogHalves(uint64_t root_flags) {
  return (root_flags & kRootTwoHalfLog) != 0 ? 2 : 1;
}
// Bytes of the log extent: its halves.
inline uint64_t LogExtentBytes(uint32_t log2_batch, uint32_t key_size, uint32_t value_size,
                               uint32_t log_batches, uint64_t root_flags) {
  return LogHalves(root_flags) * LogCapacity(log2_batch, key_size, value_size, log_batches);
}
// The checkpoint started by the first batch of a log half is published
// before the batch that would be this one of that half (counting the
// first): late enough that the GPU's copy of the checkpoint's run to the
// pool runs behind the batches between (M = 64, b = 2^20: 47 batches, ~50
// ms, for a copy of ~30 ms), early enough that its replaced runs and the
// other half are free again before the half fills (M - 1 batches of b).
constexpr uint64_t CheckpointPublishBatch(uint32_t log_batches) {
  return log_batches < 2 ? 1 : log_batches - log_batches / 4;
}

// The active_manifest word: tables/log/slots.h (log::MakeActiveWord,
// ActiveIndex, ActiveGeneration).
// Checksum of a run's data (RunHeader::data_checksum): the log's
// position-keyed checksum (tables/log/layout.h: log::ChecksumTerm,
// log::ChecksumFinish) of the run's bytes 64 .. RunBytes(n) (keys, meta,
// values with their zero padding), seed = table_id. Summed in parallel by
// CPU threads or GPU threads, in any order.
// Data words of a run of n entries: keys, meta, values padded to 8 bytes.
GPKV_HD constexpr uint64_t RunDataWords(uint64_t entries, uint32_t key_size, uint32_t value_size) {
  return (RunBytes(entries, key_size, value_size) - kRunHeaderSize) / 8;
}

// The run's key filter: a register-blocked Bloom filter (Putze et al.) of
// kFilterBitsPerKey bits per entry, so that a get skips, with probability
// ~98%, a run that does not hold its key. Its blocks are single u64 words:
// a key sets kFilterBitsSet bits of the one word its hash names
// (FilterWordOf, FilterMaskOf), so adding a key or testing one touches one
// word (one cache line) and costs a hash and a few shifts: a filter is
// built for every run a flush or a compaction writes, within their budget.
// Every key of the run is in it, tombstones included; no other bits are
// set. The bits do not depend on the order keys are added (an OR), so
// threads of a CPU or a GPU may add them in any order. Except: a run
// written as the table's oldest (no level above its own occupied; it stays
// the oldest until a merge replaces it) has every bit of its filter set,
// since a get does not read the oldest run's filter (a key it holds would
// pay the filter's cache line for nothing): no hashing for the largest
// runs a cascade writes.
constexpr uint64_t kFilterBitsPerKey = 10;
constexpr uint32_t kFilterBitsSet = 5;
// Words of the filter of a run of n entries: ceil(n * 10 / 64) rounded up
// to a multiple of 8 (whole cache lines), at least 8, at most 2^32.
GPKV_HD constexpr uint64_t RunFilterWords(uint64_t entries) {
  const uint64_t words = ((entries * kFilterBitsPerKey + 63) / 64 + 7) / 8 * 8;
  return words == 0 ? 8 : words > (uint64_t{1} << 32) ? uint64_t{1} << 32 : words;
}
// Where the filter starts: the data (RunBytes) rounded up to 64 bytes.
GPKV_HD constexpr uint64_t RunFilterOffset(uint64_t entries, uint32_t key_size,
                                           uint32_t value_size) {
  return (RunBytes(entries, key_size, value_size) + 63) / 64 * 64;
}
// Bytes of a run's extent that hold something: data, filter and its checksum.
GPKV_HD constexpr uint64_t RunExtentBytes(uint64_t entries, uint32_t key_size,
                                          uint32_t value_size) {
  return RunFilterOffset(entries, key_size, value_size) + RunFilterWords(entries) * 8 + 8;
}
// The key's 64-bit filter hash: each 8-byte word, lowest first, folded in
// by h = Mix(h ^ word) from h = kFilterHashSeed; Mix is SplitMix64's
// finalizer.
//
// FilterMix, FilterHash, FilterWordOf and FilterMaskOf are written once for
// every way of computing them: over one key (Word = uint64_t, host and
// device), or over several keys in vector lanes (Word = a GCC vector of
// uint64_t, host only: tables/lsm/run.cc), where key[i] of FilterHash holds
// word i of each lane's key and every operation applies lane by lane.
constexpr uint64_t kFilterHashSeed = 0x9e3779b97f4a7c15ULL;
template <typename Word>
GPKV_HD constexpr Word FilterMix(Word h) {
  static_assert(sizeof(Word) % sizeof(uint64_t) == 0, "the filter hashes 64-bit words");
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}
template <typename Word>
GPKV_HD constexpr Word FilterHash(const Word* key, uint32_t key_words) {
  Word h = Word{} + kFilterHashSeed;  // in every lane
  for (uint32_t i = 0; i < key_words; ++i) h = FilterMix(h ^ key[i]);
  return h;
}
// The word of a hash: its high 32 bits scaled to the word count.
template <typename Word>
GPKV_HD constexpr Word FilterWordOf(Word hash, uint64_t words) {
  static_assert(sizeof(Word) % sizeof(uint64_t) == 0, "the filter hashes 64-bit words");
  return ((hash >> 32) * words) >> 32;
}
// The bits a hash sets in its word: bit (hash >> 6 * i) mod 64 for i = 0..4
// (the low 30 bits of the hash, 6 at a time).
// Written out term by term: a loop over i is not unrolled for vector lanes
// at -O2.
template <typename Word>
GPKV_HD constexpr Word FilterMaskOf(Word hash) {
  static_assert(sizeof(Word) % sizeof(uint64_t) == 0, "the filter hashes 64-bit words");
  static_assert(kFilterBitsSet == 5, "a term for each bit a key sets");
  const Word one = Word{} + 1;  // in every lane
  return (one << (hash & 63)) | (one << ((hash >> 6) & 63)) | (one << ((hash >> 12) & 63)) |
         (one << ((hash >> 18) & 63)) | (one << ((hash >> 24) & 63));
}
// Whether the filter of `words` words may hold the key of `hash` (false:
// the run does not hold it).
GPKV_HD bool FilterMayContain(const uint64_t* filter, uint64_t words, uint64_t hash) {
  const uint64_t mask = FilterMaskOf(hash);
  return (filter[FilterWordOf(hash, words)] & mask) == mask;
}
// Checksum of a run's filter (the u64 after it): the log's position-keyed
// checksum (log::ChecksumTerm, log::ChecksumFinish) of its words, seed =
// table_id.

// RunHeader, the first 64 bytes of a run.
//   0  u64 magic            kRunMagic
//   8  u64 table_id
//   16 u64 entries          n, >= 1
//   24 u32 key_size, 28 u32 value_size
//   32 u64 max_seq          largest sequence number in the run
//   40 u64 tombstones       entries with kTombstoneBit
//   48 u64 data_checksum    the run data checksum (above), seed = table_id, of
//                           bytes 64 .. RunBytes(n) (keys, meta, padded values)
//   56 u64 checksum         Checksum64 of bytes 0..55
struct RunHeader {
  uint64_t magic;
  uint64_t table_id;
  uint64_t entries;
  uint32_t key_size;
  uint32_t value_size;
  uint64_t max_seq;
  uint64_t tombstones;
  uint64_t data_checksum;
  uint64_t checksum;
};
static_assert(sizeof(RunHeader) == kRunHeaderSize);
static_assert(offsetof(RunHeader, checksum) == 56);
static_assert(std::is_trivially_copyable_v<RunHeader>);

struct RunRef {
  uint64_t offset;   // the run's extent; 0 = the level is empty
  uint64_t entries;  // the run header's entries, repeated
};
static_assert(sizeof(RunRef) == 16);

struct Manifest {
  uint64_t generation;
  uint64_t applied_seq;
  uint64_t log_epoch;
  uint32_t level_count;
  uint32_t flags;
  uint64_t compactions;
  uint64_t log_half;
  uint64_t reserved;
  RunRef levels[kMaxLevels];
  uint64_t reserved2;
  uint64_t checksum;
};
static_assert(sizeof(Manifest) == 712);
static_assert(offsetof(Manifest, log_half) == 40);
static_assert(offsetof(Manifest, levels) == 56);
static_assert(offsetof(Manifest, checksum) == 704);
static_assert(std::is_trivially_copyable_v<Manifest>);

// The cascade of a flush or checkpoint that brings `incoming` entries (the
// batch and the buffer, counted as logged) into the levels of `manifest`:
// they merge with each occupied level from 0 up into the first free level
// that can hold the sum (counted before merges drop stale entries, so the
// result always fits). Both backends follow it.
struct CascadePlan {
  uint32_t target = 0;        // kMaxLevels: the levels cannot grow
  uint32_t merged_count = 0;  // the occupied levels below target, merged[0..merged_count)
  uint32_t merged[kMaxLevels] = {};
  bool older_levels = false;  // a level above target is occupied (tombstones stay)
};
// level_count of a manifest: its highest occupied level + 1.
inline void SetLevelCount(Manifest* manifest) {
  manifest->level_count = 0;
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    if (manifest->levels[level].offset != 0) manifest->level_count = level + 1;
  }
}
// The manifest that a flush or compaction publishes after `current`: its
// log half emptied, so the next epoch in the same half.
inline void EmptyLogHalf(const Manifest& current, Manifest* next) {
  next->log_epoch = log::NextEpoch(current.log_epoch);
  next->log_half = current.log_half;
}
// The manifest of a checkpoint started after batch `applied_seq` (its levels
// then set by the cascade): the next epoch, in the other log half.
inline Manifest CheckpointManifest(const Manifest& current, uint64_t applied_seq) {
  Manifest next = current;
  next.applied_seq = applied_seq;
  next.log_epoch = log::NextEpoch(current.log_epoch);
  next.log_half = 1 - current.log_half;
  return next;
}
inline CascadePlan PlanCascade(const Manifest& manifest, uint32_t log2_batch, uint64_t incoming) {
  CascadePlan plan;
  uint64_t upper = incoming;
  for (;; ++plan.target) {
    if (plan.target >= kMaxLevels) return plan;
    const RunRef& ref = manifest.levels[plan.target];
    if (ref.offset != 0) {
      upper += ref.entries;
      plan.merged[plan.merged_count++] = plan.target;
      continue;
    }
    if (upper <= LevelCapacity(log2_batch, plan.target)) break;
  }
  for (uint32_t level = plan.target + 1; level < kMaxLevels; ++level) {
    plan.older_levels |= manifest.levels[level].offset != 0;
  }
  return plan;
}

struct LsmRoot {
  uint64_t magic;
  uint64_t table_id;
  uint32_t key_size;
  uint32_t value_size;
  uint32_t log2_batch;
  uint32_t log_batches;
  uint64_t log_offset;
  uint64_t log_capacity;
  uint64_t flags;
  uint64_t checksum;
  uint64_t active_manifest;
  uint64_t log_word;
  uint64_t second_log_word;
  uint64_t reserved2[5];
  Manifest manifests[2];
};
static_assert(offsetof(LsmRoot, checksum) == 56);
static_assert(offsetof(LsmRoot, active_manifest) == 64);
static_assert(offsetof(LsmRoot, log_word) == 72);
static_assert(offsetof(LsmRoot, second_log_word) == 80);
static_assert(offsetof(LsmRoot, manifests) == 128);
static_assert(sizeof(LsmRoot) <= kLsmRootSize);
static_assert(std::is_trivially_copyable_v<LsmRoot>);

// The family's block of a catalog entry (24 bytes).
//   0  u8 log2_batch        b = 2^log2_batch
//   1  u8 max_dead_percent  1..100
//   2  u16 log_batches      M, as the root's (0 in catalogs written before: 1)
//   4  u8 reserved[20]      zero
struct CatalogParams {
  uint8_t log2_batch;
  uint8_t max_dead_percent;
  uint16_t log_batches;
  uint8_t reserved[20];
};
static_assert(sizeof(CatalogParams) == format::kCatalogParamsSize);
static_assert(std::is_trivially_copyable_v<CatalogParams>);

}  // namespace gpkv::lsm
