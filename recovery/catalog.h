// The catalog of a pool: the table list the current superblock points to.
// Read with every field checked (engine at open, verify); written out of place
// (engine on create / drop, repair): a change writes a whole new catalog
// extent, publishes it through a new superblock, then frees the old extent. A
// crash before the superblock write leaves the old catalog current and the new
// extent unreachable (freed at open).
#pragma once

#include <vector>

#include "format/pool_layout.h"
#include "gpkv/status.h"
#include "pm/pool.h"

namespace gpkv::recovery {

// The catalog entries of the current superblock (empty when the pool has no
// catalog yet). Corruption names file, region ("catalog", "catalog entry 3")
// and offset: bad magic, checksum, count, name, sizes, kind, root offset,
// duplicate names or ids, and (require_allocated) a catalog extent the extent
// table does not hold — what a stale superblock points to once its catalog
// was replaced: trusting it would free every later table's extents.
Result<std::vector<format::CatalogEntry>> ReadCatalog(const pm::Pool& pool,
                                                      bool require_allocated = true);

// Checks one entry's fields (name, kind, durability, sizes, geometry): each
// entry ReadCatalog returns, and each table repair salvages from a damaged
// catalog. (The engine checks new tables' options itself, before it makes an
// entry.)
Status CheckCatalogEntry(const pm::Pool& pool, const format::CatalogEntry& entry,
                         const std::string& where, uint64_t offset);

// Writes `entries` as the new catalog and publishes it with next_table_id;
// frees the previous catalog extent if the extent table holds it.
// REQUIRES: pool.metadata_mutex() held.
Status PublishCatalog(pm::Pool& pool, const std::vector<format::CatalogEntry>& entries,
                      uint64_t next_table_id);

}  // namespace gpkv::recovery
