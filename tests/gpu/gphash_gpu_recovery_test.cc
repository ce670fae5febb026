// Open-time recovery of gpu::GphashGpu on pools crafted byte by byte with the
// format/ functions: reserved (INSERT) slots cleared, duplicate keys resolved
// by the winner rule, an interrupted resize finished. Device tests (label
// `gpu`); skipped when no CUDA device is usable.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "format/gphash_layout.h"
#include "format/hash.h"
#include "gpu/gphash_gpu.h"
#include "gpu/gphash_root.h"
#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "test_util.h"

namespace gpkv::gpu {
namespace {

using format::KeyHash;

#define SKIP_WITHOUT_DEVICE()                            \
  do {                                                   \
    Status usable = GphashGpu::DeviceUsable();           \
    if (!usable.ok()) GTEST_SKIP() << usable.ToString(); \
  } while (0)

// A slot of a table as the host sees it through the pool mapping.
struct HostSlot {
  uint8_t* bucket;
  uint32_t slot;
  uint32_t level;
  uint64_t bucket_index;
  uint64_t* word() const { return reinterpret_cast<uint64_t*>(bucket + slot * 8); }
};

class HostTable {
 public:
  HostTable(pm::Pool& pool, uint64_t root) : pool_(pool) {
    auto snapshot = ReadGphashRoot(pool, "t", root);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    snapshot_ = *snapshot;
  }
  const GphashRootSnapshot& snapshot() const { return snapshot_; }
  KeyHash Hash(uint64_t key) const {
    return format::HashKey(reinterpret_cast<const uint8_t*>(&key), 8, snapshot_.hash_seed);
  }
  // Every candidate slot of `key` in the current LevelSet, in probe order.
  std::vector<HostSlot> Candidates(uint64_t key) const {
    std::vector<HostSlot> out;
    KeyHash hash = Hash(key);
    const format::LevelSet& levels = snapshot_.level_set;
    for (uint32_t level = 0; level < levels.level_count; ++level) {
      for (uint32_t location = 0; location < snapshot_.hash_locations; ++location) {
        uint64_t bucket = format::BucketIndex(hash, location, levels.levels[level].bucket_count);
        uint8_t* at =
            pool_.At<uint8_t>(levels.levels[level].offset + bucket * snapshot_.bucket_bytes);
        for (uint32_t slot = 0; slot < snapshot_.slots_per_bucket; ++slot) {
          out.push_back({at, slot, level, bucket});
        }
      }
    }
    return out;
  }
  uint64_t KeyOf(const HostSlot& s) const {
    uint64_t key;
    std::memcpy(&key, s.bucket + format::KeyOffset(snapshot_.slots_per_bucket, 8, s.slot), 8);
    return key;
  }
  uint64_t* ValueWordOf(const HostSlot& s) const {
    return reinterpret_cast<uint64_t*>(
        s.bucket + format::ValueWordOffset(snapshot_.slots_per_bucket, 8, s.slot));
  }
  // Writes key -> value VALID into an EMPTY slot.
  void Place(const HostSlot& s, uint64_t key, uint64_t value) const {
    std::memcpy(s.bucket + format::KeyOffset(snapshot_.slots_per_bucket, 8, s.slot), &key, 8);
    *ValueWordOf(s) = value;
    uint64_t reserved = format::ReserveWord(*s.word());
    *s.word() = format::PublishWord(reserved, format::FingerprintOfHash(Hash(key)));
  }

