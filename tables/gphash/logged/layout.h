// On-media layout of a persistent hash table in logged mode, and the pure
// functions over it that the core, verify and repair call. Each rule of the
// mode's format is written here once: the limits, the log's size, the key
// order of an image, the image's bytes and seeds, when a checkpoint in
// flight is published.
//
// A logged table keeps its index in memory. The pool holds an image of the
// index (its live pairs, sorted) and the batch log (tables/log/layout.h owns
// its bytes) of the write batches after the image. The log has two halves of
// equal size, each with a commit word in the root. A write batch is a record
// of the active half (a mixed batch two records published by one store; a
// group of concurrent batches, their records back to back, one store).
//
// Checkpoint behind the batches: when the active half (epoch e) cannot take
// a batch, the index's pairs are taken as they stand (the scan), the image's
// extent is reserved, the other half's word is reset to epoch e + 1 with 0
// bytes and the batch goes there; the image is sorted, written and persisted
// on a worker thread while the next batches go into that half. The
// checkpoint (the image, applied_seq = the last sequence number of half e,
// log_epoch e + 1, log_half = the other half) is published by one store of
// the root's active_checkpoint word at the first batch of the new half from
// PublishBatch(M) on that finds the image written, when the new half cannot
// take a batch (waiting for the image), or at the table's close. Recovery
// replays the checkpoint's half, then the other half when its word's epoch
// is the checkpoint's + 1 (records written while a checkpoint was in
// flight); a writable open completes that checkpoint before the first batch.
//
// Table root (one 4 KiB extent, LoggedRoot):
//   0    u64 magic              kLoggedRootMagic ("GPKVHLG2"; "GPKVHLGR" was
//                               the one-half log, refused: kOneHalfRootMagic)
//   8    u64 table_id
//   16   u32 key_size, 20 u32 value_size
//   24   u32 log2_batch         b = 2^log2_batch entries
//   28   u32 log_batches        M, 1..kMaxLogBatches
//   32   u64 log_offset         extent of the log: two halves, half 1 after half 0
//   40   u64 log_capacity       bytes of one half (LogCapacity)
//   48   u64 expected_keys      the index's first size
//   56   u64 checksum           Checksum64 of bytes 0..55 (immutable part)
//   64   u64 active_checkpoint  commit word: (generation << 1) | index
//   72   u64 log_word           commit word of log half 0
//   80   u64 second_log_word    commit word of log half 1
//   88   u64 reserved[5]
//   128  Checkpoint checkpoints[2]  written out of place
//
// Checkpoint (64 bytes):
//   0    u64 generation
//   8    u64 image_offset       0: no image (an empty table)
//   16   u64 image_entries
//   24   u64 applied_seq        every batch of sequence number <= this is in the image
//   32   u64 log_epoch          the log's records of this epoch follow the image
//   40   u64 log_half           the half of log_epoch's records (0 or 1)
//   48   u64 reserved
//   56   u64 checksum           Checksum64 of bytes 0..55
//
// Image (one extent; n pairs of K key bytes and V value bytes):
//   0    ImageHeader (64 bytes: magic "GPKVHIMG", table_id, entries,
//        key_size, value_size, generation, data_checksum, reserved, checksum)
//   64          u64 keys[n][K/8]   ascending in key order, unique
//   64 + n*K    u8 values[n][V]    then zero padding to a multiple of 8
//   data_checksum: the log's position-keyed checksum of the data words,
//   seed ImageSeed(table_id, generation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "format/checksum.h"
#include "format/hd.h"
#include "format/pool_layout.h"
#include "tables/log/layout.h"

