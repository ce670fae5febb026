// gpu::SlabAlloc on the device: allocations by many concurrent warps (in
// the slab hash's pattern, TEST_AllocateMany) hand out each slab once,
// inside the allocator and at distinct memory; freed slabs come back; a
// full allocator fails with kNullSlab until it grows; Reserve and Create
// size it as asked or fail with OutOfDeviceMemory.
#include "gpu/slab_alloc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "gpu/device_memory.h"

namespace gpkv::gpu {
namespace {

constexpr uint64_t kSlabsPerSuperBlock = uint64_t{kSlabsPerBlock} * kBlocksPerSuperBlock;

struct DecodedAddress {
  uint32_t super_block;
  uint32_t block;
  uint32_t slab;
};

DecodedAddress Decode(uint32_t address) {
  return DecodedAddress{address >> (kSlabAddressSlabBits + kSlabAddressBlockBits),
                        (address >> kSlabAddressSlabBits) & ((1u << kSlabAddressBlockBits) - 1),
                        address & ((1u << kSlabAddressSlabBits) - 1)};
}

// The addresses that are not kNullSlab.
std::vector<uint32_t> Successes(const std::vector<uint32_t>& addresses) {
  std::vector<uint32_t> successes;
  for (uint32_t address : addresses) {
    if (address != kNullSlab) successes.push_back(address);
  }
  return successes;
}

// Every address names a slab of the allocator's `super_blocks` super
// blocks, and none appears twice.
void ExpectDistinctAndInBounds(const std::vector<uint32_t>& addresses, uint32_t super_blocks) {
  std::vector<uint32_t> sorted = addresses;
  std::sort(sorted.begin(), sorted.end());
  const auto duplicate = std::adjacent_find(sorted.begin(), sorted.end());
  EXPECT_EQ(duplicate, sorted.end())
      << "slab " << (duplicate == sorted.end() ? 0 : *duplicate) << " handed out twice";
  uint64_t out_of_bounds = 0;
  for (uint32_t address : sorted) {
    if (address == kNullSlab || Decode(address).super_block >= super_blocks) ++out_of_bounds;
  }
  EXPECT_EQ(out_of_bounds, 0u) << "addresses outside " << super_blocks << " super blocks";
}

class SlabAllocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status usable = DeviceUsable();
    if (!usable.ok()) GTEST_SKIP() << usable.ToString();
    auto stream = DeviceStream::Create();
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    stream_ = std::move(stream.value());
  }

  std::unique_ptr<SlabAlloc> Create(uint32_t super_blocks) {
    auto alloc = SlabAlloc::Create(super_blocks);
    EXPECT_TRUE(alloc.ok()) << alloc.status().ToString();
    return alloc.ok() ? std::move(alloc.value()) : nullptr;
  }

  std::vector<uint32_t> Allocate(SlabAlloc* alloc, uint64_t count, double* seconds = nullptr) {
    std::vector<uint32_t> addresses;
    double kernel_seconds = 0;
    Status status = alloc->TEST_AllocateMany(count, &addresses, &kernel_seconds, stream_.get());
    EXPECT_TRUE(status.ok()) << status.ToString();
    if (seconds != nullptr) *seconds = kernel_seconds;
    return addresses;
  }

  uint64_t InUse(const SlabAlloc& alloc) {
    Result<uint64_t> in_use = alloc.CountInUse(stream_.get());
    EXPECT_TRUE(in_use.ok()) << in_use.status().ToString();
    return in_use.ok() ? *in_use : ~uint64_t{0};
  }

  DeviceStream stream_;
};

TEST_F(SlabAllocTest, ConcurrentWarpsNeverHandOutASlabTwice) {
  auto alloc = Create(2);
  ASSERT_NE(alloc, nullptr);
  // ~300 blocks' worth of slabs from ~9,400 warps, to 57% fill: every
  // allocation finds a slab within its re-selections.
  constexpr uint64_t kCount = 300000;
  std::vector<uint32_t> addresses = Allocate(alloc.get(), kCount);
  ASSERT_EQ(addresses.size(), kCount);
  EXPECT_EQ(Successes(addresses).size(), kCount);
  ExpectDistinctAndInBounds(addresses, alloc->super_blocks());
  EXPECT_EQ(InUse(*alloc), kCount);

  // A second launch (another seed) hands out none of the first one's slabs.
  std::vector<uint32_t> more = Allocate(alloc.get(), 100000);
  EXPECT_EQ(Successes(more).size(), 100000u);
  addresses.insert(addresses.end(), more.begin(), more.end());
  ExpectDistinctAndInBounds(addresses, alloc->super_blocks());
  EXPECT_EQ(InUse(*alloc), addresses.size());
}

