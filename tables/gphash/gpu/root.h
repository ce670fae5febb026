// The GPU backend's snapshot of a GPHash table root: validated at open by
// gphash::ReadGphash (the check verify, repair and the CPU backend share)
// and kept current by the LevelSet publishes of a resize, which gphash::Core
// makes through gphash::PublishLevelSet (tables/gphash/root.h, the one
// writer both backends call). Plain host code; no CUDA.
//
// Who may call: gpu/ (GpuBackend) and tests.
//
// Thread safety: none; the caller serialises writers of one table.
#pragma once

#include <cstdint>
#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash::gpu {

// A validated snapshot of a table root and its current LevelSet.
struct GphashRootSnapshot : gphash::Geometry {
  uint64_t root_offset = 0;
  uint64_t table_id = 0;
  uint32_t geometry_levels = 0;
  uint64_t active_word = 0;    // root.active_levelset as read
  gphash::LevelSet level_set;  // the LevelSet it selects
};

// Reads and checks the root at root_offset (gphash::ReadGphash): Corruption
// naming the file, the table and the offset for any field out of range, a bad
// checksum or a level outside the heap.
Result<GphashRootSnapshot> ReadGphashRoot(const pm::Pool& pool, const std::string& table_name,
                                          uint64_t root_offset);

// Publishes `next` with gphash::PublishLevelSet (the next generation, in the
// LevelSet slot not in use) and returns the snapshot that holds it.
Result<GphashRootSnapshot> PublishLevelSet(pm::Pool& pool, const GphashRootSnapshot& current,
                                           gphash::LevelSet next);

// Pool bytes of the snapshot's bucket levels (the index).
uint64_t IndexBytes(const GphashRootSnapshot& snapshot);

// "<file>: table '<name>' <what> (offset 0x..)".
std::string TableWhere(const pm::Pool& pool, const std::string& table_name, const std::string& what,
                       uint64_t offset);

}  // namespace gpkv::gphash::gpu
