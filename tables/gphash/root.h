// The one writer of a GPHash table's root: creating a table (root, levels,
// first value chunk), publishing a new LevelSet, and dropping a table. Both
// backends call these, so a table's root bytes are written by one function
// whichever backend runs it. Reading and validating a root is reader.h.
//
// Who may call: tables/gphash/ (family, cpu/, gpu/) and tests.
// Thread safety: none; the caller serialises writers of one table's root
// (the catalog lock at create and drop, the table's exclusive lock in a
// resize).
#pragma once

#include <cstdint>
#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash {

// InvalidArgument, message starting with `where`, unless options describe a
// table this format can hold: key size, value size, geometry and initial
// top-level size within the limits of layout.h.
Status CheckOptions(const std::string& where, const TableOptions& options);

// Buckets of the top level at create: options.hash.initial_top_buckets, or
// the smallest power of two (at least 16) that holds options.expected_keys
// at 90% load over all levels.
uint64_t InitialTopBuckets(const TableOptions& options);

// Creates a table: allocates the root, the levels of a first LevelSet and
// (values over 8 bytes) a first chunk of value cells; writes and persists the
// root, then publishes its active LevelSet and chunk count. Durable but
// unlinked: the caller links the returned root offset into the catalog (an
// unlinked root is freed at the next open). On an error nothing stays
// allocated. InvalidArgument for bad options or a read-only pool, PoolFull
// when the pool cannot hold the table.
Result<uint64_t> CreateTable(pm::Pool& pool, uint64_t table_id, const TableOptions& options);

// Writes `next` into the LevelSet slot of the root that is not active, with
// the next generation (set in *next), its unused level descriptors zeroed and
// its checksum; persists it; then publishes the root's active_levelset word.
// Returns the published word.
// REQUIRES: the caller holds the table exclusively; root_offset names a
// validated root (reader.h).
uint64_t PublishLevelSet(pm::Pool& pool, uint64_t root_offset, gphash::LevelSet* next);

// Resize, the two LevelSets it publishes (layout.h describes the protocol).
// PoolFull, message starting with `where`, when `current` cannot grow: it
// holds kMaxLevels levels already, or its top level would pass
// kMaxBucketCount.
Status CheckGrowth(const std::string& where, const gphash::LevelSet& current);
// Buckets of the new top level: twice the current top's.
uint64_t GrownTopBuckets(const gphash::LevelSet& current);
// `current` with a new top level at new_top_offset above its levels and
// kLevelSetResizing set (the generation is set by PublishLevelSet).
gphash::LevelSet GrownLevelSet(const gphash::LevelSet& current, uint64_t new_top_offset);
// `current` without kLevelSetResizing and, when drop_bottom, without its
// bottom level (all of whose keys have moved up).
gphash::LevelSet FinishedLevelSet(const gphash::LevelSet& current, bool drop_bottom);

// Frees every extent of the table rooted at root_offset (levels, value
// chunks, root). Corruption when the root cannot be trusted.
// REQUIRES: the table is unlinked from the catalog and not open.
Status DropTable(pm::Pool& pool, const std::string& table_name, uint64_t root_offset);

}  // namespace gpkv::gphash