TEST_F(SlabAllocTest, FreedSlabsAreReused) {
  auto alloc = Create(1);
  ASSERT_NE(alloc, nullptr);
  // 76% of the one super block, four times over: only reuse makes room.
  constexpr uint64_t kCount = 200000;
  for (int round = 0; round < 4; ++round) {
    std::vector<uint32_t> addresses = Allocate(alloc.get(), kCount);
    EXPECT_EQ(Successes(addresses).size(), kCount) << "round " << round;
    ExpectDistinctAndInBounds(Successes(addresses), 1);
    EXPECT_EQ(InUse(*alloc), Successes(addresses).size()) << "round " << round;
    ASSERT_TRUE(alloc->TEST_FreeMany(addresses, stream_.get()).ok());
    EXPECT_EQ(InUse(*alloc), 0u) << "round " << round;
  }
  EXPECT_EQ(alloc->super_blocks(), 1u);
}

TEST_F(SlabAllocTest, HalfFreedSlabsAreReusedWithoutTouchingTheRest) {
  auto alloc = Create(1);
  ASSERT_NE(alloc, nullptr);
  constexpr uint64_t kCount = 160000;
  std::vector<uint32_t> first = Allocate(alloc.get(), kCount);
  ASSERT_EQ(Successes(first).size(), kCount);
  std::vector<uint32_t> kept;
  std::vector<uint32_t> freed;
  for (uint64_t i = 0; i < first.size(); ++i) (i % 2 == 0 ? kept : freed).push_back(first[i]);
  ASSERT_TRUE(alloc->TEST_FreeMany(freed, stream_.get()).ok());
  EXPECT_EQ(InUse(*alloc), kept.size());

  // 80,000 kept + 120,000 new = 76% of the super block.
  std::vector<uint32_t> second = Allocate(alloc.get(), 120000);
  EXPECT_EQ(Successes(second).size(), 120000u);
  std::vector<uint32_t> all = kept;
  all.insert(all.end(), second.begin(), second.end());
  ExpectDistinctAndInBounds(all, 1);
  EXPECT_EQ(InUse(*alloc), all.size());
}

TEST_F(SlabAllocTest, FullAllocatorFailsWithNullSlabUntilItGrows) {
  auto alloc = Create(1);
  ASSERT_NE(alloc, nullptr);
  const uint64_t capacity = alloc->capacity_slabs();
  ASSERT_EQ(capacity, kSlabsPerSuperBlock);
  std::vector<uint32_t> addresses = Allocate(alloc.get(), capacity + capacity / 4);
  std::vector<uint32_t> successes = Successes(addresses);
  const uint64_t failed = addresses.size() - successes.size();
  EXPECT_GE(failed, capacity / 4);
  EXPECT_LE(successes.size(), capacity);
  ExpectDistinctAndInBounds(successes, 1);
  EXPECT_EQ(InUse(*alloc), successes.size());

  ASSERT_TRUE(alloc->Grow(1).ok());
  EXPECT_EQ(alloc->super_blocks(), 2u);
  EXPECT_EQ(alloc->capacity_slabs(), 2 * kSlabsPerSuperBlock);
  // The slabs handed out before Grow stay in use; the failed allocations
  // now succeed in the new super block.
  EXPECT_EQ(InUse(*alloc), successes.size());
  std::vector<uint32_t> retried = Allocate(alloc.get(), failed);
  EXPECT_EQ(Successes(retried).size(), failed);
  successes.insert(successes.end(), retried.begin(), retried.end());
  ExpectDistinctAndInBounds(successes, 2);
  EXPECT_EQ(InUse(*alloc), successes.size());
}

