#include "tools/table_json.h"

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
  if (options.kind == TableKind::kHash && options.durability == Durability::kPersistent) {
    json["geometry"] = {{"levels", options.hash.levels},
                        {"hash_locations", options.hash.hash_locations},
                        {"slots_per_bucket", options.hash.slots_per_bucket}};
  }
  return json;
}

}  // namespace gpkv::tools
