// The catalog's description of a table (TableInfo) as JSON, as `gpkv info`
// and `gpkv tables` print it.
#pragma once

#include <nlohmann/json.hpp>

#include "gpkv/db.h"

namespace gpkv::tools {

// {"name", "id", "kind", "durability", "key_size", "value_size",
//  "expected_keys", "contents"} and the family's fields
//  (tables::FamilyCli::JsonFields: a persistent hash table's "geometry").
nlohmann::ordered_json TableInfoJson(const TableInfo& info);

}  // namespace gpkv::tools