TEST_F(SlabAllocTest, ResetFreesEverySlab) {
  auto alloc = Create(1);
  ASSERT_NE(alloc, nullptr);
  std::vector<uint32_t> addresses = Allocate(alloc.get(), 100000);
  EXPECT_EQ(InUse(*alloc), Successes(addresses).size());
  ASSERT_TRUE(alloc->Reset(stream_.get()).ok());
  EXPECT_EQ(InUse(*alloc), 0u);
  std::vector<uint32_t> again = Allocate(alloc.get(), 200000);
  EXPECT_EQ(Successes(again).size(), 200000u);
  ExpectDistinctAndInBounds(again, 1);
}

TEST_F(SlabAllocTest, ReserveGrowsToTheAskedFill) {
  auto alloc = Create(1);
  ASSERT_NE(alloc, nullptr);
  constexpr uint64_t kInUse = 100000;
  std::vector<uint32_t> addresses = Allocate(alloc.get(), kInUse);
  ASSERT_EQ(Successes(addresses).size(), kInUse);

  // Room for as many again at fill <= 0.8 fits in the one super block.
  ASSERT_TRUE(alloc->Reserve(kInUse, 0.8, stream_.get()).ok());
  EXPECT_EQ(alloc->super_blocks(), 1u);

  // 600,000 in use at fill <= 0.8 needs 750,000 slabs: 3 super blocks.
  constexpr uint64_t kFree = 500000;
  ASSERT_TRUE(alloc->Reserve(kFree, 0.8, stream_.get()).ok());
  EXPECT_EQ(alloc->super_blocks(), 3u);
  EXPECT_GE(alloc->capacity_slabs() * 0.8, static_cast<double>(kInUse + kFree));
  EXPECT_LT((alloc->capacity_slabs() - kSlabsPerSuperBlock) * 0.8,
            static_cast<double>(kInUse + kFree));
  EXPECT_EQ(InUse(*alloc), kInUse);

  // The reserved slabs can be allocated.
  std::vector<uint32_t> reserved = Allocate(alloc.get(), kFree);
  EXPECT_EQ(Successes(reserved).size(), kFree);
  addresses.insert(addresses.end(), reserved.begin(), reserved.end());
  ExpectDistinctAndInBounds(addresses, 3);

  EXPECT_TRUE(alloc->Reserve(1, 0.0, stream_.get()).IsInvalidArgument());
  EXPECT_TRUE(alloc->Reserve(1, 1.5, stream_.get()).IsInvalidArgument());
}

TEST_F(SlabAllocTest, AbsurdSizesFailWithoutCrashing) {
  // 512 GiB of slabs: more than any device has.
  auto huge = SlabAlloc::Create(kMaxSuperBlocks);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), Code::kOutOfDeviceMemory) << huge.status().ToString();
  EXPECT_NE(huge.status().message().find("bytes"), std::string::npos) << huge.status().ToString();

  EXPECT_TRUE(SlabAlloc::Create(0).status().IsInvalidArgument());
  EXPECT_TRUE(SlabAlloc::Create(kMaxSuperBlocks + 1).status().IsInvalidArgument());

  // A failed Grow changes nothing: the allocator still works.
  auto alloc = Create(1);
  ASSERT_NE(alloc, nullptr);
  const uint64_t bytes = alloc->device_bytes();
  Status grow = alloc->Grow(kMaxSuperBlocks - 1);
  EXPECT_EQ(grow.code(), Code::kOutOfDeviceMemory) << grow.ToString();
  EXPECT_TRUE(alloc->Grow(kMaxSuperBlocks).IsInvalidArgument());
  EXPECT_EQ(alloc->super_blocks(), 1u);
  EXPECT_EQ(alloc->device_bytes(), bytes);
  std::vector<uint32_t> addresses = Allocate(alloc.get(), 1000);
  EXPECT_EQ(Successes(addresses).size(), 1000u);
}

