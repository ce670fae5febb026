#include "engine/catalog.h"

#include <cstring>

namespace gpkv::engine {

using format::CatalogEntry;

CatalogEntry MakeCatalogEntry(const std::string& name, uint64_t table_id,
                              const TableOptions& options, uint64_t root_offset,
                              const tables::TableFamily& family) {
  CatalogEntry entry{};
  std::strncpy(entry.name, name.c_str(), format::kMaxTableNameLength);
  entry.table_id = table_id;
  entry.kind = static_cast<uint8_t>(options.kind);
  entry.durability = static_cast<uint8_t>(options.durability);
  entry.key_size = options.key_size;
  entry.value_size = options.value_size;
  entry.root_offset = root_offset;
  entry.expected_keys = options.expected_keys;
  family.EncodeParams(options, entry.params);
  return entry;
}

Result<TableOptions> TableOptionsOf(const std::string& where, const CatalogEntry& entry,
                                    const tables::TableFamily& family) {
  TableOptions options;
  options.kind = static_cast<TableKind>(entry.kind);
  options.durability = static_cast<Durability>(entry.durability);
  options.key_size = entry.key_size;
  options.value_size = entry.value_size;
  options.expected_keys = entry.expected_keys;
  GPKV_RETURN_IF_ERROR(family.DecodeParams(where, entry.params, &options));
  return options;
}

}  // namespace gpkv::engine
