#include "tables/catalog_entry.h"

#include <cstdio>

namespace gpkv::tables {

Status CheckDecodedParams(const std::string& where, const Status& valid, const uint8_t* reserved,
                          size_t count) {
  if (!valid.ok()) return Status::Corruption(valid.message());
  for (size_t i = 0; i < count; ++i) {
    if (reserved[i] != 0) {
      return Status::Corruption(where + ": reserved parameter bytes are not zero");
    }
  }
  return Status::OK();
}

format::CatalogEntry SalvagedEntry(const TableFamily& family, const RootIdentity& root,
                                   TableOptions* options) {
  format::CatalogEntry entry{};
  std::snprintf(entry.name, sizeof(entry.name), "%s", root.table_name.c_str());
  entry.table_id = root.table_id;
  entry.kind = static_cast<uint8_t>(family.kind());
  entry.durability = static_cast<uint8_t>(family.durability());
  entry.key_size = root.key_size;
  entry.value_size = root.value_size;
  entry.root_offset = root.root_offset;
  options->kind = family.kind();
  options->key_size = root.key_size;
  options->value_size = root.value_size;
  return entry;
}

}  // namespace gpkv::tables