TEST_F(SlabAllocTest, AddressesDecodeToDistinctMemory) {
  auto alloc = Create(3);
  ASSERT_NE(alloc, nullptr);
  std::vector<uint32_t> addresses = Successes(Allocate(alloc.get(), 400000));
  ASSERT_EQ(addresses.size(), 400000u);
  std::vector<uint64_t> pointers;
  ASSERT_TRUE(alloc->TEST_SlabPointers(addresses, &pointers, stream_.get()).ok());
  ASSERT_EQ(pointers.size(), addresses.size());

  // Slabs of one super block lie at the offsets their address bits name;
  // slabs of distinct super blocks in distinct allocations.
  std::vector<uint64_t> base(alloc->super_blocks(), 0);
  uint64_t misplaced = 0;
  for (size_t i = 0; i < addresses.size(); ++i) {
    const DecodedAddress decoded = Decode(addresses[i]);
    ASSERT_LT(decoded.super_block, alloc->super_blocks());
    const uint64_t offset =
        (uint64_t{decoded.block} * kSlabsPerBlock + decoded.slab) * uint64_t{kSlabBytes};
    if (pointers[i] % kSlabBytes != 0) ++misplaced;
    const uint64_t slab_base = pointers[i] - offset;
    if (base[decoded.super_block] == 0) base[decoded.super_block] = slab_base;
    if (slab_base != base[decoded.super_block]) ++misplaced;
  }
  EXPECT_EQ(misplaced, 0u);

  std::vector<uint64_t> sorted = pointers;
  std::sort(sorted.begin(), sorted.end());
  uint64_t overlapping = 0;
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] < sorted[i - 1] + kSlabBytes) ++overlapping;
  }
  EXPECT_EQ(overlapping, 0u);
  // The super blocks' slab areas are disjoint.
  std::vector<uint64_t> bases = base;
  std::sort(bases.begin(), bases.end());
  for (size_t i = 1; i < bases.size(); ++i) {
    if (bases[i - 1] == 0) continue;  // a super block no allocation landed in
    EXPECT_GE(bases[i], bases[i - 1] + kSuperBlockBytes);
  }
}

TEST_F(SlabAllocTest, DeviceBytesCountTheSuperBlocks) {
  auto alloc = Create(2);
  ASSERT_NE(alloc, nullptr);
  EXPECT_GE(alloc->device_bytes(), 2 * kSuperBlockBytes);
  EXPECT_LT(alloc->device_bytes(), 2 * kSuperBlockBytes + (uint64_t{1} << 20));
  const uint64_t before = alloc->device_bytes();
  ASSERT_TRUE(alloc->Grow(1).ok());
  EXPECT_GE(alloc->device_bytes(), before + kSuperBlockBytes);
}

// Prints the allocation rate (no assertion on it: a test does not time).
// 2^24 allocations in the slab hash's pattern into 128 super blocks
// (4 GiB, filled to 50%) and 86 (filled to 74%), after a warm-up launch; the result must still
// be correct.
TEST_F(SlabAllocTest, AllocationRateOf16MAllocations) {
  auto alloc = Create(128);
  ASSERT_NE(alloc, nullptr);
  constexpr uint64_t kCount = uint64_t{1} << 24;
  Allocate(alloc.get(), kCount);  // warm-up
  for (double fill_super_blocks : {128.0, 86.0}) {
    std::unique_ptr<SlabAlloc> sized =
        fill_super_blocks == 128.0 ? nullptr : Create(static_cast<uint32_t>(fill_super_blocks));
    SlabAlloc* target = sized != nullptr ? sized.get() : alloc.get();
    for (int run = 0; run < 3; ++run) {
      ASSERT_TRUE(target->Reset(stream_.get()).ok());
      double seconds = 0;
      std::vector<uint32_t> addresses = Allocate(target, kCount, &seconds);
      const std::vector<uint32_t> successes = Successes(addresses);
      EXPECT_EQ(successes.size(), kCount);
      if (run == 0) ExpectDistinctAndInBounds(successes, target->super_blocks());
      std::printf(
          "SlabAlloc: %llu allocations into %u super blocks (fill %.0f%%): %.3f ms, %.2f G "
          "allocations/s\n",
          static_cast<unsigned long long>(kCount), target->super_blocks(),
          100.0 * kCount / target->capacity_slabs(), seconds * 1e3, kCount / seconds / 1e9);
    }
  }
}

}  // namespace
}  // namespace gpkv::gpu
