// The pure rules of tables/slab_hash/layout.h on the CPU: the functions the
// GPU kernels call too (geometry, aux word, touched bits and tags, pair
// masks, hash and bucket choice, sizing), checked over every key and value
// size and as properties over random aux words.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "tables/slab_hash/layout.h"

namespace gpkv::slab_hash {
namespace {

constexpr uint32_t kKeySizes[] = {8, 16, 32};

TEST(SlabHashLayout, EveryGeometryFitsItsSlotsIntoFifteenWords) {
  for (uint32_t key_size : kKeySizes) {
    for (uint32_t value_size = 1; value_size <= 128; ++value_size) {
      const SlabGeometry geometry = GeometryFor(key_size, value_size);
      SCOPED_TRACE(testing::Message() << key_size << "/" << value_size);
      EXPECT_EQ(geometry.key_words, key_size / 8);
      EXPECT_EQ(geometry.slot_words, geometry.key_words + geometry.value_words);
      EXPECT_GE(geometry.slots_per_slab, 1u);
      EXPECT_LE(geometry.slots_per_slab, kMaxSlotsPerSlab);
      EXPECT_LE(geometry.slots_per_slab * geometry.slot_words, kSlotAreaWords);
      EXPECT_GT((geometry.slots_per_slab + 1) * geometry.slot_words, kSlotAreaWords);
      const uint32_t inline_words = (value_size + 7) / 8;
      EXPECT_EQ(geometry.value_out_of_line, geometry.key_words + inline_words > kSlotAreaWords);
      EXPECT_EQ(geometry.value_words, geometry.value_out_of_line ? 1u : inline_words);
      // The last value word of the last slot is still a slot-area word.
      EXPECT_LT(ValueWordIndex(geometry, geometry.slots_per_slab - 1, geometry.value_words - 1),
                kSlotAreaWords);
    }
  }
}

TEST(SlabHashLayout, TheGeometriesOfTheIssue) {
  // 8-byte keys and values: lanes 0..13 hold 7 pairs (the paper's 15 pairs
  // of 4-byte words, at 8 bytes a word).
  SlabGeometry geometry = GeometryFor(8, 8);
  EXPECT_EQ(geometry.slots_per_slab, 7u);
  EXPECT_FALSE(geometry.value_out_of_line);
  EXPECT_EQ(GeometryFor(16, 8).slots_per_slab, 5u);
  EXPECT_EQ(GeometryFor(32, 8).slots_per_slab, 3u);
  geometry = GeometryFor(8, 128);
  EXPECT_TRUE(geometry.value_out_of_line);
  EXPECT_EQ(geometry.slots_per_slab, 7u);
  geometry = GeometryFor(32, 100);
  EXPECT_TRUE(geometry.value_out_of_line);
  EXPECT_EQ(geometry.slots_per_slab, 3u);
  geometry = GeometryFor(32, 88);  // 4 + 11 words: the largest inline value of a 32-byte key
  EXPECT_FALSE(geometry.value_out_of_line);
  EXPECT_EQ(geometry.slots_per_slab, 1u);
  EXPECT_TRUE(GeometryFor(32, 89).value_out_of_line);
  EXPECT_FALSE(GeometryFor(8, 112).value_out_of_line);
  EXPECT_TRUE(GeometryFor(8, 113).value_out_of_line);
}

TEST(SlabHashLayout, SizesAreTheFamilyLimits) {
  EXPECT_TRUE(IsValidSizes(8, 1));
  EXPECT_TRUE(IsValidSizes(32, 128));
  EXPECT_FALSE(IsValidSizes(4, 8));
  EXPECT_FALSE(IsValidSizes(24, 8));
  EXPECT_FALSE(IsValidSizes(8, 0));
  EXPECT_FALSE(IsValidSizes(8, 129));
}

TEST(SlabHashLayout, SlotStatesAreTwoBitsPerSlot) {
  uint32_t aux = 0;
  for (uint32_t slot = 0; slot < kMaxSlotsPerSlab; ++slot) {
    aux = WithSlotState(aux, slot, slot % 4);
  }
  for (uint32_t slot = 0; slot < kMaxSlotsPerSlab; ++slot) {
    EXPECT_EQ(SlotStateOf(aux, slot), slot % 4);
  }
  EXPECT_EQ(aux & ~kStateMask, 0u);
  // Pending -> live is one XOR of the slot's pair.
  const uint32_t pending = WithSlotState(0, 3, kSlotPending);
  EXPECT_EQ(SlotStateOf(pending ^ (kPendingToLiveFlip << 6), 3), kSlotLive);
}

TEST(SlabHashLayout, PairMasksAgreeWithSlotsInState) {
  std::mt19937_64 random(14);
  for (int round = 0; round < 20000; ++round) {
    const uint32_t aux = static_cast<uint32_t>(random());
    for (uint32_t slots = 1; slots <= kMaxSlotsPerSlab; ++slots) {
      auto pairs_to_slots = [](uint32_t pairs) {
        uint32_t out = 0;
        for (uint32_t slot = 0; slot < kMaxSlotsPerSlab; ++slot) {
          if ((pairs >> (2 * slot)) & 1u) out |= 1u << slot;
        }
        return out;
      };
      EXPECT_EQ(pairs_to_slots(FreePairs(aux, slots)), SlotsInState(aux, kSlotFree, slots));
      EXPECT_EQ(pairs_to_slots(PendingPairs(aux, slots)), SlotsInState(aux, kSlotPending, slots));
      EXPECT_EQ(pairs_to_slots(LivePairs(aux, slots)), SlotsInState(aux, kSlotLive, slots));
      EXPECT_EQ(pairs_to_slots(DeadPairs(aux, slots)), SlotsInState(aux, kSlotDead, slots));
    }
  }
}

TEST(SlabHashLayout, TouchingFlagsTheSecondWriteOfASlotInOneBatch) {
  bool duplicate = true;
  uint32_t aux = TouchForWrite(0, 2, kSlotPending, 5, &duplicate);
  EXPECT_FALSE(duplicate);
  EXPECT_EQ(TagOf(aux), 5u);
  EXPECT_EQ(SlotsTouchedBy(aux, 5), 1u << 2);
  EXPECT_EQ(SlotsTouchedBy(aux, 6), 0u);
  aux = TouchForWrite(aux, 4, kSlotPending, 5, &duplicate);
  EXPECT_FALSE(duplicate);
  aux = TouchForWrite(aux, 2, kSlotLive, 5, &duplicate);
  EXPECT_TRUE(duplicate);
  EXPECT_EQ(SlotStateOf(aux, 2), kSlotLive);
  EXPECT_EQ(SlotStateOf(aux, 4), kSlotPending);
  // A later batch forgets the earlier one's touched bits.
  aux = TouchForWrite(aux, 2, kSlotDead, 6, &duplicate);
  EXPECT_FALSE(duplicate);
  EXPECT_EQ(TagOf(aux), 6u);
  EXPECT_EQ(SlotsTouchedBy(aux, 6), 1u << 2);
  EXPECT_EQ(SlotStateOf(aux, 2), kSlotDead);
  EXPECT_EQ(SlotStateOf(aux, 4), kSlotPending);  // states survive the tag change
}

TEST(SlabHashLayout, OnlyATouchedLiveSlotWithAZeroKeyIsUncertain) {
  bool duplicate = false;
  const uint32_t aux = TouchForWrite(WithSlotState(0, 1, kSlotLive), 0, kSlotLive, 9, &duplicate);
  EXPECT_TRUE(SlotIsUncertain(aux, 0, 9, true));
  EXPECT_FALSE(SlotIsUncertain(aux, 0, 9, false));  // a key that is not all zeros
  EXPECT_FALSE(SlotIsUncertain(aux, 0, 10, true));  // another batch's touch
  EXPECT_FALSE(SlotIsUncertain(aux, 1, 9, true));   // live before the batch
  EXPECT_FALSE(SlotIsUncertain(aux, 2, 9, true));   // free
}

TEST(SlabHashLayout, PackedAuxHasItsFirstSlotsLiveAndNoTag) {
  for (uint32_t live = 0; live <= kMaxSlotsPerSlab; ++live) {
    const uint32_t aux = PackedAux(live);
    EXPECT_EQ(TagOf(aux), 0u);
    for (uint32_t slot = 0; slot < kMaxSlotsPerSlab; ++slot) {
      EXPECT_EQ(SlotStateOf(aux, slot), slot < live ? kSlotLive : kSlotFree);
    }
  }
}

TEST(SlabHashLayout, BatchTagsCycleThroughOneToTheLastAndSayWhenTheyWrap) {
  bool wrapped = true;
  uint32_t tag = NextBatchTag(0, &wrapped);
  EXPECT_EQ(tag, 1u);
  EXPECT_FALSE(wrapped);
  std::set<uint32_t> seen = {tag};
  for (uint32_t i = 2; i < kTagCount; ++i) {
    tag = NextBatchTag(tag, &wrapped);
    EXPECT_FALSE(wrapped);
    seen.insert(tag);
  }
  EXPECT_EQ(tag, kTagCount - 1);
  EXPECT_EQ(seen.size(), kTagCount - 1);
  EXPECT_EQ(NextBatchTag(tag, &wrapped), 1u);
  EXPECT_TRUE(wrapped);
}

TEST(SlabHashLayout, HashDependsOnEveryKeyWordAndTheSeed) {
  const uint64_t words[4] = {1, 2, 3, 4};
  const uint64_t base = KeyHash64(words, 4, 7);
  EXPECT_EQ(base, KeyHash64(words, 4, 7));
  EXPECT_NE(base, KeyHash64(words, 4, 8));
  EXPECT_NE(base, KeyHash64(words, 2, 7));
  for (int w = 0; w < 4; ++w) {
    uint64_t changed[4] = {1, 2, 3, 4};
    changed[w] ^= 1;
    EXPECT_NE(base, KeyHash64(changed, 4, 7)) << w;
  }
}

TEST(SlabHashLayout, BucketsAreInRangeAndEvenlyUsed) {
  std::mt19937_64 random(3);
  for (uint64_t buckets : {uint64_t{1}, uint64_t{7}, uint64_t{1000}, uint64_t{1} << 40}) {
    for (int i = 0; i < 1000; ++i) EXPECT_LT(BucketOf(random(), buckets), buckets);
  }
  // Sequential keys spread evenly over a prime count of buckets.
  constexpr uint64_t kBuckets = 1009;
  std::vector<uint32_t> hits(kBuckets);
  for (uint64_t key = 0; key < kBuckets * 200; ++key) {
    ++hits[BucketOf(KeyHash64(&key, 1, 42), kBuckets)];
  }
  for (uint32_t count : hits) {
    EXPECT_GT(count, 120u);
    EXPECT_LT(count, 290u);
  }
}

TEST(SlabHashLayout, SizingRules) {
  // 70% of one slab per list at create.
  EXPECT_EQ(BucketsFor(0, 7), 1u);
  EXPECT_EQ(BucketsFor(1, 7), 1u);
  EXPECT_EQ(BucketsFor(48, 7), 10u);  // 48 / 4.9, rounded up
  EXPECT_EQ(BucketsFor(50, 7), 11u);
  EXPECT_FALSE(NeedsRehash(14, 1, 7));
  EXPECT_TRUE(NeedsRehash(15, 1, 7));
  EXPECT_EQ(RehashBuckets(15, 1, 7), BucketsFor(15, 7));
  EXPECT_EQ(RehashBuckets(1000, 70, 7), 280u);  // 4x beats 205 sized for the keys
  constexpr uint64_t kMin = kMinDeadSlotsForFlush;
  EXPECT_FALSE(NeedsFlush(kMin - 1, 0, 1, 7));
  EXPECT_TRUE(NeedsFlush(kMin, 0, 1, 7));
  EXPECT_FALSE(NeedsFlush(kMin, 4 * kMin, 1, 7));  // a quarter of the live keys
  EXPECT_TRUE(NeedsFlush(kMin + 1, 4 * kMin, 1, 7));
  // A quarter of the base slots: a nearly empty table of many buckets waits.
  EXPECT_FALSE(NeedsFlush(kMin + 1, 0, 4 * (kMin + 1), 1));
  EXPECT_TRUE(NeedsFlush(kMin + 1, 0, 4 * (kMin + 1) - 1, 1));
}

}  // namespace
}  // namespace gpkv::slab_hash
