// The shared batch log on the CPU (tables/log/): records appended through an
// Appender and the CPU backend's record writer, found again by FindSegments
// and replayed by ReadRecords; torn tails, old epochs, damaged records and
// records that do not fit.
#include "tables/log/log.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "tables/log/cpu/record_writer.h"
#include "tables/log/record.h"
#include "test_util.h"

namespace gpkv {
namespace {

constexpr uint64_t kPoolSize = uint64_t{16} << 20;
constexpr uint32_t kKeySize = 8;
constexpr uint32_t kValueSize = 12;  // not a multiple of 8: records carry padding
constexpr uint64_t kHalfCapacity = 4096;

// One replayed record.
struct Replayed {
  uint32_t segment;
  uint64_t seq;
  uint64_t offset;
  std::vector<uint64_t> keys;
  std::vector<uint8_t> values;
};

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pool = pm::Pool::Create(temp_.path(), kPoolSize, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    pool_ = std::move(*pool);
    auto words = pool_->allocator().Allocate(format::kExtentAlignment, format::kExtentKindOther, 1);
    ASSERT_TRUE(words.ok()) << words.status().ToString();
    auto log = pool_->allocator().Allocate(2 * kHalfCapacity, format::kExtentKindOther, 1);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    place_.offset = *log;
    place_.half_capacity = kHalfCapacity;
    place_.halves = 2;
    place_.word_offsets[0] = *words;
    place_.word_offsets[1] = *words + 8;
    // Both halves published empty in epoch 1: as a family creates its log.
    log::PublishWord(*pool_, place_.word_offsets[0], 1, 0);
    log::PublishWord(*pool_, place_.word_offsets[1], 0, 0);
    appender_ = log::Appender(place_);
    appender_.Enter(0, 1);
  }

  // Writes the columnar record of `count` pairs (keys first_key, first_key +
  // 1, ...; values from the key) at the appender's offset and returns its
  // bytes; published when `publish`.
  uint64_t Append(uint64_t seq, uint64_t first_key, uint64_t count, bool publish = true) {
    std::vector<uint64_t> keys(count);
    std::vector<uint8_t> values(count * kValueSize);
    for (uint64_t i = 0; i < count; ++i) {
      keys[i] = first_key + i;
      testutil::SplitMix64Fill(keys[i], values.data() + i * kValueSize, kValueSize);
    }
    const uint64_t offset = appender_.RecordOffset();
    const log::RecordHeader header = log::cpu::WriteRecordArrays(
        *pool_, offset, appender_.epoch(), seq, {keys.data(), values.data(), count}, kKeySize,
        kValueSize, /*threads=*/2);
    const uint64_t bytes = log::FinishRecord(*pool_, offset, header, kKeySize, kValueSize);
    EXPECT_EQ(bytes, log::ColumnarRecordBytes(count, kKeySize, kValueSize, false));
    if (publish) appender_.Publish(*pool_, bytes);
    return bytes;
  }

  uint64_t Word(uint32_t half) const { return *pool_->At<uint64_t>(place_.word_offsets[half]); }

  // The segments of the words as they are, the family expecting `half` of
  // `epoch`.
  Status Find(uint32_t half, uint64_t epoch, log::Segments* segments) const {
    const uint64_t words[2] = {Word(0), Word(1)};
    return log::FindSegments(
        place_, words, half, epoch,
        [&](uint64_t word_offset, const std::string& why) {
          return Status::Corruption(pool_->Where("test log word", word_offset) + ": " + why);
        },
        segments);
  }

  Status Replay(const log::Segments& segments, std::vector<Replayed>* out,
                log::Cut* cut = nullptr) const {
    out->clear();
    return log::ReadRecords(
        *pool_, "test log", segments, kKeySize, kValueSize, /*after_seq=*/0,
        [&](uint32_t segment, const log::RecordHeader& header, uint64_t offset,
            const uint8_t* entries) {
          Replayed record{segment, header.seq, offset, {}, {}};
          record.keys.resize(header.count);
          std::memcpy(record.keys.data(), entries, header.count * kKeySize);
          record.values.assign(entries + header.count * kKeySize,
                               entries + header.count * (kKeySize + kValueSize));
          out->push_back(std::move(record));
        },
        cut, /*threads=*/2);
  }

