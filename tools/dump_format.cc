#include "tools/dump_format.h"

#include <map>
#include <sstream>

#include "tables/registry.h"
#include "tools/cli_common.h"

namespace gpkv::tools {
namespace {

constexpr std::string_view kMarker = "gpkv-dump";

using Fields = std::map<std::string, std::string>;

// "8-byte keys and 16-byte values".
std::string Sizes(uint64_t key_size, uint64_t value_size) {
  return std::to_string(key_size) + "-byte keys and " + std::to_string(value_size) + "-byte values";
}

// The number of field `name`, or false when it is missing or not a number.
bool NumberField(const Fields& fields, const std::string& name, uint64_t* value) {
  auto found = fields.find(name);
  if (found == fields.end() || found->second.empty() || found->second.size() > 19) return false;
  *value = 0;
  for (char digit : found->second) {
    if (digit < '0' || digit > '9') return false;
    *value = *value * 10 + static_cast<uint64_t>(digit - '0');
  }
  return true;
}

// The header field a family flag is written as: "--hash-locations" ->
// "hash_locations".
std::string FieldName(const tables::CliFlag& flag) {
  std::string name = flag.name;
  name.erase(0, name.find_first_not_of('-'));
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

// The NAME=VALUE fields of the dump header `line`, after its format is
// checked: InvalidArgument when malformed, Unsupported for a newer format.
Status ParseFields(std::string_view line, const std::string& where, Fields* fields) {
  std::istringstream words{std::string(line.substr(line.find('#') + 1))};
  std::string word;
  words >> word;  // the marker
  while (words >> word) {
    size_t equals = word.find('=');
    if (equals == std::string::npos) {
      return Status::InvalidArgument(where + "dump header: '" + word + "' is not NAME=VALUE");
    }
    (*fields)[word.substr(0, equals)] = word.substr(equals + 1);
  }
  uint64_t format = 0;
  if (!NumberField(*fields, "format", &format)) {
    return Status::InvalidArgument(where + "dump header without a format=N");
  }
  if (format > kDumpFormat) {
    return Status::Unsupported(where + "written by a newer gpkv (dump format " +
                               std::to_string(format) + "; this build reads up to " +
                               std::to_string(kDumpFormat) + ")");
  }
  return Status::OK();
}

// The key and value sizes the header `fields` name.
Status SizeFields(const Fields& fields, const std::string& where, uint64_t* key_size,
                  uint64_t* value_size) {
  if (!NumberField(fields, "key_size", key_size) ||
      !NumberField(fields, "value_size", value_size)) {
    return Status::InvalidArgument(where + "dump header without key_size=N and value_size=N");
  }
  return Status::OK();
}

}  // namespace

std::string DumpHeaderLine(const TableOptions& options) {
  std::string line = "# " + std::string(kMarker) + " format=" + std::to_string(kDumpFormat) +
                     " kind=" + KindName(options.kind) +
                     " durability=" + DurabilityName(options.durability) +
                     " key_size=" + std::to_string(options.key_size) +
                     " value_size=" + std::to_string(options.value_size) +
                     " expected_keys=" + std::to_string(options.expected_keys);
  if (const tables::TableFamily* family = tables::FindFamily(options.kind, options.durability)) {
    for (const tables::CliFlag& flag : family->cli().Flags()) {
      if (flag.describes != nullptr && !flag.describes(options)) continue;
      line += " " + FieldName(flag) + "=" + std::to_string(flag.get(options));
    }
  }
  return line;
}

bool IsDumpHeader(std::string_view line) {
  size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos || line[start] != '#') return false;
  std::istringstream words{std::string(line.substr(start + 1))};
  std::string first;
  return (words >> first) && first == kMarker;
}

Status CheckDumpHeader(std::string_view line, const std::string& where, const std::string& table,
                       uint32_t key_size, uint32_t value_size) {
  Fields fields;
  GPKV_RETURN_IF_ERROR(ParseFields(line, where, &fields));
  uint64_t dumped_key_size = 0;
  uint64_t dumped_value_size = 0;
  GPKV_RETURN_IF_ERROR(SizeFields(fields, where, &dumped_key_size, &dumped_value_size));
  if (dumped_key_size != key_size || dumped_value_size != value_size) {
    return Status::InvalidArgument(where + "a dump of a table with " +
                                   Sizes(dumped_key_size, dumped_value_size) + "; table '" + table +
                                   "' has " + Sizes(key_size, value_size) +
                                   " (create a table of the dump's sizes to load it)");
  }
  return Status::OK();
}

Status OptionsFromDumpHeader(std::string_view line, const std::string& where,
                             TableOptions* options) {
  Fields fields;
  GPKV_RETURN_IF_ERROR(ParseFields(line, where, &fields));
  uint64_t key_size = 0;
  uint64_t value_size = 0;
  GPKV_RETURN_IF_ERROR(SizeFields(fields, where, &key_size, &value_size));
  if (key_size > UINT32_MAX || value_size > UINT32_MAX) {
    return Status::InvalidArgument(where + "dump header: " + Sizes(key_size, value_size));
  }
  const std::string kind = fields.count("kind") ? fields.at("kind") : "";
  const std::string durability = fields.count("durability") ? fields.at("durability") : "";
  *options = TableOptions{};
  bool kind_known = false;
  for (TableKind known : {TableKind::kHash, TableKind::kOrdered}) {
    if (kind == KindName(known)) {
      options->kind = known;
      kind_known = true;
    }
  }
  bool durability_known = false;
  for (Durability known : {Durability::kPersistent, Durability::kVolatile}) {
    if (durability == DurabilityName(known)) {
      options->durability = known;
      durability_known = true;
    }
  }
  if (!kind_known || !durability_known) {
    return Status::InvalidArgument(where + "dump header: kind '" + kind + "', durability '" +
                                   durability + "' do not name a kind of table");
  }
  options->key_size = static_cast<uint32_t>(key_size);
  options->value_size = static_cast<uint32_t>(value_size);
  if (fields.count("expected_keys") != 0 &&
      !NumberField(fields, "expected_keys", &options->expected_keys)) {
    return Status::InvalidArgument(where + "dump header: expected_keys is not a number");
  }
  const tables::TableFamily* family = tables::FindFamily(options->kind, options->durability);
  if (family == nullptr) {
    return Status::Unsupported(where + "dump of a " + durability + " " + kind +
                               " table, which this build has no family for");
  }
  for (const tables::CliFlag& flag : family->cli().Flags()) {
    const std::string name = FieldName(flag);
    if (fields.count(name) == 0) continue;
    uint64_t value = 0;
    if (!NumberField(fields, name, &value)) {
      return Status::InvalidArgument(where + "dump header: " + name + " is not a number");
    }
    flag.set(value, options);
  }
  return Status::OK();
}

}  // namespace gpkv::tools
