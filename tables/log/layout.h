// On-media layout of the durable batch log that persistent table families
// share, and the pure functions over it that the CPU backend, the GPU
// backend and recovery all call: the record header, the two record
// encodings, their checksums, the commit words that publish a log half and
// their epochs. Each rule of the log's format is written here once.
//
// A log is one extent of one or two halves of equal size. Records lie back to
// back from the start of a half. Each half is published by a commit word
// (MakeWord below) that the owning family keeps in its root: the log is
// given the words' pool offsets. The first WordBytes(word) bytes of a half
// are published records of the word's epoch; nothing past them is read. The
// family decides which epochs it expects of each half (its manifest names
// them), what a record means, and when a half is emptied (a new epoch).
//
// Commit word of a log half (one u64, published by one 8-byte store):
//   bits 63..32  epoch            (< 2^32; the epoch after 2^32 - 1 is 0)
//   bits 31..0   bytes / 8        published bytes of the half
//
// Record (at an 8-byte aligned offset of a half):
//   0    u64 seq                the record's sequence number (ascending in a log)
//   8    u32 count              entries, >= 1
//   12   u32 flags              0, kRecordColumnar or kRecordColumnar | kRecordTombstones
//   16   u64 checksum
//   24   the entries (K key bytes, V value bytes; K a multiple of 8):
//   flags 0 (row records, still read; no longer written):
//        count entries of {u64 key[K/8]; u64 meta; u8 value[AlignUp8(V)]},
//        checksum WordsChecksum (below) of them, seed RecordSeed
//   flags kRecordColumnar [| kRecordTombstones] (written today):
//        u64 keys[count][K/8], then, unless kRecordTombstones, u8
//        values[count][V] and zero padding to a multiple of 8. Checksum: the
//        position-keyed checksum (below) of those words, seed RecordSeed.
//        Arrays, so that a GPU writes a batch's keys and values to the pool
//        as two copies and sums its checksum in parallel, and 8/8-byte pairs
//        cost 16 bytes.
//
// The seed of a record's checksum binds it to the epoch of the half it was
// written in: a record left over from an earlier epoch fails its checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "format/checksum.h"
#include "format/hd.h"

