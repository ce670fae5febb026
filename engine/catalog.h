// Catalog entries <-> table options: the generic record here, the family's
// parameter block through its tables::TableFamily. Reading and writing the
// catalog itself is recovery/catalog.h (shared with verify and repair).
#pragma once

#include <cstdint>
#include <string>

#include "format/pool_layout.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "tables/family.h"

namespace gpkv::engine {

format::CatalogEntry MakeCatalogEntry(const std::string& name, uint64_t table_id,
                                      const TableOptions& options, uint64_t root_offset,
                                      const tables::TableFamily& family);

// The options an entry records. Corruption (message starting with `where`)
// when the family's parameter block is not valid.
Result<TableOptions> TableOptionsOf(const std::string& where, const format::CatalogEntry& entry,
                                    const tables::TableFamily& family);

}  // namespace gpkv::engine
