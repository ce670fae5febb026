#include "tables/hash_index.h"

#include <cstdio>

#include "tables/registry.h"

namespace gpkv::tables {

Result<std::unique_ptr<Table>> OpenHashIndex(const OpenContext& context, const std::string& name,
                                             const TableOptions& options) {
  const TableFamily* family = FindFamily(TableKind::kHash, Durability::kVolatile);
  if (family == nullptr) {
    return Status::Unsupported(context.pool->path() + ": table '" + name +
                               "': this build has no volatile hash table for the index");
  }
  TableOptions index_options;
  index_options.kind = TableKind::kHash;
  index_options.durability = Durability::kVolatile;
  index_options.key_size = options.key_size;
  index_options.value_size = options.value_size;
  index_options.expected_keys = options.expected_keys;
  format::CatalogEntry entry{};
  std::snprintf(entry.name, sizeof(entry.name), "%s", name.c_str());
  return family->Open(context, entry, index_options);
}

}  // namespace gpkv::tables