namespace gpkv::gphash::logged {

// "GPKVHLG2", "GPKVHIMG" as little-endian words; "GPKVHLGR", the root of
// a logged table whose log had one half (a development format never
// released), is recognised only to refuse it by name.
constexpr uint64_t kLoggedRootMagic = 0x32474c48564b5047ULL;
constexpr uint64_t kOneHalfRootMagic = 0x52474c48564b5047ULL;
constexpr uint64_t kImageMagic = 0x474d4948564b5047ULL;
constexpr uint64_t kLoggedRootSize = 4096;
constexpr uint64_t kImageHeaderSize = 64;

// Limits.
constexpr uint32_t kMinLog2Batch = 4;
constexpr uint32_t kMaxLog2Batch = 24;
constexpr uint32_t kMaxLogBatches = 1024;

struct Checkpoint {
  uint64_t generation;
  uint64_t image_offset;
  uint64_t image_entries;
  uint64_t applied_seq;
  uint64_t log_epoch;
  uint64_t log_half;
  uint64_t reserved;
  uint64_t checksum;
};
static_assert(sizeof(Checkpoint) == 64);
static_assert(offsetof(Checkpoint, log_half) == 40);
static_assert(offsetof(Checkpoint, checksum) == 56);
static_assert(std::is_trivially_copyable_v<Checkpoint>);

struct LoggedRoot {
  uint64_t magic;
  uint64_t table_id;
  uint32_t key_size;
  uint32_t value_size;
  uint32_t log2_batch;
  uint32_t log_batches;
  uint64_t log_offset;
  uint64_t log_capacity;
  uint64_t expected_keys;
  uint64_t checksum;
  uint64_t active_checkpoint;
  uint64_t log_word;
  uint64_t second_log_word;
  uint64_t reserved[5];
  Checkpoint checkpoints[2];
};
static_assert(offsetof(LoggedRoot, checksum) == 56);
static_assert(offsetof(LoggedRoot, active_checkpoint) == 64);
static_assert(offsetof(LoggedRoot, log_word) == 72);
static_assert(offsetof(LoggedRoot, second_log_word) == 80);
static_assert(offsetof(LoggedRoot, checkpoints) == 128);
static_assert(sizeof(LoggedRoot) <= kLoggedRootSize);
static_assert(std::is_trivially_copyable_v<LoggedRoot>);

struct ImageHeader {
  uint64_t magic;
  uint64_t table_id;
  uint64_t entries;
  uint32_t key_size;
  uint32_t value_size;
  uint64_t generation;
  uint64_t data_checksum;
  uint64_t reserved;
  uint64_t checksum;
};
static_assert(sizeof(ImageHeader) == kImageHeaderSize);
static_assert(offsetof(ImageHeader, checksum) == 56);
static_assert(std::is_trivially_copyable_v<ImageHeader>);

// The active_checkpoint word: tables/log/slots.h (log::MakeActiveWord,
// ActiveIndex, ActiveGeneration).

// Bytes of a log half: M records of b puts, each with its header, rounded up
// to the extent alignment. The log's extent holds two.
inline uint64_t LogCapacity(uint32_t log2_batch, uint32_t key_size, uint32_t value_size,
                            uint32_t log_batches) {
  return format::AlignUp(
      log_batches * log::ColumnarRecordBytes(uint64_t{1} << log2_batch, key_size, value_size,
                                             /*tombstones=*/false),
      format::kExtentAlignment);
}

constexpr uint32_t kLogHalves = 2;
inline uint64_t LogExtentBytes(uint64_t half_capacity) { return kLogHalves * half_capacity; }

// A checkpoint started by the first batch of a log half is published at a
// batch of that half from this one on (counting the first) that finds its
// image written: late enough that the image is usually written by then
// (the batches between run beside the worker), early enough that the other
// half is free again before this one fills. The batch that finds the half
// full publishes it in any case, waiting for the image.
constexpr uint64_t PublishBatch(uint32_t log_batches) {
  return log_batches < 2 ? 2 : log_batches - log_batches / 4;
}

// Bytes of an image of `entries` pairs, and where its arrays start.
GPKV_HD constexpr uint64_t ImageBytes(uint64_t entries, uint32_t key_size, uint32_t value_size) {
  return kImageHeaderSize + entries * key_size + log::AlignUp8(entries * value_size);
}
GPKV_HD constexpr uint64_t ImageValuesOffset(uint64_t entries, uint32_t key_size) {
  return kImageHeaderSize + entries * key_size;
}
// Data words of an image (its arrays, padding included).
GPKV_HD constexpr uint64_t ImageDataWords(uint64_t entries, uint32_t key_size,
                                          uint32_t value_size) {
  return (ImageBytes(entries, key_size, value_size) - kImageHeaderSize) / 8;
}

// Seed of an image's data checksum: Checksum64 of {table_id, generation}.
GPKV_HD uint64_t ImageSeed(uint64_t table_id, uint64_t generation) {
  const uint64_t fields[2] = {table_id, generation};
  return format::Checksum64(fields, sizeof(fields));
}

// Key order of an image: unsigned little-endian integers of key_words 8-byte
// words, the last word the most significant (the ordered tables' order). -1,
// 0, 1.
GPKV_HD int CompareKeys(const uint64_t* a, const uint64_t* b, uint32_t key_words) {
  for (uint32_t i = key_words; i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

}  // namespace gpkv::gphash::logged
