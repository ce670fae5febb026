// Open-time recovery of gpu::GpuBackend on pools crafted byte by byte with the
// format/ functions: reserved (INSERT) slots cleared, duplicate keys resolved
// by the winner rule, an interrupted resize finished; with inline values and
// with value cells (value_size > 8). Device tests (label `gpu`); skipped when
// no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "format/hash.h"
#include "gpu_test_util.h"
#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "tables/gphash/check.h"
#include "tables/gphash/gpu/backend.h"
#include "tables/gphash/gpu/root.h"
#include "tables/gphash/layout.h"
#include "test_util.h"

namespace gpkv::gphash::gpu {
namespace {

using format::KeyHash;

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
    const gphash::LevelSet& levels = snapshot_.level_set;
    const uint32_t count = gphash::CandidateSlotCount(levels.level_count, snapshot_.hash_locations,
                                                      snapshot_.slots_per_bucket);
    for (uint32_t candidate = 0; candidate < count; ++candidate) {
      const gphash::CandidateSlot slot =
          gphash::CandidateSlotAt(candidate, snapshot_.hash_locations, snapshot_.slots_per_bucket);
      const gphash::LevelDesc& level = levels.levels[slot.level];
      const uint64_t bucket = gphash::BucketIndex(hash, slot.location, level.bucket_count);
      out.push_back({pool_.At<uint8_t>(level.offset + bucket * snapshot_.bucket_bytes), slot.slot,
                     slot.level, bucket});
    }
    return out;
  }
  uint64_t KeyOf(const HostSlot& s) const {
    uint64_t key;
    std::memcpy(&key, s.bucket + gphash::KeyOffset(snapshot_.slots_per_bucket, 8, s.slot), 8);
    return key;
  }
  uint64_t* ValueWordOf(const HostSlot& s) const {
    return reinterpret_cast<uint64_t*>(
        s.bucket + gphash::ValueWordOffset(snapshot_.slots_per_bucket, 8, s.slot));
  }
  // Writes key -> value VALID into an EMPTY slot (value: the value word, a
  // cell's offset in a cell table).
  void Place(const HostSlot& s, uint64_t key, uint64_t value) const {
    std::memcpy(s.bucket + gphash::KeyOffset(snapshot_.slots_per_bucket, 8, s.slot), &key, 8);
    *ValueWordOf(s) = value;
    uint64_t reserved = gphash::ReserveWord(*s.word());
    *s.word() = gphash::PublishWord(reserved, gphash::FingerprintOfHash(Hash(key)));
  }
  // The slot holding `key` VALID, if any.
  const HostSlot* Holder(const std::vector<HostSlot>& candidates, uint64_t key) const {
    for (const HostSlot& s : candidates) {
      if (gphash::SlotStateOf(*s.word()) == gphash::kSlotValid && KeyOf(s) == key) return &s;
    }
    return nullptr;
  }
  // Cell table: pool offsets of the cells no VALID or INSERT slot of the
  // current LevelSet references, the newest chunk's last cell first.
  std::vector<uint64_t> UnreferencedCells() const {
    const auto* root = pool_.At<gphash::GphashRoot>(snapshot_.root_offset);
    std::unordered_set<uint64_t> referenced;
    const gphash::LevelSet& levels = snapshot_.level_set;
    for (uint32_t level = 0; level < levels.level_count; ++level) {
      for (uint64_t bucket = 0; bucket < levels.levels[level].bucket_count; ++bucket) {
        uint8_t* at =
            pool_.At<uint8_t>(levels.levels[level].offset + bucket * snapshot_.bucket_bytes);
        for (uint32_t slot = 0; slot < snapshot_.slots_per_bucket; ++slot) {
          HostSlot s{at, slot, level, bucket};
          if (gphash::SlotStateOf(*s.word()) != gphash::kSlotEmpty) {
            referenced.insert(*ValueWordOf(s));
          }
        }
      }
    }
    std::vector<uint64_t> cells;
    for (uint64_t chunk = root->value_chunk_count; chunk-- > 0;) {
      for (uint64_t cell = root->cells_per_chunk; cell-- > 0;) {
        const uint64_t offset = root->value_chunks[chunk] + cell * root->cell_size;
        if (referenced.count(offset) == 0) cells.push_back(offset);
      }
    }
    return cells;
  }

