#include "tools/table_json.h"

#include <cstdio>

#include "tables/registry.h"
#include "tools/cli_common.h"
#include "tools/number_text.h"

namespace gpkv::tools {

nlohmann::ordered_json TableInfoJson(const TableInfo& info) {
  const TableOptions& options = info.options;
  nlohmann::ordered_json json = {{"name", info.name},
                                 {"id", info.id},
                                 {"kind", KindName(options.kind)},
                                 {"durability", DurabilityName(options.durability)},
                                 {"key_size", options.key_size},
                                 {"value_size", options.value_size},
                                 {"expected_keys", options.expected_keys}};
  json["contents"] = options.durability == Durability::kVolatile
                         ? "memory (volatile: empty after reopen)"
                         : "pool";
  json["root_offset"] = info.root_offset;
  if (const tables::TableFamily* family = tables::FindFamily(options.kind, options.durability)) {
    for (const tables::JsonField& field : family->cli().JsonFields(options)) {
      if (field.object.empty()) {
        json[field.name] = field.value;
      } else {
        json[field.object][field.name] = field.value;
      }
    }
  }
  return json;
}

nlohmann::ordered_json NumberJson(const uint8_t* bytes, size_t size, bool hex) {
  if (!hex && size <= 8) {
    uint64_t value = 0;
    for (size_t i = size; i-- > 0;) value = (value << 8) | bytes[i];
    return value;
  }
  return FormatNumber(bytes, size, hex);
}

void PrintJson(const nlohmann::ordered_json& json) {
  std::printf("%s\n",
              json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
}

}  // namespace gpkv::tools
