#include "tools/table_json.h"

#include "tables/registry.h"
#include "tools/cli_common.h"

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

}  // namespace gpkv::tools
