// The pure rules of tables/gphash/layout.h, on the CPU: the functions the
// GPU kernels call too (limits, candidate buckets and their orders, the
// winner rule), checked as properties over random hashes and geometries; and
// the HBM mirror's bucket layout (tables/gphash/gpu/device_view.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "format/hash.h"
#include "tables/gphash/gpu/device_view.h"
#include "tables/gphash/layout.h"

namespace gpkv {
namespace {

using format::KeyHash;
using gphash::CandidateOrder;
using gphash::LevelCandidates;

constexpr int kRounds = 20000;

KeyHash RandomHash(std::mt19937_64& random) { return KeyHash{random(), random()}; }

// A power of two in [1, 2^max_log2].
uint64_t RandomBucketCount(std::mt19937_64& random, int max_log2) {
  return uint64_t{1} << (random() % (max_log2 + 1));
}

std::vector<uint64_t> Buckets(const LevelCandidates& candidates) {
  return std::vector<uint64_t>(candidates.buckets, candidates.buckets + candidates.count);
}

// ---- limits ----

TEST(GphashLayout, KeySizesAreEightSixteenAndThirtyTwo) {
  std::vector<uint32_t> valid;
  for (uint32_t size = 0; size <= 1024; ++size) {
    if (format::IsValidKeySize(size)) valid.push_back(size);
  }
  EXPECT_EQ(valid, (std::vector<uint32_t>{8, 16, 32}));
  EXPECT_TRUE(format::IsValidKeySize(format::kMinKeySize));
  EXPECT_TRUE(format::IsValidKeySize(format::kMaxKeySize));
  // HashKey reads keys in 8-byte words.
  for (uint32_t size : valid) EXPECT_EQ(size % 8, 0u);
}

TEST(GphashLayout, ValueSizesAreOneToOneHundredTwentyEight) {
  for (uint32_t size = 0; size <= 1024; ++size) {
    EXPECT_EQ(format::IsValidValueSize(size), size >= 1 && size <= 128) << size;
  }
  EXPECT_EQ(format::kMinValueSize, 1u);
  EXPECT_EQ(format::kMaxValueSize, 128u);
}

TEST(GphashLayout, ValuesOverEightBytesLiveInCells) {
  for (uint32_t size = format::kMinValueSize; size <= format::kMaxValueSize; ++size) {
    EXPECT_EQ(gphash::ValueModeFor(size), size <= 8 ? gphash::kValueInline : gphash::kValueCells);
    const uint32_t cell = gphash::CellSizeFor(size);
    EXPECT_EQ(cell % 8, 0u);
    EXPECT_GE(cell, size);
    EXPECT_LT(cell - size, 8u);
    EXPECT_LE(cell, gphash::kMaxCellSize);
  }
  EXPECT_EQ(gphash::kMaxInlineValueSize, 8u);  // one value word
}

TEST(GphashLayout, GeometryLimits) {
  std::vector<uint32_t> slot_counts;
  for (uint32_t slots = 0; slots <= 256; ++slots) {
    if (gphash::IsValidSlotsPerBucket(slots)) slot_counts.push_back(slots);
  }
  EXPECT_EQ(slot_counts, (std::vector<uint32_t>{4, 8, 16}));
  for (uint32_t levels = 0; levels <= 16; ++levels) {
    for (uint32_t locations = 0; locations <= 16; ++locations) {
      for (uint32_t slots = 0; slots <= 32; ++slots) {
        const bool expected = levels >= 1 && levels <= 4 && locations >= 1 && locations <= 4 &&
                              (slots == 4 || slots == 8 || slots == 16);
        EXPECT_EQ(gphash::IsValidGeometry(levels, locations, slots), expected)
            << levels << "L-" << locations << "H-" << slots << "S";
      }
    }
  }
  // A resize adds a level on top of the geometry's.
  EXPECT_LT(gphash::kMaxGeometryLevels, gphash::kMaxLevels);
  EXPECT_EQ(gphash::kMaxCandidateBuckets, gphash::kMaxLevels * gphash::kMaxHashLocations);
}

TEST(GphashLayout, BucketsOfEveryValidGeometryAreWholeCacheLines) {
  for (uint32_t key = format::kMinKeySize; key <= format::kMaxKeySize; key *= 2) {
    for (uint32_t slots = gphash::kMinSlotsPerBucket; slots <= gphash::kMaxSlotsPerBucket;
         slots *= 2) {
      const uint32_t bytes = gphash::BucketBytes(slots, key);
      EXPECT_EQ(bytes % 64, 0u);
      // Slot words, keys and value words fit, in that order.
      EXPECT_LE(gphash::ValueWordOffset(slots, key, slots - 1) + 8, bytes);
      EXPECT_EQ(gphash::KeyOffset(slots, key, 0), gphash::SlotWordOffset(slots));
      EXPECT_EQ(gphash::ValueWordOffset(slots, key, 0), gphash::KeyOffset(slots, key, slots));
    }
  }
}

// The mirror keeps a bucket's bytes: its slot words where the pool has
// them, and each slot's key and value word side by side in the pool's key
// and value area (the bytes ToMirrorLayoutKernel permutes).
TEST(GphashLayout, MirrorBucketsHoldEachSlotsKeyAndValueTogether) {
  for (uint32_t key = format::kMinKeySize; key <= format::kMaxKeySize; key *= 2) {
    for (uint32_t slots = gphash::kMinSlotsPerBucket; slots <= gphash::kMaxSlotsPerBucket;
         slots *= 2) {
      const uint32_t bytes = gphash::BucketBytes(slots, key);
      std::vector<int> owner(bytes, -1);
      auto claim = [&](uint32_t at, uint32_t length, int who) {
        ASSERT_LE(at + length, bytes) << key << "-byte keys, " << slots << " slots";
        for (uint32_t b = at; b < at + length; ++b) {
          ASSERT_EQ(owner[b], -1) << "byte " << b << " twice";
          owner[b] = who;
        }
      };
      for (uint32_t s = 0; s < slots; ++s) {
        claim(gphash::SlotWordOffset(s), 8, 0);
        const uint32_t key_at = gphash::gpu::MirrorKeyOffset(slots, key, s);
        const uint32_t value_at = gphash::gpu::MirrorValueWordOffset(slots, key, s);
        EXPECT_EQ(key_at % 8, 0u);
        EXPECT_EQ(value_at, key_at + key);  // key, then value word
        claim(key_at, key, 1);
        claim(value_at, 8, 1);
        // 8-byte keys: one aligned 16-byte load reads both (LoadIndexEntry).
        if (key == 8) EXPECT_EQ(key_at % 16, 0u);
      }
      // The same area as the pool's keys and values.
      const uint32_t area_end = gphash::ValueWordOffset(slots, key, slots);
      for (uint32_t b = 0; b < bytes; ++b) {
        const int expected = b < gphash::SlotWordOffset(slots) ? 0 : b < area_end ? 1 : -1;
        EXPECT_EQ(owner[b], expected)
            << "byte " << b << ", " << key << "-byte keys, " << slots << " slots";
      }
    }
  }
}

TEST(GphashLayout, IndexOffsetsFollowTheMirrorOnlyWhenMirrored) {
  gphash::gpu::GphashDeviceView view{};
  view.slots_per_bucket = 8;
  view.key_size = 16;
  for (uint32_t s = 0; s < 8; ++s) {
    view.mirrored = false;
    gphash::gpu::SetIndexLayout(view);
    EXPECT_EQ(gphash::gpu::IndexKeyOffset(view, s), gphash::KeyOffset(8, 16, s));
    EXPECT_EQ(gphash::gpu::IndexValueWordOffset(view, s), gphash::ValueWordOffset(8, 16, s));
    view.mirrored = true;
    gphash::gpu::SetIndexLayout(view);
    EXPECT_EQ(gphash::gpu::IndexKeyOffset(view, s), gphash::gpu::MirrorKeyOffset(8, 16, s));
    EXPECT_EQ(gphash::gpu::IndexValueWordOffset(view, s),
              gphash::gpu::MirrorValueWordOffset(8, 16, s));
  }
}

// ---- candidate buckets ----

TEST(GphashLayout, EveryLocationListsEachLocationsBucketInOrder) {
  std::mt19937_64 random(1);
  for (int round = 0; round < kRounds; ++round) {
    const KeyHash hash = RandomHash(random);
    const uint32_t locations = 1 + random() % gphash::kMaxHashLocations;
    const uint64_t bucket_count = RandomBucketCount(random, 40);
    const LevelCandidates every = gphash::CandidateBucketsOfLevel(hash, locations, bucket_count,
                                                                  CandidateOrder::kEveryLocation);
    ASSERT_EQ(every.count, locations);
    for (uint32_t location = 0; location < locations; ++location) {
      EXPECT_EQ(every.buckets[location], gphash::BucketIndex(hash, location, bucket_count));
      EXPECT_LT(every.buckets[location], bucket_count);
    }
  }
}

TEST(GphashLayout, FirstLocationKeepsEachBucketOnceWhereItFirstComes) {
  std::mt19937_64 random(2);
  for (int round = 0; round < kRounds; ++round) {
    const KeyHash hash = RandomHash(random);
    const uint32_t locations = 1 + random() % gphash::kMaxHashLocations;
    // Small levels, so that locations often name the same bucket.
    const uint64_t bucket_count = RandomBucketCount(random, 3);
    std::vector<uint64_t> expected;
    for (uint32_t location = 0; location < locations; ++location) {
      const uint64_t bucket = gphash::BucketIndex(hash, location, bucket_count);
      if (std::find(expected.begin(), expected.end(), bucket) == expected.end()) {
        expected.push_back(bucket);
      }
    }
    EXPECT_EQ(Buckets(gphash::CandidateBucketsOfLevel(hash, locations, bucket_count,
                                                      CandidateOrder::kFirstLocation)),
              expected);
  }
}

TEST(GphashLayout, WinnerOrderListsTheSameBucketsAscending) {
  std::mt19937_64 random(3);
  for (int round = 0; round < kRounds; ++round) {
    const KeyHash hash = RandomHash(random);
    const uint32_t locations = 1 + random() % gphash::kMaxHashLocations;
    const uint64_t bucket_count = RandomBucketCount(random, round % 2 == 0 ? 3 : 40);
    const std::vector<uint64_t> first = Buckets(gphash::CandidateBucketsOfLevel(
        hash, locations, bucket_count, CandidateOrder::kFirstLocation));
    const LevelCandidates listed =
        gphash::CandidateBucketsOfLevel(hash, locations, bucket_count, CandidateOrder::kWinner);
    ASSERT_EQ(listed.count, locations);
    std::vector<uint64_t> winner;
    for (uint32_t i = 0; i < listed.count; ++i) {
      if (i > 0) EXPECT_LE(listed.buckets[i - 1], listed.buckets[i]);
      if (!gphash::RepeatsPrevious(listed, i)) winner.push_back(listed.buckets[i]);
    }
    ASSERT_FALSE(winner.empty());
    for (size_t i = 1; i < winner.size(); ++i) EXPECT_LT(winner[i - 1], winner[i]);
    std::vector<uint64_t> sorted = first;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(winner, sorted);
  }
}

TEST(GphashLayout, IsCandidateBucketExactlyForTheListedBuckets) {
  std::mt19937_64 random(4);
  for (int round = 0; round < kRounds; ++round) {
    const KeyHash hash = RandomHash(random);
    const uint32_t locations = 1 + random() % gphash::kMaxHashLocations;
    const uint64_t bucket_count = RandomBucketCount(random, 4);
    const std::vector<uint64_t> listed = Buckets(gphash::CandidateBucketsOfLevel(
        hash, locations, bucket_count, CandidateOrder::kFirstLocation));
    for (uint64_t bucket = 0; bucket < bucket_count; ++bucket) {
      const bool in_list = std::find(listed.begin(), listed.end(), bucket) != listed.end();
      EXPECT_EQ(gphash::IsCandidateBucket(hash, locations, bucket_count, bucket), in_list);
    }
  }
}

TEST(GphashLayout, ALevelOfOneBucketHasOneCandidate) {
  std::mt19937_64 random(5);
  for (CandidateOrder order : {CandidateOrder::kFirstLocation, CandidateOrder::kWinner}) {
    const LevelCandidates candidates =
        gphash::CandidateBucketsOfLevel(RandomHash(random), gphash::kMaxHashLocations, 1, order);
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < candidates.count; ++i) {
      EXPECT_EQ(candidates.buckets[i], 0u);
      distinct += gphash::RepeatsPrevious(candidates, i) ? 0 : 1;
    }
    EXPECT_EQ(distinct, 1u);
  }
}

TEST(GphashLayout, CandidateSlotsNumberLevelThenLocationThenSlot) {
  for (uint32_t levels = 1; levels <= gphash::kMaxLevels; ++levels) {
    for (uint32_t locations = 1; locations <= gphash::kMaxHashLocations; ++locations) {
      for (uint32_t slots = gphash::kMinSlotsPerBucket; slots <= gphash::kMaxSlotsPerBucket;
           slots *= 2) {
        const uint32_t count = gphash::CandidateSlotCount(levels, locations, slots);
        ASSERT_EQ(count, levels * locations * slots);
        gphash::CandidateSlot previous{};
        for (uint32_t candidate = 0; candidate < count; ++candidate) {
          const gphash::CandidateSlot at = gphash::CandidateSlotAt(candidate, locations, slots);
          ASSERT_LT(at.level, levels);
          ASSERT_LT(at.location, locations);
          ASSERT_LT(at.slot, slots);
          EXPECT_EQ((at.level * locations + at.location) * slots + at.slot, candidate);
          if (candidate > 0) {  // lexicographic successor of the previous one
            EXPECT_TRUE(std::tie(previous.level, previous.location, previous.slot) <
                        std::tie(at.level, at.location, at.slot));
          }
          previous = at;
        }
      }
    }
  }
}

// The tile probe's early stop: reading levels top first, each level's
// buckets in kWinner order and each bucket's slots in order visits the
// candidate slots in strictly increasing WinnerRank, so the first copy found
// is the winner.
TEST(GphashLayout, WinnerOrderVisitsSlotsInWinnerRankOrder) {
  std::mt19937_64 random(6);
  for (int round = 0; round < kRounds / 10; ++round) {
    const KeyHash hash = RandomHash(random);
    const uint32_t levels = 1 + random() % gphash::kMaxLevels;
    const uint32_t locations = 1 + random() % gphash::kMaxHashLocations;
    const uint32_t slots = gphash::kMinSlotsPerBucket << (random() % 3);
    const uint64_t top = uint64_t{1} << (levels - 1 + random() % 4);
    uint64_t previous = 0;
    bool first = true;
    for (uint32_t level = 0; level < levels; ++level) {
      const LevelCandidates candidates =
          gphash::CandidateBucketsOfLevel(hash, locations, top >> level, CandidateOrder::kWinner);
      for (uint32_t i = 0; i < candidates.count; ++i) {
        if (gphash::RepeatsPrevious(candidates, i)) continue;
        for (uint32_t slot = 0; slot < slots; ++slot) {
          const uint64_t rank = gphash::WinnerRank(level, candidates.buckets[i], slot);
          if (!first) EXPECT_LT(previous, rank);
          previous = rank;
          first = false;
        }
      }
    }
  }
}

// ---- the winner rule ----

struct SlotName {
  uint32_t level;
  uint64_t bucket;
  uint32_t slot;
};

SlotName RandomSlot(std::mt19937_64& random) {
  // Few distinct values per field, so that ties on a prefix are common.
  SlotName name;
  name.level = random() % gphash::kMaxLevels;
  name.bucket = random() % 2 == 0 ? random() % 4 : random() % gphash::kMaxBucketCount;
  name.slot = random() % gphash::kMaxSlotsPerBucket;
  return name;
}

bool Outranks(const SlotName& a, const SlotName& b) {
  return gphash::SlotOutranks(a.level, a.bucket, a.slot, b.level, b.bucket, b.slot);
}

TEST(GphashLayout, WinnerRuleIsLevelThenBucketThenSlot) {
  std::mt19937_64 random(7);
  for (int round = 0; round < kRounds; ++round) {
    const SlotName a = RandomSlot(random);
    const SlotName b = RandomSlot(random);
    const bool expected = std::tie(a.level, a.bucket, a.slot) < std::tie(b.level, b.bucket, b.slot);
    EXPECT_EQ(Outranks(a, b), expected);
    EXPECT_EQ(gphash::WinnerRank(a.level, a.bucket, a.slot) <
                  gphash::WinnerRank(b.level, b.bucket, b.slot),
              expected);
  }
}

TEST(GphashLayout, WinnerRuleIsAStrictTotalOrder) {
  std::mt19937_64 random(8);
  for (int round = 0; round < kRounds; ++round) {
    const SlotName a = RandomSlot(random);
    const SlotName b = random() % 4 == 0 ? a : RandomSlot(random);
    const SlotName c = RandomSlot(random);
    const bool same = a.level == b.level && a.bucket == b.bucket && a.slot == b.slot;
    EXPECT_FALSE(Outranks(a, a));  // irreflexive
    // Exactly one of: a wins, b wins, they are the same slot (total and
    // antisymmetric).
    EXPECT_EQ(int{Outranks(a, b)} + int{Outranks(b, a)} + int{same}, 1);
    if (Outranks(a, b) && Outranks(b, c)) EXPECT_TRUE(Outranks(a, c));  // transitive
    // One rank per slot.
    EXPECT_EQ(gphash::WinnerRank(a.level, a.bucket, a.slot) ==
                  gphash::WinnerRank(b.level, b.bucket, b.slot),
              same);
  }
}

// Slots are named by level index: with level ids strictly decreasing from
// the top (what ReadGphash accepts), the newest level (highest id) wins.
TEST(GphashLayout, LowerLevelIndexIsTheHigherLevelId) {
  std::mt19937_64 random(9);
  for (int round = 0; round < kRounds; ++round) {
    const uint32_t levels = 2 + random() % (gphash::kMaxLevels - 1);
    std::set<uint64_t> ids;
    while (ids.size() < levels) ids.insert(random() % 1000);
    const std::vector<uint64_t> level_ids(ids.rbegin(), ids.rend());  // top first
    SlotName a = RandomSlot(random);
    SlotName b = RandomSlot(random);
    a.level %= levels;
    b.level %= levels;
    if (level_ids[a.level] != level_ids[b.level]) {
      EXPECT_EQ(Outranks(a, b), level_ids[a.level] > level_ids[b.level]);
    }
  }
}

TEST(GphashLayout, NoWinnerRankRanksAfterEverySlot) {
  const uint64_t last = gphash::WinnerRank(gphash::kMaxLevels - 1, gphash::kMaxBucketCount - 1,
                                           gphash::kMaxSlotsPerBucket - 1);
  EXPECT_LT(last, gphash::kNoWinnerRank);
  const uint64_t last_ranked = gphash::WinnerRank(
      gphash::kMaxLevels - 1, gphash::kMaxRankedBucketCount - 1, gphash::kMaxSlotsPerBucket - 1);
  EXPECT_LT(last_ranked, gphash::kNoWinnerRank);
  EXPECT_LT(gphash::WinnerRank(0, 0, 0), last);
}

}  // namespace
}  // namespace gpkv