  testutil::TempPool temp_{"log"};
  std::unique_ptr<pm::Pool> pool_;
  log::Place place_;
  log::Appender appender_;
};

TEST_F(LogTest, RecordsAppendedToBothHalvesAreReplayedInOrder) {
  const uint64_t first = Append(1, 100, 3);
  Append(2, 200, 5);
  EXPECT_EQ(appender_.bytes(), first + log::ColumnarRecordBytes(5, kKeySize, kValueSize, false));
  // The family opens the other half in the next epoch (a checkpoint).
  appender_.Enter(1, 2);
  EXPECT_EQ(appender_.RecordOffset(), place_.HalfOffset(1));
  Append(3, 300, 1);
  EXPECT_EQ(log::WordEpoch(Word(1)), 2u);

  log::Segments segments;
  ASSERT_TRUE(Find(0, 1, &segments).ok());
  ASSERT_EQ(segments.count, 2u);
  EXPECT_EQ(segments.segments[0].bytes, log::WordBytes(Word(0)));
  EXPECT_EQ(segments.segments[1].offset, place_.HalfOffset(1));

  std::vector<Replayed> records;
  log::Cut cut;
  ASSERT_TRUE(Replay(segments, &records, &cut).ok());
  ASSERT_EQ(records.size(), 3u);
  const uint64_t first_keys[3] = {100, 200, 300};
  const uint64_t counts[3] = {3, 5, 1};
  for (size_t r = 0; r < records.size(); ++r) {
    EXPECT_EQ(records[r].seq, r + 1);
    EXPECT_EQ(records[r].segment, r < 2 ? 0u : 1u);
    ASSERT_EQ(records[r].keys.size(), counts[r]);
    for (uint64_t i = 0; i < counts[r]; ++i) {
      EXPECT_EQ(records[r].keys[i], first_keys[r] + i);
      uint8_t value[kValueSize];
      testutil::SplitMix64Fill(first_keys[r] + i, value, kValueSize);
      EXPECT_EQ(std::memcmp(records[r].values.data() + i * kValueSize, value, kValueSize), 0);
    }
  }
  EXPECT_EQ(cut.segment, 1u);
  EXPECT_EQ(cut.bytes, segments.segments[1].bytes);
}

TEST_F(LogTest, ATornOrUnpublishedTailIsNotReplayed) {
  Append(1, 10, 4);
  const uint64_t published = appender_.bytes();
  // A whole record written but not published, then garbage past it (a torn
  // write): nothing past the word's bytes is read.
  const uint64_t unpublished = Append(2, 20, 4, /*publish=*/false);
  std::memset(pool_->At<uint8_t>(appender_.RecordOffset() + unpublished), 0xa5, 64);

  log::Segments segments;
  ASSERT_TRUE(Find(0, 1, &segments).ok());
  EXPECT_EQ(segments.segments[0].bytes, published);
  std::vector<Replayed> records;
  ASSERT_TRUE(Replay(segments, &records).ok());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].seq, 1u);
}

TEST_F(LogTest, TheOtherHalfOfAnotherEpochIsNotReplayed) {
  Append(1, 10, 2);
  appender_.Enter(1, 2);
  Append(2, 20, 2);
  // The family's manifest moved on to half 1 of epoch 2: half 0's records
  // of epoch 1 are a finished cycle's.
  log::Segments segments;
  ASSERT_TRUE(Find(1, 2, &segments).ok());
  EXPECT_EQ(segments.count, 1u);
  std::vector<Replayed> records;
  ASSERT_TRUE(Replay(segments, &records).ok());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].seq, 2u);
}

TEST_F(LogTest, AWordOfTheEpochBeforeIsAnEmptyHalfAndAnotherIsCorrupt) {
  Append(1, 10, 2);
  log::Segments segments;
  // The family emptied half 0 in epoch 2 and had not yet reset its word.
  ASSERT_TRUE(Find(0, 2, &segments).ok());
  EXPECT_EQ(segments.segments[0].bytes, 0u);
  EXPECT_EQ(segments.segments[0].epoch, 2u);
  const Status wrong = Find(0, 5, &segments);
  EXPECT_TRUE(wrong.IsCorruption()) << wrong.ToString();
  EXPECT_NE(wrong.message().find("log word epoch 1 is neither"), std::string::npos)
      << wrong.ToString();
}

TEST_F(LogTest, ARecordOfAnotherEpochFailsItsChecksum) {
  Append(1, 10, 2);
  // The same bytes published under the next epoch: the record's checksum
  // seed binds it to the epoch it was written in.
  log::PublishWord(*pool_, place_.word_offsets[0], 2, appender_.bytes());
  log::Segments segments;
  ASSERT_TRUE(Find(0, 2, &segments).ok());
  std::vector<Replayed> records;
  const Status replayed = Replay(segments, &records);
  EXPECT_TRUE(replayed.IsCorruption()) << replayed.ToString();
  EXPECT_NE(replayed.message().find("checksum mismatch"), std::string::npos);
  EXPECT_TRUE(records.empty());
}