 private:
  pm::Pool& pool_;
  GphashRootSnapshot snapshot_;
};

struct Fixture {
  testutil::TempPool temp;
  std::unique_ptr<pm::Pool> pool;
  uint64_t root = 0;
  explicit Fixture(const std::string& tag, uint64_t expected_keys, uint32_t value_size = 8)
      : temp(tag) {
    auto created = pm::Pool::Create(temp.path(), 64 << 20, SyncMode::kBatch);
    EXPECT_TRUE(created.ok());
    pool = std::move(created.value());
    TableOptions options;
    options.expected_keys = expected_keys;
    options.value_size = value_size;
    auto made = GpuBackend::Create(*pool, 1, options);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    root = *made;
  }
  Result<std::unique_ptr<GpuBackend>> Open(recovery::Report* report) {
    return GpuBackend::Open(*pool, "t", root, GpuTableOptions{}, report);
  }
};

// Expected contents of a table with 8-byte keys: key -> value bytes.
using Values = std::map<uint64_t, std::vector<uint8_t>>;

std::vector<uint8_t> RandomValue(std::mt19937_64& rng, uint32_t value_size) {
  std::vector<uint8_t> value(value_size);
  for (uint8_t& byte : value) byte = static_cast<uint8_t>(rng());
  return value;
}

// Puts keys with new random values and records them in `values`.
Status PutRandom(GpuBackend& table, std::mt19937_64& rng, const std::vector<uint64_t>& keys,
                 uint32_t value_size, Values* values) {
  std::vector<uint8_t> bytes;
  for (uint64_t key : keys) {
    std::vector<uint8_t> value = RandomValue(rng, value_size);
    bytes.insert(bytes.end(), value.begin(), value.end());
    (*values)[key] = value;
  }
  return table.Put(reinterpret_cast<const uint8_t*>(keys.data()), bytes.data(), keys.size());
}

// Every key of `values` answers its full value, every key of `absent` is not
// found, and the table holds no more keys.
::testing::AssertionResult Answers(GpuBackend& table, const Values& values,
                                   const std::vector<uint64_t>& absent, uint32_t value_size) {
  std::vector<uint64_t> keys;
  for (const auto& [key, value] : values) keys.push_back(key);
  keys.insert(keys.end(), absent.begin(), absent.end());
  std::vector<uint8_t> got(keys.size() * value_size, 0xee), found(keys.size(), 7);
  Status status = table.Get(reinterpret_cast<const uint8_t*>(keys.data()), got.data(), found.data(),
                            keys.size());
  if (!status.ok()) return ::testing::AssertionFailure() << "Get: " << status.ToString();
  size_t i = 0;
  for (const auto& [key, value] : values) {
    if (found[i] != 1) return ::testing::AssertionFailure() << "key " << key << " not found";
    if (std::memcmp(&got[i * value_size], value.data(), value_size) != 0) {
      return ::testing::AssertionFailure() << "key " << key << ": wrong value bytes";
    }
    ++i;
  }
  for (; i < keys.size(); ++i) {
    if (found[i] != 0) return ::testing::AssertionFailure() << "key " << keys[i] << " found";
  }
  if (table.Stats().keys != values.size()) {
    return ::testing::AssertionFailure()
           << table.Stats().keys << " keys, expected " << values.size();
  }
  return ::testing::AssertionSuccess();
}

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
    if (gphash::SlotStateOf(*candidates[i].word()) == gphash::kSlotValid &&
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
    if (gphash::SlotStateOf(*candidates[i].word()) != gphash::kSlotEmpty) continue;
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
  *candidates[reservation].word() = gphash::ReserveWord(*candidates[reservation].word());
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
  EXPECT_EQ(gphash::SlotStateOf(*candidates[reservation].word()), gphash::kSlotEmpty);
}

