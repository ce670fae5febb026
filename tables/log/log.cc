#include "tables/log/log.h"

#include <cstring>

#include "tables/log/checksum.h"
#include "tables/root_reader.h"

namespace gpkv::log {

using tables::Hex;

Status FindSegments(const Place& place, const uint64_t* words, uint32_t half, uint64_t epoch,
                    const WordError& bad, Segments* out) {
  auto check_bytes = [&](uint32_t of, uint64_t bytes) {
    if (bytes <= place.half_capacity) return Status::OK();
    return bad(place.word_offsets[of], "log word publishes " + std::to_string(bytes) +
                                           " bytes of a log half of " +
                                           std::to_string(place.half_capacity));
  };
  Segments segments;
  Segment& first = segments.segments[0];
  first = {half, epoch, place.HalfOffset(half), 0};
  const uint64_t word_epoch = WordEpoch(words[half]);
  if (word_epoch == PreviousEpoch(epoch)) {
    // The family emptied the half in its manifest and had not yet reset the
    // word. The half is empty.
  } else if (word_epoch != epoch) {
    return bad(place.word_offsets[half], "log word epoch " + std::to_string(word_epoch) +
                                             " is neither the manifest's " + std::to_string(epoch) +
                                             " nor the one before");
  } else {
    first.bytes = WordBytes(words[half]);
    GPKV_RETURN_IF_ERROR(check_bytes(half, first.bytes));
  }
  if (place.halves == 2) {
    // The other half holds records only while a checkpoint was in flight:
    // its word of the next epoch (any other epoch is a finished cycle's).
    const uint32_t other = 1 - half;
    const uint64_t next_epoch = NextEpoch(epoch);
    if (WordEpoch(words[other]) == next_epoch) {
      const uint64_t bytes = WordBytes(words[other]);
      GPKV_RETURN_IF_ERROR(check_bytes(other, bytes));
      segments.segments[1] = {other, next_epoch, place.HalfOffset(other), bytes};
      segments.count = 2;
    }
  }
  *out = segments;
  return Status::OK();
}

Status ReadRecords(const pm::Pool& pool, const std::string& region, const Segments& segments,
                   uint32_t key_size, uint32_t value_size, uint64_t after_seq,
                   const RecordVisitor& visit, Cut* cut, int threads) {
  uint64_t last_seq = after_seq;
  if (cut != nullptr) *cut = {};
  for (uint32_t segment = 0; segment < segments.count; ++segment) {
    const Segment& part = segments.segments[segment];
    const uint8_t* half = pool.At<uint8_t>(part.offset);
    uint64_t at = 0;
    if (cut != nullptr) *cut = {segment, 0};
    while (at < part.bytes) {
      const uint64_t where = part.offset + at;
      auto bad = [&](const std::string& why) {
        return Status::Corruption(pool.Where(region + " record", where) + ": " + why);
      };
      if (part.bytes - at < kRecordHeaderSize) return bad("record header is cut off");
      RecordHeader header;
      std::memcpy(&header, half + at, sizeof(header));
      if (header.count == 0 || !IsKnownRecordFlags(header.flags)) {
        return bad("record of 0 entries or bad flags");
      }
      const uint64_t bytes = RecordBytes(header, key_size, value_size);
      if (bytes > part.bytes - at) {
        return bad("record of " + std::to_string(header.count) + " entries passes the log's end");
      }
      if (header.seq <= last_seq || header.seq > kMaxSeq) {
        return bad("sequence number " + std::to_string(header.seq) + " does not follow " +
                   std::to_string(last_seq));
      }
      const uint8_t* entries = half + at + kRecordHeaderSize;
      const uint64_t seed = RecordSeed(part.epoch, header);
      const uint64_t data_words = (bytes - kRecordHeaderSize) / 8;
      uint64_t checksum;
      if (IsRowRecord(header.flags)) {
        WordsChecksumState state = WordsChecksumBegin(seed);
        WordsChecksumAdd(state, reinterpret_cast<const uint64_t*>(entries), data_words);
        checksum = WordsChecksumEnd(state);
      } else {
        checksum = PositionChecksum(seed, entries, data_words, threads);
      }
      if (checksum != header.checksum) {
        return bad("record checksum mismatch (stored " + Hex(header.checksum) + ", computed " +
                   Hex(checksum) + ")");
      }
      visit(segment, header, where, entries);
      last_seq = header.seq;
      at += bytes;
      if (cut != nullptr) cut->bytes = at;
    }
  }
  return Status::OK();
}

void PublishWord(pm::Pool& pool, uint64_t word_offset, uint64_t epoch, uint64_t bytes) {
  pool.Publish(pool.At<uint64_t>(word_offset), MakeWord(epoch, bytes));
}

}  // namespace gpkv::log
