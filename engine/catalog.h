// Catalog entries <-> table options. Reading and writing the catalog itself is
// recovery/catalog.h (shared with verify and repair).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv::engine {

format::CatalogEntry MakeCatalogEntry(const std::string& name, uint64_t table_id,
                                      const TableOptions& options, uint64_t root_offset);
TableOptions TableOptionsOf(const format::CatalogEntry& entry);

}  // namespace gpkv::engine
