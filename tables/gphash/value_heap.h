// gphash::ValueHeap: the value cells of a GPHash table whose values exceed 8
// bytes. Cells live in chunks (extents of cells_per_chunk cells) listed in
// GphashRoot::value_chunks[]; value_chunk_count is the commit word of the list.
//
// Which cells are free is volatile: open-time recovery marks the cells that
// live keys reference, every other cell is free. Free cells are handed out
// from (in order) the recycled stack, the cells found free at open, the fresh
// part of the newest chunk, and finally a new chunk: allocated, its offset
// stored in value_chunks[count] and persisted, then value_chunk_count
// published as count + 1 (a crash before the publish leaves an unreachable
// extent, freed at open).
//
// Thread safety: all methods may be called concurrently (one mutex; callers
// take and give cells in groups).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash {

class ValueHeap {
 public:
  ValueHeap(pm::Pool& pool, gphash::GphashRoot* root, const std::string& table_name);

  // Adopts the root's chunks; `used` has one bit per cell number (chunk *
  // cells_per_chunk + index) set for the cells live keys reference.
  void Load(const std::vector<uint64_t>& chunks, std::vector<uint64_t> used);

  // Appends `count` free cells (pool offsets) to `out`, growing by a chunk
  // when none is left. PoolFull when neither the pool nor the root's chunk
  // list (kMaxValueChunks) has room.
  Status Take(size_t count, std::vector<uint64_t>* out);
  // Returns cells to the free stack. REQUIRES: no live slot references them
  // and no batch can still read them (see util/epoch.h).
  void Give(const uint64_t* cells, size_t count);
  void Give(uint64_t cell) { Give(&cell, 1); }

  uint64_t chunk_count() const;
  uint64_t bytes() const;

 private:
  Status Grow();  // REQUIRES: mutex_ held
  uint64_t CellOffset(uint64_t cell) const {
    return chunks_[cell / cells_per_chunk_] + (cell % cells_per_chunk_) * cell_size_;
  }

  pm::Pool& pool_;
  gphash::GphashRoot* const root_;
  const std::string table_name_;
  const uint64_t cell_size_;
  const uint64_t cells_per_chunk_;
  const uint64_t chunk_bytes_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> chunks_;
  std::vector<uint64_t> recycled_;
  std::vector<uint64_t> open_used_;  // bitmap from open; zero bits are free
  uint64_t open_cursor_ = 0;         // next cell number to examine in open_used_
  uint64_t open_cells_ = 0;          // cells covered by open_used_
  uint64_t fresh_next_ = 0;          // untouched cells of the newest chunk
  uint64_t fresh_end_ = 0;
};

}  // namespace gpkv::gphash