// A crash after the first step of a resize of a table of `value_size`-byte
// values: the new top level published with the resizing flag, some keys of the
// bottom level already copied up (key and value word: in a cell table both
// copies reference one cell). Open finishes the resize; every key keeps its
// value (the shared cells stay with the winners: later puts, which take free
// cells, must not overwrite them); verify finds nothing.
void ExpectInterruptedResizeFinishedAtOpen(const std::string& tag, uint32_t value_size) {
  Fixture fixture(tag, 4000, value_size);
  std::mt19937_64 rng(5);
  const size_t count = 4500;  // fills the top level: some keys sit in the bottom one
  std::vector<uint64_t> keys(count);
  std::vector<uint8_t> values(count * value_size);
  for (size_t i = 0; i < count; ++i) {
    keys[i] = rng();
    for (uint32_t at = 0; at < value_size; at += 8) {
      const uint64_t word = rng();
      std::memcpy(&values[i * value_size + at], &word, std::min<uint32_t>(8, value_size - at));
    }
  }
  {
    auto table = fixture.Open(nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_TRUE(
        (*table)->Put(reinterpret_cast<const uint8_t*>(keys.data()), values.data(), count).ok());
  }
  pm::Pool& pool = *fixture.pool;
  HostTable before(pool, fixture.root);
  const uint64_t resizes_before = pool.At<gphash::GphashRoot>(fixture.root)->resizes;
  gphash::LevelSet current = before.snapshot().level_set;
  uint64_t buckets = current.levels[0].bucket_count * 2;
  auto top = pool.allocator().Allocate(buckets * before.snapshot().bucket_bytes,
                                       format::kExtentKindBucketLevel, 1);
  ASSERT_TRUE(top.ok());
  gphash::LevelSet next = current;
  for (uint32_t i = current.level_count; i > 0; --i) next.levels[i] = current.levels[i - 1];
  next.levels[0] = {*top, buckets, current.next_level_id};
  next.level_count = current.level_count + 1;
  next.next_level_id = current.next_level_id + 1;
  next.flags = gphash::kLevelSetResizing;
  ASSERT_TRUE(PublishLevelSet(pool, before.snapshot(), next).ok());
  HostTable during(pool, fixture.root);
  size_t copied = 0;
  std::vector<size_t> copied_keys;
  for (size_t i = 0; i < count && copied < 20; ++i) {
    std::vector<HostSlot> candidates = during.Candidates(keys[i]);
    const uint32_t bottom = next.level_count - 1;
    const HostSlot* in_bottom = nullptr;
    for (const HostSlot& s : candidates) {
      if (s.level == bottom && gphash::SlotStateOf(*s.word()) == gphash::kSlotValid &&
          during.KeyOf(s) == keys[i]) {
        in_bottom = &s;
      }
    }
    if (in_bottom == nullptr) continue;
    for (const HostSlot& s : candidates) {  // an EMPTY slot of the new top (level 0)
      if (s.level == 0 && gphash::SlotStateOf(*s.word()) == gphash::kSlotEmpty) {
        during.Place(s, keys[i], *during.ValueWordOf(*in_bottom));
        copied_keys.push_back(i);
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
  EXPECT_EQ(report.cells_reclaimed, 0u);  // each copy's cell is its winner's
  gphash::Stats stats = (*table)->Stats();
  EXPECT_FALSE(stats.resizing);
  EXPECT_EQ(stats.levels, 2u);
  EXPECT_EQ(stats.top_buckets, buckets);
  EXPECT_EQ(stats.resizes, resizes_before + 1);
  EXPECT_EQ(stats.keys, count);
  std::vector<uint8_t> got(count * value_size);
  std::vector<uint8_t> found(count);
  ASSERT_TRUE(
      (*table)
          ->Get(reinterpret_cast<const uint8_t*>(keys.data()), got.data(), found.data(), count)
          .ok());
  EXPECT_EQ(got, values);
  EXPECT_EQ(found, std::vector<uint8_t>(count, 1));

  // New keys and updates of the copied keys: every key still answers right.
  Values expected;
  for (size_t i = 0; i < count; ++i) {
    expected[keys[i]].assign(&values[i * value_size], &values[(i + 1) * value_size]);
  }
  std::vector<uint64_t> fresh(2000);
  for (uint64_t& key : fresh) key = rng();
  ASSERT_TRUE(PutRandom(**table, rng, fresh, value_size, &expected).ok());
  std::vector<uint64_t> updated;
  for (size_t i : copied_keys) updated.push_back(keys[i]);
  ASSERT_TRUE(PutRandom(**table, rng, updated, value_size, &expected).ok());
  EXPECT_TRUE(Answers(**table, expected, {}, value_size));
  table->reset();
  gpu_test::ExpectVerifiesClean(*fixture.pool, fixture.root, expected.size());
}

TEST(GphashGpuRecovery, InterruptedResizeIsFinishedAtOpen) {
  SKIP_WITHOUT_DEVICE();
  ExpectInterruptedResizeFinishedAtOpen("recovery-resize", 8);
}

TEST(GphashGpuRecovery, CellTableInterruptedResizeIsFinishedAtOpen) {
  SKIP_WITHOUT_DEVICE();
  ExpectInterruptedResizeFinishedAtOpen("recovery-resize-cells", 100);
}

// A cell table (100-byte values) as a crash in the middle of a batch leaves
// it: an insert that reserved its slot and wrote its key and cell; an update
// that wrote its new cell but never swung the slot to it; a racing insert's
// second VALID copy of a key, with a cell of its own. Reopened: every
// acknowledged key answers its full value (the copy's where it wins by the
// winner rule), the reserved key is absent, later writes take free cells
// without touching live ones, and verify finds nothing.
TEST(GphashGpuRecovery, CellTableKeepsEveryAcknowledgedValueAfterAnInterruptedBatch) {
  SKIP_WITHOUT_DEVICE();
  const uint32_t v = 100;
  Fixture fixture("recovery-cells", 4000, v);
  std::mt19937_64 rng(21);
  Values expected;
  std::vector<uint64_t> keys(3000);
  for (uint64_t& key : keys) key = rng();
  {
    auto table = fixture.Open(nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_TRUE(PutRandom(**table, rng, keys, v, &expected).ok());
    ASSERT_TRUE(PutRandom(**table, rng, std::vector<uint64_t>(keys.begin(), keys.begin() + 1000), v,
                          &expected)
                    .ok());
    std::vector<uint8_t> erased(200);
    ASSERT_TRUE(
        (*table)->Erase(reinterpret_cast<const uint8_t*>(&keys[2800]), erased.data(), 200).ok());
    EXPECT_EQ(erased, std::vector<uint8_t>(200, 1));
    for (size_t i = 2800; i < 3000; ++i) expected.erase(keys[i]);
    ASSERT_TRUE(Answers(**table, expected, {}, v));
  }

  HostTable host(*fixture.pool, fixture.root);
  std::vector<uint64_t> free_cells = host.UnreferencedCells();
  ASSERT_GE(free_cells.size(), 3u);
  auto write_cell = [&](uint64_t cell, const std::vector<uint8_t>& value) {
    std::memcpy(fixture.pool->At<uint8_t>(cell), value.data(), v);
  };
  // The interrupted insert.
  const uint64_t reserved_key = rng();
  uint64_t* reserved_word = nullptr;
  for (const HostSlot& s : host.Candidates(reserved_key)) {
    if (gphash::SlotStateOf(*s.word()) != gphash::kSlotEmpty) continue;
    std::memcpy(s.bucket + gphash::KeyOffset(host.snapshot().slots_per_bucket, 8, s.slot),
                &reserved_key, 8);
    write_cell(free_cells[0], RandomValue(rng, v));
    *host.ValueWordOf(s) = free_cells[0];
    *s.word() = gphash::ReserveWord(*s.word());
    reserved_word = s.word();
    break;
  }
  ASSERT_NE(reserved_word, nullptr);
  // The interrupted update of keys[0]: a new cell written, never referenced.
  write_cell(free_cells[1], RandomValue(rng, v));
  // The racing insert's copy: the first key with an EMPTY candidate slot.
  bool placed = false;
  for (size_t i = 1; i < 2800 && !placed; ++i) {
    std::vector<HostSlot> candidates = host.Candidates(keys[i]);
    const HostSlot* holder = host.Holder(candidates, keys[i]);
    ASSERT_NE(holder, nullptr) << "key " << i;
    for (const HostSlot& s : candidates) {
      if (gphash::SlotStateOf(*s.word()) != gphash::kSlotEmpty) continue;
      std::vector<uint8_t> other = RandomValue(rng, v);
      write_cell(free_cells[2], other);
      host.Place(s, keys[i], free_cells[2]);
      auto rank = [](const HostSlot& slot) {
        return std::make_tuple(slot.level, slot.bucket_index, slot.slot);  // smaller wins
      };
      if (rank(s) < rank(*holder)) expected[keys[i]] = other;
      placed = true;
      break;
    }
  }
  ASSERT_TRUE(placed);
  ASSERT_TRUE(fixture.pool->Sync().ok());

  {
    recovery::Report report;
    auto table = fixture.Open(&report);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_EQ(report.slots_cleared, 1u);
    EXPECT_EQ(report.duplicates_removed, 1u);
    EXPECT_EQ(gphash::SlotStateOf(*reserved_word), gphash::kSlotEmpty);
    EXPECT_TRUE(Answers(**table, expected, {reserved_key}, v));
    // Writes after recovery take free cells (the three above among them),
    // never a live key's.
    std::vector<uint64_t> fresh(3000);
    for (uint64_t& key : fresh) key = rng();
    ASSERT_TRUE(PutRandom(**table, rng, fresh, v, &expected).ok());
    ASSERT_TRUE(PutRandom(**table, rng, std::vector<uint64_t>(keys.begin(), keys.begin() + 1500), v,
                          &expected)
                    .ok());
    EXPECT_TRUE(Answers(**table, expected, {reserved_key}, v));
  }
  gpu_test::ExpectVerifiesClean(*fixture.pool, fixture.root, expected.size());
  recovery::Report report;
  auto table = fixture.Open(&report);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(report.slots_cleared, 0u);
  EXPECT_EQ(report.duplicates_removed, 0u);
  EXPECT_TRUE(Answers(**table, expected, {reserved_key}, v));
}

TEST(GphashGpuRecovery, CorruptRootIsCorruptionNamingTheTable) {
  SKIP_WITHOUT_DEVICE();
  Fixture fixture("recovery-root", 1000);
  testutil::FlipByte(fixture.temp.path(), fixture.root + 16);  // key_size: checksum fails
  fixture.pool.reset();  // one writable open of a pool at a time
  auto reopened = pm::Pool::Open(fixture.temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(reopened.ok());
  fixture.pool = std::move(reopened.value());
  auto table = fixture.Open(nullptr);
  ASSERT_TRUE(table.status().IsCorruption()) << table.status().ToString();
  EXPECT_NE(table.status().message().find("table 't'"), std::string::npos);
}

}  // namespace
}  // namespace gpkv::gphash::gpu