TEST_F(LogTest, ADamagedRecordStopsTheReplayAndSaysWhereTheIntactOnesEnd) {
  const uint64_t first = Append(1, 10, 3);
  Append(2, 20, 3);
  Append(3, 30, 3);
  // A value byte of the second record.
  pool_->At<uint8_t>(place_.HalfOffset(0) + first + log::kRecordHeaderSize + 3 * kKeySize)[1] ^=
      0x10;
  log::Segments segments;
  ASSERT_TRUE(Find(0, 1, &segments).ok());
  std::vector<Replayed> records;
  log::Cut cut;
  const Status replayed = Replay(segments, &records, &cut);
  EXPECT_TRUE(replayed.IsCorruption()) << replayed.ToString();
  EXPECT_NE(replayed.message().find("record checksum mismatch"), std::string::npos);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(cut.segment, 0u);
  EXPECT_EQ(cut.bytes, first);
}

TEST_F(LogTest, SequenceNumbersMustAscend) {
  Append(5, 10, 1);
  Append(5, 20, 1);
  log::Segments segments;
  ASSERT_TRUE(Find(0, 1, &segments).ok());
  std::vector<Replayed> records;
  const Status replayed = Replay(segments, &records);
  EXPECT_TRUE(replayed.IsCorruption()) << replayed.ToString();
  EXPECT_NE(replayed.message().find("does not follow 5"), std::string::npos);
  EXPECT_EQ(records.size(), 1u);
}

TEST_F(LogTest, ARecordThatDoesNotFitIsRefusedAndNeverRead) {
  const uint64_t record = log::ColumnarRecordBytes(16, kKeySize, kValueSize, false);
  uint64_t appended = 0;
  while (appender_.Fits(record)) {
    ++appended;
    Append(appended, appended * 100, 16);
  }
  EXPECT_GT(appended, 0u);
  EXPECT_LE(appender_.bytes(), kHalfCapacity);
  EXPECT_GT(appender_.bytes() + record, kHalfCapacity);

  // A word that claims more than a half is corrupt.
  log::PublishWord(*pool_, place_.word_offsets[0], 1, kHalfCapacity + 8);
  log::Segments segments;
  const Status too_long = Find(0, 1, &segments);
  EXPECT_TRUE(too_long.IsCorruption()) << too_long.ToString();
  EXPECT_NE(too_long.message().find("bytes of a log half of"), std::string::npos);

  // A header whose entries pass the published bytes.
  log::PublishWord(*pool_, place_.word_offsets[0], 1, appender_.bytes());
  auto* header = pool_->At<log::RecordHeader>(place_.HalfOffset(0));
  header->count = 1000;
  ASSERT_TRUE(Find(0, 1, &segments).ok());
  std::vector<Replayed> records;
  const Status passes = Replay(segments, &records);
  EXPECT_TRUE(passes.IsCorruption()) << passes.ToString();
  EXPECT_NE(passes.message().find("passes the log's end"), std::string::npos);
  EXPECT_TRUE(records.empty());
}

TEST_F(LogTest, ATombstoneRecordHasNoValues) {
  const std::vector<uint64_t> keys = {7, 8, 9};
  const uint64_t offset = appender_.RecordOffset();
  const log::RecordHeader header =
      log::cpu::WriteRecordArrays(*pool_, offset, appender_.epoch(), 1,
                                  {keys.data(), nullptr, keys.size()}, kKeySize, kValueSize, 1);
  EXPECT_EQ(header.flags, log::kRecordColumnar | log::kRecordTombstones);
  const uint64_t bytes = log::FinishRecord(*pool_, offset, header, kKeySize, kValueSize);
  EXPECT_EQ(bytes, log::kRecordHeaderSize + keys.size() * kKeySize);
  appender_.Publish(*pool_, bytes);
  log::Segments segments;
  ASSERT_TRUE(Find(0, 1, &segments).ok());
  uint64_t visited = 0;
  ASSERT_TRUE(log::ReadRecords(
                  *pool_, "test log", segments, kKeySize, kValueSize, 0,
                  [&](uint32_t, const log::RecordHeader& record, uint64_t, const uint8_t* entries) {
                    ++visited;
                    EXPECT_TRUE(log::HasTombstones(record.flags));
                    EXPECT_EQ(std::memcmp(entries, keys.data(), keys.size() * kKeySize), 0);
                  })
                  .ok());
  EXPECT_EQ(visited, 1u);
}

}  // namespace
}  // namespace gpkv
