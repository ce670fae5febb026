// pm::ExtentAllocator: first fit, zeroing, free, reload, pool full, recovery
// of unreachable extents.
#include "pm/extent_allocator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "pm/pool.h"
#include "test_util.h"

namespace gpkv::pm {
namespace {

constexpr uint64_t kSize = 8 << 20;

TEST(ExtentAllocator, AllocationsAreZeroedDisjointAndSurviveReopen) {
  testutil::TempPool temp("alloc");
  std::vector<uint64_t> offsets;
  {
    auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    for (uint64_t length : {4096u, 10000u, 65536u, 4096u}) {
      auto offset = (*pool)->allocator().Allocate(length, format::kExtentKindOther, 7);
      ASSERT_TRUE(offset.ok()) << offset.status().ToString();
      uint8_t* bytes = (*pool)->At<uint8_t>(*offset);
      for (uint64_t i = 0; i < length; ++i) ASSERT_EQ(bytes[i], 0);
      std::memset(bytes, 0xab, length);
      offsets.push_back(*offset);
    }
    EXPECT_EQ((*pool)->allocator().used_bytes(), 4096u + 12288u + 65536u + 4096u);
    ASSERT_TRUE((*pool)->allocator().Free(offsets[1]).ok());
    // The freed range is reused (first fit) and comes back zeroed.
    auto again = (*pool)->allocator().Allocate(8192, format::kExtentKindOther, 7);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, offsets[1]);
    EXPECT_EQ(*(*pool)->At<uint8_t>(*again + 100), 0);
  }
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  auto extents = (*pool)->allocator().AllocatedExtents();
  ASSERT_EQ(extents.size(), 4u);
  for (size_t i = 1; i < extents.size(); ++i) {
    EXPECT_LE(extents[i - 1].offset + extents[i - 1].length, extents[i].offset);
  }
}

TEST(ExtentAllocator, FullHeapIsPoolFullAndLeavesExtentsIntact) {
  testutil::TempPool temp("full");
  auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  auto big = (*pool)->allocator().Allocate(kSize / 2, format::kExtentKindOther, 1);
  ASSERT_TRUE(big.ok());
  auto too_big = (*pool)->allocator().Allocate(kSize / 2, format::kExtentKindOther, 1);
  ASSERT_TRUE(too_big.status().IsPoolFull()) << too_big.status().ToString();
  EXPECT_NE(too_big.status().message().find("pool full"), std::string::npos);
  EXPECT_EQ((*pool)->allocator().AllocatedExtents().size(), 1u);
}

TEST(ExtentAllocator, FreeUnreachableFreesExactlyTheUnlistedExtents) {
  testutil::TempPool temp("reach");
  auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  std::vector<uint64_t> offsets;
  for (int i = 0; i < 6; ++i) {
    offsets.push_back(*(*pool)->allocator().Allocate(4096, format::kExtentKindOther, 1));
  }
  auto freed = (*pool)->allocator().FreeUnreachable({offsets[0], offsets[3]});
  ASSERT_TRUE(freed.ok());
  EXPECT_EQ(*freed, 4u);
  auto left = (*pool)->allocator().AllocatedExtents();
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].offset, offsets[0]);
  EXPECT_EQ(left[1].offset, offsets[3]);
}

TEST(ExtentAllocator, FreeOfUnknownOffsetIsInvalidArgument) {
  testutil::TempPool temp("unknown");
  auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  EXPECT_TRUE((*pool)->allocator().Free(12345).IsInvalidArgument());
}

TEST(ExtentAllocator, CorruptEntryStateIsReportedWithItsOffset) {
  testutil::TempPool temp("badentry");
  {
    auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    ASSERT_TRUE((*pool)->allocator().Allocate(4096, format::kExtentKindOther, 1).ok());
  }
  testutil::WriteBytes<uint64_t>(temp.path(), format::kExtentTableOffset + 24, 7);
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.status().IsCorruption());
  EXPECT_NE(pool.status().message().find("extent table entry 0 (offset 0x3018)"), std::string::npos)
      << pool.status().ToString();
}

TEST(ExtentAllocator, RandomAllocFreeNeverOverlaps) {
  testutil::TempPool temp("random");
  auto pool = Pool::Create(temp.path(), 32 << 20, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  std::mt19937_64 random(7);
  std::vector<uint64_t> live;
  for (int step = 0; step < 2000; ++step) {
    if (live.empty() || random() % 3 != 0) {
      auto offset =
          (*pool)->allocator().Allocate(4096 * (1 + random() % 16), format::kExtentKindOther, 1);
      if (offset.ok())
        live.push_back(*offset);
      else
        ASSERT_TRUE(offset.status().IsPoolFull());
    } else {
      size_t pick = random() % live.size();
      ASSERT_TRUE((*pool)->allocator().Free(live[pick]).ok());
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  auto extents = (*pool)->allocator().AllocatedExtents();
  ASSERT_EQ(extents.size(), live.size());
  for (size_t i = 1; i < extents.size(); ++i) {
    ASSERT_LE(extents[i - 1].offset + extents[i - 1].length, extents[i].offset);
  }
}

}  // namespace
}  // namespace gpkv::pm
