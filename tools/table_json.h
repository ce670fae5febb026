// JSON of the gpkv tool: the catalog's description of a table (TableInfo), as
// `gpkv info` and `gpkv tables` print it, and keys and values, as `get`,
// `dump` and `range` print them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "gpkv/db.h"

namespace gpkv::tools {

// {"name", "id", "kind", "durability", "key_size", "value_size",
//  "expected_keys", "contents", "root_offset"} and the family's fields
//  (tables::FamilyCli::JsonFields: a persistent hash table's "geometry").
nlohmann::ordered_json TableInfoJson(const TableInfo& info);

// A key or value of `size` bytes: a JSON number when it fits 8 bytes and is
// printed in decimal, else the same text as the plain output (0x and every
// hexadecimal digit: tools/number_text.h).
nlohmann::ordered_json NumberJson(const uint8_t* bytes, size_t size, bool hex);

// Prints `json` on stdout, indented, with a newline.
void PrintJson(const nlohmann::ordered_json& json);

}  // namespace gpkv::tools