namespace gpkv::log {

constexpr uint64_t kRecordHeaderSize = 24;
// A half's published bytes: the commit word holds bytes / 8 in 32 bits.
constexpr uint64_t kMaxHalfBytes = uint64_t{8} << 32;
// A log has one or two halves.
constexpr uint32_t kMaxHalves = 2;
// A record's sequence number is 1 .. kMaxSeq, ascending along a log (a
// family may use bit 63 of its own words that repeat it).
constexpr uint64_t kMaxSeq = (uint64_t{1} << 63) - 1;

// Record flags.
constexpr uint32_t kRecordColumnar = 1;
constexpr uint32_t kRecordTombstones = 2;

struct RecordHeader {
  uint64_t seq;
  uint32_t count;
  uint32_t flags;
  uint64_t checksum;
};
static_assert(sizeof(RecordHeader) == kRecordHeaderSize);
static_assert(std::is_trivially_copyable_v<RecordHeader>);

GPKV_HD constexpr uint64_t AlignUp8(uint64_t value) { return (value + 7) / 8 * 8; }

// Whether `flags` is one of the record forms above.
GPKV_HD constexpr bool IsRowRecord(uint32_t flags) { return flags == 0; }
GPKV_HD constexpr bool IsKnownRecordFlags(uint32_t flags) {
  return flags == 0 || flags == kRecordColumnar || flags == (kRecordColumnar | kRecordTombstones);
}
GPKV_HD constexpr bool HasTombstones(uint32_t flags) { return (flags & kRecordTombstones) != 0; }

// Bytes of one entry of a row record, and of a row record (flags 0).
GPKV_HD constexpr uint64_t RowEntryBytes(uint32_t key_size, uint32_t value_size) {
  return key_size + 8 + AlignUp8(value_size);
}
GPKV_HD constexpr uint64_t RowRecordBytes(uint64_t count, uint32_t key_size, uint32_t value_size) {
  return kRecordHeaderSize + count * RowEntryBytes(key_size, value_size);
}
// Data words of a columnar record (its entries; the header excluded), and
// the bytes of the whole record. At most RowRecordBytes of the same count.
GPKV_HD constexpr uint64_t ColumnarRecordWords(uint64_t count, uint32_t key_size,
                                               uint32_t value_size, bool tombstones) {
  return (count * key_size + (tombstones ? 0 : AlignUp8(count * value_size))) / 8;
}
GPKV_HD constexpr uint64_t ColumnarRecordBytes(uint64_t count, uint32_t key_size,
                                               uint32_t value_size, bool tombstones) {
  return kRecordHeaderSize + ColumnarRecordWords(count, key_size, value_size, tombstones) * 8;
}
// Bytes of the record `header` describes. REQUIRES: IsKnownRecordFlags.
GPKV_HD constexpr uint64_t RecordBytes(const RecordHeader& header, uint32_t key_size,
                                       uint32_t value_size) {
  return IsRowRecord(header.flags)
             ? RowRecordBytes(header.count, key_size, value_size)
             : ColumnarRecordBytes(header.count, key_size, value_size, HasTombstones(header.flags));
}
// Whether a record of record_bytes fits a half of half_capacity bytes that
// holds used_bytes of records.
GPKV_HD constexpr bool RecordFits(uint64_t used_bytes, uint64_t record_bytes,
                                  uint64_t half_capacity) {
  return used_bytes + record_bytes <= half_capacity;
}
// Where half `half` of a log extent at log_offset starts.
GPKV_HD constexpr uint64_t HalfOffset(uint64_t log_offset, uint64_t half_capacity, uint32_t half) {
  return log_offset + half * half_capacity;
}

// The commit words.
constexpr uint64_t kEpochMask = 0xffffffffULL;
GPKV_HD constexpr uint64_t MakeWord(uint64_t epoch, uint64_t bytes) {
  return ((epoch & kEpochMask) << 32) | (bytes / 8);
}
GPKV_HD constexpr uint64_t WordEpoch(uint64_t word) { return word >> 32; }
GPKV_HD constexpr uint64_t WordBytes(uint64_t word) { return (word & kEpochMask) * 8; }
// The epoch after `epoch` (a half emptied, or the other half opened), and
// the one before.
GPKV_HD constexpr uint64_t NextEpoch(uint64_t epoch) { return (epoch + 1) & kEpochMask; }
GPKV_HD constexpr uint64_t PreviousEpoch(uint64_t epoch) {
  return (epoch + kEpochMask) & kEpochMask;
}

// Checksum of row records (WordsChecksum): four lanes over 8-byte words (a
// word-wise variant of XXH64's rounds). With P1 = 0x9e3779b185ebca87, P2 =
// 0xc2b2ae3d27d4eb4f:
//   lane[j] = seed + {P1 + P2, P2, 0, -P1}[j]
//   word i: lane[i % 4] = rotl(lane[i % 4] + word * P2, 31) * P1
//   h = rotl(lane0, 1) + rotl(lane1, 7) + rotl(lane2, 12) + rotl(lane3, 18) + words * 8
//   h ^= h >> 33; h *= P2; h ^= h >> 29; h *= 0x165667b19e3779f9; h ^= h >> 32
GPKV_HD uint64_t RotateLeft(uint64_t value, uint32_t bits) {
  return (value << bits) | (value >> (64 - bits));
}
constexpr uint64_t kChecksumP1 = 0x9e3779b185ebca87ULL;
constexpr uint64_t kChecksumP2 = 0xc2b2ae3d27d4eb4fULL;
struct WordsChecksumState {
  uint64_t lane[4];
  uint64_t words;
};
GPKV_HD WordsChecksumState WordsChecksumBegin(uint64_t seed) {
  return {{seed + kChecksumP1 + kChecksumP2, seed + kChecksumP2, seed, seed - kChecksumP1}, 0};
}
// Adds `count` words; the state continues across calls (the lane of a word
// is its index in the whole sequence).
GPKV_HD void WordsChecksumAdd(WordsChecksumState& state, const uint64_t* words, uint64_t count) {
  uint64_t i = 0;
  while (i < count && (state.words & 3) != 0) {
    uint64_t& lane = state.lane[state.words & 3];
    lane = RotateLeft(lane + words[i++] * kChecksumP2, 31) * kChecksumP1;
    ++state.words;
  }
  for (; i + 4 <= count; i += 4) {
    for (uint32_t j = 0; j < 4; ++j) {
      state.lane[j] = RotateLeft(state.lane[j] + words[i + j] * kChecksumP2, 31) * kChecksumP1;
    }
    state.words += 4;
  }
  for (; i < count; ++i) {
    uint64_t& lane = state.lane[state.words & 3];
    lane = RotateLeft(lane + words[i] * kChecksumP2, 31) * kChecksumP1;
    ++state.words;
  }
}
GPKV_HD uint64_t WordsChecksumEnd(const WordsChecksumState& state) {
  uint64_t h = RotateLeft(state.lane[0], 1) + RotateLeft(state.lane[1], 7) +
               RotateLeft(state.lane[2], 12) + RotateLeft(state.lane[3], 18) + state.words * 8;
  h ^= h >> 33;
  h *= kChecksumP2;
  h ^= h >> 29;
  h *= 0x165667b19e3779f9ULL;
  h ^= h >> 32;
  return h;
}

// The position-keyed checksum of columnar records (and of the ordered
// table's runs): a sum, so that any number of CPU or GPU threads compute it
// in parallel (a reduction) and in any order. Of the words w_0 .. w_{m-1}
// with `seed` and P1 as above:
//   checksum = Fmix64(seed ^ m) + sum_i Fmix64(w_i ^ (seed + i * P1))   (mod 2^64)
// Fmix64 is MurmurHash3's 64-bit finaliser, a bijection: a changed word
// changes exactly its own term, and a word moved to another position
// changes the two terms whose position keys it meets; the length enters
// through the first term.
GPKV_HD constexpr uint64_t Fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}
// The term of word `index` (its position among the summed words).
GPKV_HD constexpr uint64_t ChecksumTerm(uint64_t seed, uint64_t index, uint64_t word) {
  return Fmix64(word ^ (seed + index * kChecksumP1));
}
// The checksum of `words` words whose terms sum to `sum` (mod 2^64).
GPKV_HD constexpr uint64_t ChecksumFinish(uint64_t seed, uint64_t words, uint64_t sum) {
  return Fmix64(seed ^ words) + sum;
}

// Seed of a record's checksum (row records: WordsChecksum over the entries;
// columnar records: ChecksumTerm / ChecksumFinish over the data words):
// Checksum64 of {epoch, seq, count | flags << 32} (three u64), `epoch` the
// epoch of the half's commit word.
GPKV_HD uint64_t RecordSeed(uint64_t epoch, const RecordHeader& header) {
  const uint64_t fields[3] = {epoch, header.seq, header.count | (uint64_t{header.flags} << 32)};
  return format::Checksum64(fields, sizeof(fields));
}

}  // namespace gpkv::log
