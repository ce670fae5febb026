#include "tools/dump_format.h"

#include <map>
#include <sstream>

#include "tools/cli_common.h"

namespace gpkv::tools {
namespace {

constexpr std::string_view kMarker = "gpkv-dump";

// "8-byte keys and 16-byte values".
std::string Sizes(uint64_t key_size, uint64_t value_size) {
  return std::to_string(key_size) + "-byte keys and " + std::to_string(value_size) + "-byte values";
}

// The number of field `name`, or false when it is missing or not a number.
bool NumberField(const std::map<std::string, std::string>& fields, const std::string& name,
                 uint64_t* value) {
  auto found = fields.find(name);
  if (found == fields.end() || found->second.empty() || found->second.size() > 9) return false;
  *value = 0;
  for (char digit : found->second) {
    if (digit < '0' || digit > '9') return false;
    *value = *value * 10 + static_cast<uint64_t>(digit - '0');
  }
  return true;
}

}  // namespace

std::string DumpHeaderLine(const TableOptions& options) {
  return "# " + std::string(kMarker) + " format=" + std::to_string(kDumpFormat) +
         " kind=" + KindName(options.kind) + " durability=" + DurabilityName(options.durability) +
         " key_size=" + std::to_string(options.key_size) +
         " value_size=" + std::to_string(options.value_size);
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
  std::istringstream words{std::string(line.substr(line.find('#') + 1))};
  std::string word;
  words >> word;  // the marker
  std::map<std::string, std::string> fields;
  while (words >> word) {
    size_t equals = word.find('=');
    if (equals == std::string::npos) {
      return Status::InvalidArgument(where + "dump header: '" + word + "' is not NAME=VALUE");
    }
    fields[word.substr(0, equals)] = word.substr(equals + 1);
  }
  uint64_t format = 0;
  if (!NumberField(fields, "format", &format)) {
    return Status::InvalidArgument(where + "dump header without a format=N");
  }
  if (format > kDumpFormat) {
    return Status::Unsupported(where + "written by a newer gpkv (dump format " +
                               std::to_string(format) + "; this build reads up to " +
                               std::to_string(kDumpFormat) + ")");
  }
  uint64_t dumped_key_size = 0;
  uint64_t dumped_value_size = 0;
  if (!NumberField(fields, "key_size", &dumped_key_size) ||
      !NumberField(fields, "value_size", &dumped_value_size)) {
    return Status::InvalidArgument(where + "dump header without key_size=N and value_size=N");
  }
  if (dumped_key_size != key_size || dumped_value_size != value_size) {
    return Status::InvalidArgument(where + "a dump of a table with " +
                                   Sizes(dumped_key_size, dumped_value_size) + "; table '" + table +
                                   "' has " + Sizes(key_size, value_size) +
                                   " (create a table of the dump's sizes to load it)");
  }
  return Status::OK();
}

}  // namespace gpkv::tools
