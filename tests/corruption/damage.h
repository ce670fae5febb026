// The damage the region corruption test does: for each region of a pool
// (pool_map.h), a picker that chooses bytes to flip at random and says what
// must follow (detected by verify, harmless, or undetectable) and which keys
// or tables the damage may take with it.
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "format/pool_layout.h"
#include "pool_map.h"
#include "tables/gphash/layout.h"

namespace gpkv::corruption {

enum class Expect {
  kDetect,    // verify must report corruption
  kHarmless,  // verify must not; Open must succeed with every key intact
  kAny,       // undetectable damage (a value's bytes): either
};

struct Damage {
  uint64_t offset = 0;
  std::vector<uint8_t> mask;  // xor-ed in at offset
  Expect expect = Expect::kAny;
  std::set<std::pair<uint64_t, uint64_t>> keys_at_risk;  // (table id, key)
  std::set<uint64_t> tables_at_risk;                     // repair may drop the whole table
  bool repair_may_refuse = false;                        // header: nothing to salvage from
  bool expect_finding = false;                           // some finding, even if not corruption
};

using Picker = Damage (*)(const PoolMap&, std::mt19937_64&);

inline uint64_t Pick(std::mt19937_64& random, uint64_t n) { return n == 0 ? 0 : random() % n; }

// One flipped bit (most trials) or one byte xor-ed with a random mask.
inline Damage FlipIn(uint64_t offset, uint64_t length, std::mt19937_64& random) {
  Damage damage;
  damage.offset = offset + Pick(random, length);
  uint8_t mask = (random() % 4 == 0) ? static_cast<uint8_t>(1 + random() % 255)
                                     : static_cast<uint8_t>(1u << (random() % 8));
  damage.mask = {mask};
  return damage;
}

inline const TableMap& AnyTable(const PoolMap& map, std::mt19937_64& random) {
  return map.tables[Pick(random, map.tables.size())];
}

inline const TableMap& CellTable(const PoolMap& map) {
  for (const TableMap& table : map.tables) {
    if (table.cell_size != 0) return table;
  }
  return map.tables[0];
}

inline Damage Header(const PoolMap&, std::mt19937_64& random) {
  Damage d = FlipIn(0, sizeof(format::PoolHeader), random);
  d.expect = Expect::kDetect;
  d.repair_may_refuse = true;
  return d;
}

inline Damage HeaderPadding(const PoolMap&, std::mt19937_64& random) {
  Damage d =
      FlipIn(sizeof(format::PoolHeader), format::kPageSize - sizeof(format::PoolHeader), random);
  d.expect = Expect::kHarmless;
  return d;
}

inline Damage SuperblockCurrent(const PoolMap& map, std::mt19937_64& random) {
  Damage d =
      FlipIn(format::kSuperblockOffset[map.current_superblock], sizeof(format::Superblock), random);
  // The other copy is older: its catalog was freed when this one was written.
  d.expect = Expect::kDetect;
  return d;
}

inline Damage SuperblockPrevious(const PoolMap& map, std::mt19937_64& random) {
  Damage d = FlipIn(format::kSuperblockOffset[1 - map.current_superblock],
                    sizeof(format::Superblock), random);
  d.expect = Expect::kHarmless;  // what a torn superblock write leaves: recoverable
  d.expect_finding = true;
  return d;
}

inline Damage ExtentPlacement(const PoolMap& map, std::mt19937_64& random) {
  uint64_t entry = map.allocated_entries[Pick(random, map.allocated_entries.size())];
  // offset (0..7), length (8..15) or state (24..31)
  uint64_t field = Pick(random, 3);
  Damage d = FlipIn(entry + (field == 2 ? 24 : field * 8), 8, random);
  d.expect = Expect::kDetect;
  return d;
}

inline Damage ExtentKindOwner(const PoolMap& map, std::mt19937_64& random) {
  uint64_t entry = map.allocated_entries[Pick(random, map.allocated_entries.size())];
  Damage d = FlipIn(entry + 16, 8, random);  // informational fields
  d.expect = Expect::kHarmless;
  return d;
}

inline Damage Catalog(const PoolMap& map, std::mt19937_64& random) {
  Damage d = FlipIn(map.catalog, map.catalog_used, random);
  d.expect = Expect::kDetect;
  return d;
}

inline Damage RootImmutable(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  Damage d = FlipIn(table.root, offsetof(gphash::GphashRoot, checksum) + 8, random);
  d.expect = Expect::kDetect;
  d.tables_at_risk = {table.table_id};
  return d;
}

inline Damage RootCommitWords(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  uint64_t field = random() % 2 ? offsetof(gphash::GphashRoot, active_levelset)
                                : offsetof(gphash::GphashRoot, value_chunk_count);
  Damage d = FlipIn(table.root + field, 8, random);
  d.expect = Expect::kDetect;
  d.tables_at_risk = {table.table_id};
  return d;
}

inline Damage RootStatistic(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  Damage d = FlipIn(table.root + offsetof(gphash::GphashRoot, resizes), 8, random);
  d.expect = Expect::kHarmless;  // advisory
  return d;
}

inline Damage LevelSetActive(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  Damage d = FlipIn(table.active_levelset, sizeof(gphash::LevelSet), random);
  d.expect = Expect::kDetect;
  d.tables_at_risk = {table.table_id};
  return d;
}

inline Damage LevelSetInactive(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  Damage d = FlipIn(table.inactive_levelset, sizeof(gphash::LevelSet), random);
  d.expect = Expect::kHarmless;  // not resizing: only the active one counts
  return d;
}

inline Damage ValueChunkList(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = CellTable(map);
  Damage d = FlipIn(table.root + offsetof(gphash::GphashRoot, value_chunks),
                    8 * table.value_chunk_count, random);
  d.expect = Expect::kDetect;
  d.tables_at_risk = {table.table_id};
  return d;
}

inline const SlotMap& AnySlot(const TableMap& table, std::mt19937_64& random) {
  return table.valid_slots[Pick(random, table.valid_slots.size())];
}

inline Damage SlotWord(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  const SlotMap& slot = AnySlot(table, random);
  uint32_t bit = random() % 64;
  Damage d;
  d.offset = slot.slot_word + bit / 8;
  d.mask = {static_cast<uint8_t>(1u << (bit % 8))};
  // Version bits (52..59) change nothing a reader or verify relies on; a
  // state or fingerprint bit makes the slot invalid or its key unfindable.
  d.expect = (bit >= 52 && bit < 60) ? Expect::kHarmless : Expect::kDetect;
  d.keys_at_risk = {{table.table_id, slot.key}};
  return d;
}

inline Damage SlotKey(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  const SlotMap& slot = AnySlot(table, random);
  Damage d = FlipIn(slot.key_offset, table.key_size, random);
  d.expect = Expect::kDetect;  // the fingerprint or the bucket no longer fits the key
  d.keys_at_risk = {{table.table_id, slot.key}};
  return d;
}

inline Damage SlotValueWord(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  const SlotMap& slot = AnySlot(table, random);
  Damage d = FlipIn(slot.value_word, 8, random);
  // An inline value has no check; a damaged cell reference is detected when
  // it is off a cell's start or outside the chunks.
  d.expect = table.cell_size != 0 ? Expect::kDetect : Expect::kAny;
  d.keys_at_risk = {{table.table_id, slot.key}};
  if (table.cell_size != 0) {
    // A flip of several bits of one byte can move the reference by a whole
    // number of cells (one bit never does: cells are 104 bytes). On a free
    // cell the damage is undetectable (values carry no checksum); on another
    // live key's cell, which of the two owns it is unknowable (no cell names
    // its key), so repair drops both and that key is at risk too.
    const uint64_t damaged =
        slot.cell ^ (uint64_t{d.mask[0]} << (8 * (d.offset - slot.value_word)));
    const uint64_t moved = damaged > slot.cell ? damaged - slot.cell : slot.cell - damaged;
    if (moved % table.cell_size == 0) d.expect = Expect::kAny;
    for (const SlotMap& other : table.valid_slots) {
      if (other.cell == damaged) d.keys_at_risk.insert({table.table_id, other.key});
    }
  }
  return d;
}

inline Damage ValueCell(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = CellTable(map);
  const SlotMap& slot = AnySlot(table, random);
  Damage d = FlipIn(slot.cell, table.value_size, random);
  d.expect = Expect::kAny;  // values carry no checksum
  d.keys_at_risk = {{table.table_id, slot.key}};
  return d;
}

inline Damage EmptySlots(const PoolMap& map, std::mt19937_64& random) {
  const TableMap& table = AnyTable(map, random);
  const ByteRange& range = table.empty_slot_bytes[Pick(random, table.empty_slot_bytes.size())];
  Damage d = FlipIn(range.offset, range.length, random);
  d.expect = Expect::kHarmless;
  return d;
}

inline Damage FreeHeap(const PoolMap& map, std::mt19937_64& random) {
  const ByteRange& range = map.free_heap[Pick(random, map.free_heap.size())];
  Damage d = FlipIn(range.offset, range.length, random);
  d.expect = Expect::kHarmless;
  return d;
}

struct Region {
  const char* name;
  Picker pick;
};

inline const Region kRegions[] = {
    {"header", Header},
    {"header_padding", HeaderPadding},
    {"superblock_current", SuperblockCurrent},
    {"superblock_previous", SuperblockPrevious},
    {"extent_placement", ExtentPlacement},
    {"extent_kind_owner", ExtentKindOwner},
    {"catalog", Catalog},
    {"table_root", RootImmutable},
    {"root_commit_words", RootCommitWords},
    {"root_statistic", RootStatistic},
    {"levelset_active", LevelSetActive},
    {"levelset_inactive", LevelSetInactive},
    {"value_chunk_list", ValueChunkList},
    {"bucket_slot_words", SlotWord},
    {"bucket_keys", SlotKey},
    {"bucket_value_words", SlotValueWord},
    {"value_cells", ValueCell},
    {"empty_slots", EmptySlots},
    {"free_heap", FreeHeap},
};

}  // namespace gpkv::corruption