 private:
  pm::Pool& pool_;
  GphashRootSnapshot snapshot_;
};

struct Fixture {
  testutil::TempPool temp;
  std::unique_ptr<pm::Pool> pool;
  uint64_t root = 0;
  explicit Fixture(const std::string& tag, uint64_t expected_keys) : temp(tag) {
    auto created = pm::Pool::Create(temp.path(), 64 << 20, SyncMode::kBatch);
    EXPECT_TRUE(created.ok());
    pool = std::move(created.value());
    TableOptions options;
    options.expected_keys = expected_keys;
    auto made = GphashGpu::Create(*pool, 1, options);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    root = *made;
  }
  Result<std::unique_ptr<GphashGpu>> Open(recovery::Report* report) {
    return GphashGpu::Open(*pool, "t", root, GpuTableOptions{}, report);
  }
};

TEST(GphashGpuRecovery, ReservedSlotIsClearedAndDuplicateResolvedByWinnerRule) {
  SKIP_WITHOUT_DEVICE();
  Fixture fixture("recovery-dup", 1000);
  const uint64_t key = 0x1234567890abcdefULL;
  const uint64_t value = 111;
  {
    auto table = fixture.Open(nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_TRUE((*table)
                    ->Put(reinterpret_cast<const uint8_t*>(&key),
                          reinterpret_cast<const uint8_t*>(&value), 1)
                    .ok());
  }
  HostTable host(*fixture.pool, fixture.root);
  std::vector<HostSlot> candidates = host.Candidates(key);
  int holder = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (format::SlotStateOf(*candidates[i].word()) == format::kSlotValid &&
        host.KeyOf(candidates[i]) == key) {
      holder = static_cast<int>(i);
    }
  }
  ASSERT_GE(holder, 0);
  // A second copy with another value in the last EMPTY candidate (the bottom
  // level: it loses to a copy above, or wins over a later slot of the same
  // level), and a stray reservation in another EMPTY candidate.
  int copy = -1, reservation = -1;
  for (int i = static_cast<int>(candidates.size()) - 1; i >= 0; --i) {
    if (format::SlotStateOf(*candidates[i].word()) != format::kSlotEmpty) continue;
    if (candidates[i].bucket == candidates[holder].bucket &&
        candidates[i].slot == candidates[holder].slot) {
      continue;
    }
    if (copy < 0) {
      copy = i;
    } else if (reservation < 0 && candidates[i].word() != candidates[copy].word()) {
      reservation = i;
    }
  }
  ASSERT_GE(copy, 0);
  ASSERT_GE(reservation, 0);
  const uint64_t other_value = 222;
  host.Place(candidates[copy], key, other_value);
  *candidates[reservation].word() = format::ReserveWord(*candidates[reservation].word());
  ASSERT_TRUE(fixture.pool->Sync().ok());

  auto rank = [](const HostSlot& s) {
    return std::make_tuple(s.level, s.bucket_index, s.slot);  // smaller wins (level 0 = newest)
  };
  uint64_t expected = rank(candidates[holder]) < rank(candidates[copy]) ? value : other_value;

  recovery::Report report;
  auto table = fixture.Open(&report);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(report.slots_cleared, 1u);
  EXPECT_EQ(report.duplicates_removed, 1u);
  uint64_t got = 0;
  uint8_t found = 0;
  ASSERT_TRUE(
      (*table)
          ->Get(reinterpret_cast<const uint8_t*>(&key), reinterpret_cast<uint8_t*>(&got), &found, 1)
          .ok());
  EXPECT_EQ(found, 1);
  EXPECT_EQ(got, expected);
  EXPECT_EQ((*table)->Stats().keys, 1u);
  EXPECT_EQ(format::SlotStateOf(*candidates[reservation].word()), format::kSlotEmpty);
}

TEST(GphashGpuRecovery, InterruptedResizeIsFinishedAtOpen) {
  SKIP_WITHOUT_DEVICE();
  Fixture fixture("recovery-resize", 4000);
  std::mt19937_64 rng(5);
  const size_t count = 4500;  // fills the top level: some keys sit in the bottom one
  std::vector<uint64_t> keys(count), values(count);
  for (size_t i = 0; i < count; ++i) {
    keys[i] = rng();
    values[i] = rng();
  }
  {
    auto table = fixture.Open(nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_TRUE((*table)
                    ->Put(reinterpret_cast<const uint8_t*>(keys.data()),
                          reinterpret_cast<const uint8_t*>(values.data()), count)
                    .ok());
  }
  // Crash after the first step of a resize: a new top level published with
  // the resizing flag, and some keys of the bottom level already copied up.
  pm::Pool& pool = *fixture.pool;
  HostTable before(pool, fixture.root);
  const uint64_t resizes_before = pool.At<format::GphashRoot>(fixture.root)->resizes;
  format::LevelSet current = before.snapshot().level_set;
  uint64_t buckets = current.levels[0].bucket_count * 2;
  auto top = pool.allocator().Allocate(buckets * before.snapshot().bucket_bytes,
                                       format::kExtentKindBucketLevel, 1);
  ASSERT_TRUE(top.ok());
  format::LevelSet next = current;
  for (uint32_t i = current.level_count; i > 0; --i) next.levels[i] = current.levels[i - 1];
  next.levels[0] = {*top, buckets, current.next_level_id};
  next.level_count = current.level_count + 1;
  next.next_level_id = current.next_level_id + 1;
  next.flags = format::kLevelSetResizing;
  ASSERT_TRUE(PublishLevelSet(pool, before.snapshot(), next).ok());
  HostTable during(pool, fixture.root);
  size_t copied = 0;
  for (size_t i = 0; i < count && copied < 20; ++i) {
    std::vector<HostSlot> candidates = during.Candidates(keys[i]);
    const uint32_t bottom = next.level_count - 1;
    bool in_bottom = false;
    for (const HostSlot& s : candidates) {
      if (s.level == bottom && format::SlotStateOf(*s.word()) == format::kSlotValid &&
          during.KeyOf(s) == keys[i]) {
        in_bottom = true;
      }
    }
    if (!in_bottom) continue;
    for (const HostSlot& s : candidates) {  // an EMPTY slot of the new top (level 0)
      if (s.level == 0 && format::SlotStateOf(*s.word()) == format::kSlotEmpty) {
        during.Place(s, keys[i], values[i]);
        ++copied;
        break;
      }
    }
  }
  ASSERT_GT(copied, 0u);
  ASSERT_TRUE(pool.Sync().ok());

  recovery::Report report;
  auto table = fixture.Open(&report);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(report.duplicates_removed, copied);
  TableStats stats = (*table)->Stats();
  EXPECT_FALSE(stats.resizing);
  EXPECT_EQ(stats.levels, 2u);
  EXPECT_EQ(stats.top_buckets, buckets);
  EXPECT_EQ(stats.resizes, resizes_before + 1);
  EXPECT_EQ(stats.keys, count);
  std::vector<uint64_t> got(count);
  std::vector<uint8_t> found(count);
  ASSERT_TRUE((*table)
                  ->Get(reinterpret_cast<const uint8_t*>(keys.data()),
                        reinterpret_cast<uint8_t*>(got.data()), found.data(), count)
                  .ok());
  EXPECT_EQ(got, values);
  EXPECT_EQ(found, std::vector<uint8_t>(count, 1));
}

TEST(GphashGpuRecovery, CorruptRootIsCorruptionNamingTheTable) {
  SKIP_WITHOUT_DEVICE();
  Fixture fixture("recovery-root", 1000);
  testutil::FlipByte(fixture.temp.path(), fixture.root + 16);  // key_size: checksum fails
  auto reopened = pm::Pool::Open(fixture.temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(reopened.ok());
  fixture.pool = std::move(reopened.value());
  auto table = fixture.Open(nullptr);
  ASSERT_TRUE(table.status().IsCorruption()) << table.status().ToString();
  EXPECT_NE(table.status().message().find("table 't'"), std::string::npos);
}

}  // namespace
}  // namespace gpkv::gpu
