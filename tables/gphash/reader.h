// Bounds-checked reading of a GPHash table root: the one place that decides
// whether a root, its active LevelSet and its value chunks can be trusted.
// Shared by verify, repair and the CPU backend's open, so all three accept and
// reject exactly the same bytes.
//
// Who may call: recovery/, cpu/ (and gpu/ launchers), tests.
// Thread safety: plain functions over a const pool; a GphashView is a value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/gphash/layout.h"
#include "tables/root_reader.h"

namespace gpkv::gphash {

struct GphashLevel {
  uint64_t offset = 0;        // pool offset of the level's first bucket
  uint64_t bucket_count = 0;  // a power of two
  uint64_t level_id = 0;      // strictly decreasing from the top level down
};

// A validated copy of a table root's fields. Every pool range it names (root,
// levels of the active LevelSet, value chunks) lies inside the heap, and the
// ranges do not overlap.
struct GphashView : tables::RootIdentity {
  uint32_t geometry_levels = 0;  // levels chosen at create (TableOptions.hash)
  gphash::Geometry geo;          // GeometryOf(root): sizes, bucket shape, hash seed
  uint64_t cells_per_chunk = 0;
  uint64_t active_word = 0;         // root.active_levelset as read
  gphash::LevelSet levelset{};      // copy of the active LevelSet
  std::vector<GphashLevel> levels;  // top (newest) first; levelset.level_count of them
  bool resizing = false;            // levelset.flags & kLevelSetResizing
  std::vector<uint64_t> chunks;     // value_chunks[0 .. value_chunk_count)
  uint64_t chunk_bytes = 0;         // cells_per_chunk * cell_size
  uint64_t resizes = 0;

  // "table 'users' level 1 bucket 1834"
  std::string BucketRegion(uint32_t level, uint64_t bucket) const;
  uint64_t BucketOffset(uint32_t level, uint64_t bucket) const {
    return levels[level].offset + bucket * geo.bucket_bytes;
  }
  uint64_t LevelBytes(uint32_t level) const {
    return levels[level].bucket_count * geo.bucket_bytes;
  }
  uint64_t TotalSlots() const;
  uint64_t TotalCells() const { return cells_per_chunk * chunks.size(); }
};

// Reads and validates the root at root_offset: magic, checksum, sizes and
// geometry ranges, bucket_bytes == BucketBytes(S, K), the active LevelSet
// (checksum, generation, level count, flags, bucket counts halving from the top,
// level ids, every level inside the heap), value chunks inside the heap, no two
// ranges overlapping, each range an allocated extent of the extent table
// (unless !require_allocated: repair, which re-adopts lost extents).
// Corruption names file, table, region and offset.
Result<GphashView> ReadGphash(const pm::Pool& pool, const std::string& table_name,
                              uint64_t root_offset, bool require_allocated = true);

// Maps a value-cell reference (a pool offset) to its cell number
// (chunk * cells_per_chunk + index in chunk), or -1 when it is not the start of
// a cell of one of the view's chunks.
class CellIndex {
 public:
  explicit CellIndex(const GphashView& view);
  int64_t Lookup(uint64_t offset) const;
  uint64_t OffsetOf(uint64_t cell) const;

 private:
  struct Chunk {
    uint64_t offset;
    uint64_t first_cell;
  };
  std::vector<Chunk> sorted_;            // by offset
  std::vector<uint64_t> chunk_offsets_;  // by chunk number
  uint64_t cell_size_ = 0;
  uint64_t cells_per_chunk_ = 0;
  uint64_t chunk_bytes_ = 0;
};

// "0x3a000"
std::string HexOffset(uint64_t value);

}  // namespace gpkv::gphash
