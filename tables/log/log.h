// The durable batch log, backend-neutral: where a log lives (Place), which
// of its records are published (FindSegments), the replay and verify walk
// over them (ReadRecords), and where the next record goes and how it is
// published (Appender). layout.h draws the bytes.
//
// The log owns how records are laid out, published, found and validated.
// The family that owns a log owns everything else: what a record's entries
// mean, which epochs its manifest expects of each half, when a half is
// emptied or a checkpoint is due, and where its commit words lie (in its
// root: the log is given their pool offsets).
//
// Who may call: the table families (tables/<family>/) and tests.
// Thread safety: FindSegments and ReadRecords are plain functions over a
// const pool. An Appender is the state of one writer: the family serialises
// its calls (its writer mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/log/layout.h"

namespace gpkv::log {

// Where a log lies in the pool, as its family's validated root says.
struct Place {
  uint64_t offset = 0;         // the extent
  uint64_t half_capacity = 0;  // bytes of a half
  uint32_t halves = 1;         // 1 or 2
  // Pool offsets of the halves' commit words (in the family's root).
  uint64_t word_offsets[kMaxHalves] = {};

  uint64_t HalfOffset(uint32_t half) const { return log::HalfOffset(offset, half_capacity, half); }
};

// Published records of one half: `bytes` bytes from `offset` (the half's
// start), written in `epoch`.
struct Segment {
  uint32_t half = 0;
  uint64_t epoch = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};
// The published records of a log, oldest first: segment 0 is the half the
// family's manifest names; segment 1, in a two-half log only, the other
// half's records of the next epoch (written while the family moved its
// records out of the first half behind the batches: a checkpoint).
struct Segments {
  Segment segments[kMaxHalves];
  uint32_t count = 1;
};

// How a family names a bad commit word: the Corruption for the word at
// word_offset (one of Place::word_offsets), `why` it is bad.
using WordError = std::function<Status(uint64_t word_offset, const std::string& why)>;

// The published segments of `place` whose commit words hold `words` (one per
// half), the family's manifest naming `half` and `epoch`:
//  - half `half` holds its word's bytes when the word's epoch is `epoch`, and
//    is empty when it is the epoch before (a family emptied the half in its
//    manifest and had not yet reset the word); another epoch is corrupt;
//  - in a two-half log the other half is segment 1 when its word's epoch is
//    the next one; any other epoch is a finished cycle's: not replayed.
// A word that publishes more than a half is corrupt. Errors come from `bad`.
Status FindSegments(const Place& place, const uint64_t* words, uint32_t half, uint64_t epoch,
                    const WordError& bad, Segments* out);

// Visits a record: its segment, header, offset in the pool and its entries
// (RecordBytes(header) - kRecordHeaderSize bytes, as header.flags lay them
// out).
using RecordVisitor = std::function<void(uint32_t segment, const RecordHeader& header,
                                         uint64_t offset, const uint8_t* entries)>;
// Where the intact records end: the segment and its bytes before the first
// bad record (the end of the last segment when all are intact).
struct Cut {
  uint32_t segment = 0;
  uint64_t bytes = 0;
};
// Visits every published record of `segments`, in order, with entries of
// key_size / value_size bytes: the replay at open and the check of verify.
// Corruption, naming `region` (as "table 'users' log") and the record's
// offset, at the first record whose header is cut off or unknown (count 0,
// bad flags), that passes its segment's published bytes, whose sequence
// number does not follow the previous one (the first must follow
// `after_seq`; at most kMaxSeq), or whose checksum (of its segment's epoch,
// summed on `threads` threads) does not match; the records before it have
// been visited, and *cut (if not null) says where they end. A torn or
// unpublished tail lies past the published bytes: it is never read.
Status ReadRecords(const pm::Pool& pool, const std::string& region, const Segments& segments,
                   uint32_t key_size, uint32_t value_size, uint64_t after_seq,
                   const RecordVisitor& visit, Cut* cut = nullptr, int threads = 1);

// Publishes the commit word at word_offset: `bytes` bytes of records of
// `epoch` (one 8-byte store, persisted).
void PublishWord(pm::Pool& pool, uint64_t word_offset, uint64_t epoch, uint64_t bytes);

// Where the next record of a log goes: one half, its epoch and its published
// bytes. The family moves it (Enter) when it empties a half or opens the
// other one; a record written at RecordOffset() and persisted is published
// by Publish.
class Appender {
 public:
  Appender() = default;
  explicit Appender(const Place& place) : place_(place) {}

  // Appends go to `half` of `epoch`, which holds `bytes` published bytes.
  void Enter(uint32_t half, uint64_t epoch, uint64_t bytes = 0) {
    half_ = half;
    epoch_ = epoch;
    bytes_ = bytes;
  }
  // The pool offset of the next record.
  uint64_t RecordOffset() const { return place_.HalfOffset(half_) + bytes_; }
  // Whether a record of record_bytes fits the half after the published ones.
  bool Fits(uint64_t record_bytes) const {
    return RecordFits(bytes_, record_bytes, place_.half_capacity);
  }
  // Publishes the record of record_bytes written and persisted at
  // RecordOffset(): the half's commit word moves past it.
  // REQUIRES: Fits(record_bytes).
  void Publish(pm::Pool& pool, uint64_t record_bytes) {
    bytes_ += record_bytes;
    PublishWord(pool, place_.word_offsets[half_], epoch_, bytes_);
  }

  const Place& place() const { return place_; }
  uint32_t half() const { return half_; }
  uint64_t epoch() const { return epoch_; }
  uint64_t bytes() const { return bytes_; }

 private:
  Place place_;
  uint32_t half_ = 0;
  uint64_t epoch_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace gpkv::log
