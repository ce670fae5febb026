// tables::FamilyCli: what a table family says in the gpkv tool, as plain
// data: its flags of `gpkv tables create` (each fills a field of
// TableOptions) and what it adds to a table in `gpkv info` and
// `gpkv tables`, text and JSON. tools/ turns the flags into command-line
// options and prints the lines, so the tool names no family and no family
// names a command-line library. Reached as TableFamily::cli().
//
// Who may call: tools/, tests.
// Thread safety: immutable; call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpkv/options.h"

namespace gpkv::tables {

// The one instance of a family's stateless object of type T (its FamilyCli,
// its TableFamily), made at first use: what each family's Cli() and Family()
// return.
template <typename T>
const T& Instance() {
  static const T instance;
  return instance;
}

// One flag of `gpkv tables create`. A flag belongs to the families that
// declare it; given for a table of another family it is a usage error.
struct CliFlag {
  // How the value is written.
  enum class Value {
    kInteger,  // a decimal number
    kSize,     // a number with an optional K, M or G suffix (powers of 1024)
  };
  // What the tool checks before the family's CheckOptions sees the value.
  enum class Check {
    kNone,        // only CheckOptions judges it
    kRange,       // min..max
    kPowerOfTwo,  // a power of two in min..max
  };

  const char* name = "";  // "--levels"
  const char* help = "";
  Value value = Value::kInteger;
  Check check = Check::kNone;
  uint64_t min = 0;
  uint64_t max = 0;
  // The field the flag fills; get(TableOptions{}) is the default shown.
  uint64_t (*get)(const TableOptions& options) = nullptr;
  void (*set)(uint64_t value, TableOptions* options) = nullptr;
  // Whether a table of these options is described by the flag (its field in
  // a dump's header); null: every table of the family. A flag of one mode of
  // a family (the persistent hash table's log) describes that mode only.
  bool (*describes)(const TableOptions& options) = nullptr;
};

// A line under a table in `gpkv info`: "  <label padded to 12> <text>".
struct InfoLine {
  std::string label;
  std::string text;
};

// A number in a table's JSON (`gpkv info --json`, `gpkv tables --json`):
// json[object][name] = value, or json[name] = value when object is empty.
struct JsonField {
  std::string object;
  std::string name;
  uint64_t value = 0;
};

// By default a family has no flags, no geometry, no lines in `gpkv info` and
// no fields in the JSON beyond the generic ones: a family with no shape to
// choose (a volatile one) is a FamilyCli as it is, given its properties' help.
class FamilyCli {
 public:
  explicit FamilyCli(const char* properties_help) : properties_help_(properties_help) {}
  virtual ~FamilyCli() = default;
  FamilyCli(const FamilyCli&) = delete;
  FamilyCli& operator=(const FamilyCli&) = delete;

  // Its flags of `gpkv tables create`, in the order of the help text.
  virtual const std::vector<CliFlag>& Flags() const {
    static const std::vector<CliFlag> none;
    return none;
  }
  // What `gpkv info --help` lists of its properties (Table::Stats).
  const char* PropertiesHelp() const { return properties_help_; }
  // Its GEOMETRY column in `gpkv tables`; "-" when it has none.
  virtual std::string Geometry(const TableOptions&) const { return "-"; }
  // Its lines under the table's first line in `gpkv info`.
  virtual std::vector<InfoLine> InfoLines(const TableOptions&) const { return {}; }
  // Its fields after the generic ones in the table's JSON.
  virtual std::vector<JsonField> JsonFields(const TableOptions&) const { return {}; }

 private:
  const char* const properties_help_;
};

}  // namespace gpkv::tables
