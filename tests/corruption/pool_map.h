// A map of a (healthy) pool file's regions, read with the format/ structs the
// way docs/FORMAT.md describes them: header, superblocks, extent table,
// catalog, each table's root, LevelSets, buckets and slots, value cells, and
// the free heap. The corruption tests pick the bytes they damage from it and
// know from it which keys a damaged byte can touch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "tables/gphash/layout.h"

namespace gpkv::corruption {

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct SlotMap {
  uint64_t key = 0;  // first 8 key bytes (the tests use 8-byte keys)
  uint64_t slot_word = 0;
  uint64_t key_offset = 0;
  uint64_t value_word = 0;
  uint64_t cell = 0;  // value cell offset, 0 when values are inline
};

struct TableMap {
  std::string name;
  uint64_t table_id = 0;
  uint32_t key_size = 0, value_size = 0, slots_per_bucket = 0, bucket_bytes = 0, cell_size = 0;
  uint64_t root = 0;
  uint64_t active_levelset = 0;    // offset of the current LevelSet
  uint64_t inactive_levelset = 0;  // offset of the other one
  uint64_t value_chunk_count = 0;
  std::vector<ByteRange> levels;
  std::vector<SlotMap> valid_slots;
  std::vector<ByteRange> empty_slot_bytes;  // key + value word of EMPTY slots
};

struct PoolMap {
  std::vector<uint8_t> bytes;
  format::PoolHeader header{};
  int current_superblock = 0;
  format::Superblock superblock{};
  std::vector<uint64_t> allocated_entries;  // offsets of allocated extent table entries
  std::vector<format::ExtentEntry> extents;
  uint64_t catalog = 0;
  uint64_t catalog_used = 0;  // header + entries
  std::vector<TableMap> tables;
  std::vector<ByteRange> free_heap;

  template <typename T>
  T At(uint64_t offset) const {
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
  }
};

inline std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline void MapTable(PoolMap& map, const format::CatalogEntry& entry) {
  TableMap table;
  table.name = entry.name;
  table.table_id = entry.table_id;
  table.root = entry.root_offset;
  auto root = map.At<gphash::GphashRoot>(entry.root_offset);
  table.key_size = root.key_size;
  table.value_size = root.value_size;
  table.slots_per_bucket = root.slots_per_bucket;
  table.bucket_bytes = root.bucket_bytes;
  table.cell_size = root.value_mode == gphash::kValueCells ? root.cell_size : 0;
  table.value_chunk_count = root.value_chunk_count;
  uint32_t index = gphash::ActiveLevelSetIndex(root.active_levelset);
  table.active_levelset = entry.root_offset + offsetof(gphash::GphashRoot, levelsets) +
                          index * sizeof(gphash::LevelSet);
  table.inactive_levelset = entry.root_offset + offsetof(gphash::GphashRoot, levelsets) +
                            (1 - index) * sizeof(gphash::LevelSet);
  const gphash::LevelSet& levelset = root.levelsets[index];
  const uint32_t S = root.slots_per_bucket, K = root.key_size;
  for (uint32_t l = 0; l < levelset.level_count && l < gphash::kMaxLevels; ++l) {
    const gphash::LevelDesc& level = levelset.levels[l];
    table.levels.push_back(ByteRange{level.offset, level.bucket_count * root.bucket_bytes});
    for (uint64_t b = 0; b < level.bucket_count; ++b) {
      uint64_t bucket = level.offset + b * root.bucket_bytes;
      for (uint32_t s = 0; s < S; ++s) {
        uint64_t word = map.At<uint64_t>(bucket + gphash::SlotWordOffset(s));
        uint64_t key_offset = bucket + gphash::KeyOffset(S, K, s);
        uint64_t value_word = bucket + gphash::ValueWordOffset(S, K, s);
        if (gphash::SlotStateOf(word) == gphash::kSlotValid) {
          SlotMap slot;
          slot.key = map.At<uint64_t>(key_offset);
          slot.slot_word = bucket + gphash::SlotWordOffset(s);
          slot.key_offset = key_offset;
          slot.value_word = value_word;
          if (table.cell_size != 0) slot.cell = map.At<uint64_t>(value_word);
          table.valid_slots.push_back(slot);
        } else if (word == 0 || gphash::SlotStateOf(word) == gphash::kSlotEmpty) {
          table.empty_slot_bytes.push_back(ByteRange{key_offset, K});
          table.empty_slot_bytes.push_back(ByteRange{value_word, 8});
        }
      }
    }
  }
  map.tables.push_back(std::move(table));
}

// REQUIRES: the pool at path is healthy (verified clean).
inline PoolMap ReadPoolMap(const std::string& path) {
  PoolMap map;
  map.bytes = ReadFile(path);
  map.header = map.At<format::PoolHeader>(0);
  auto a = map.At<format::Superblock>(format::kSuperblockOffset[0]);
  auto b = map.At<format::Superblock>(format::kSuperblockOffset[1]);
  map.current_superblock = b.magic == format::kSuperblockMagic && b.generation > a.generation;
  map.superblock = map.current_superblock ? b : a;
  for (uint64_t i = 0; i < map.header.extent_capacity; ++i) {
    uint64_t offset = map.header.extent_table_offset + i * sizeof(format::ExtentEntry);
    auto entry = map.At<format::ExtentEntry>(offset);
    if (entry.state == format::kExtentAllocated) {
      map.allocated_entries.push_back(offset);
      map.extents.push_back(entry);
    }
  }
  std::sort(map.extents.begin(), map.extents.end(),
            [](const format::ExtentEntry& x, const format::ExtentEntry& y) {
              return x.offset < y.offset;
            });
  uint64_t cursor = map.header.heap_offset;
  for (const format::ExtentEntry& extent : map.extents) {
    if (extent.offset > cursor) map.free_heap.push_back(ByteRange{cursor, extent.offset - cursor});
    cursor = std::max(cursor, extent.offset + extent.length);
  }
  if (cursor < map.bytes.size())
    map.free_heap.push_back(ByteRange{cursor, map.bytes.size() - cursor});
  map.catalog = map.superblock.catalog_offset;
  if (map.catalog != 0) {
    auto catalog = map.At<format::CatalogHeader>(map.catalog);
    map.catalog_used =
        sizeof(format::CatalogHeader) + catalog.entry_count * sizeof(format::CatalogEntry);
    for (uint64_t i = 0; i < catalog.entry_count; ++i) {
      auto entry = map.At<format::CatalogEntry>(map.catalog + sizeof(format::CatalogHeader) +
                                                i * sizeof(format::CatalogEntry));
      if (entry.durability == 1) MapTable(map, entry);
    }
  }
  return map;
}

}  // namespace gpkv::corruption
