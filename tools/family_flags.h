// The table families' flags of `gpkv tables create` as CLI11 options. Each
// family declares its flags as plain data (tables/family_cli.h); this adds
// them to the command, listed in the help under their family, and once the
// table's kind and durability are known fills TableOptions from those the
// table's family declares. A flag given for a table of another family is a
// usage error. Used only by tools/.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "gpkv/options.h"
#include "tables/registry.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gpkv::tools {

class FamilyFlags {
 public:
  // Adds the flags of every registered family to cmd. A name that several
  // families declare is one option, listed, written and checked as the first
  // of them declares it, and filling the field of whichever family the table
  // has.
  void AddTo(CLI::App* cmd);

  // Fills the fields of *options that the flags given set, for the family of
  // (options->kind, options->durability). Returns "" or, when a flag given
  // is not one of that family's, the usage error naming the flag and the
  // kind of table.
  std::string Apply(TableOptions* options) const;

 private:
  struct Entry {
    std::string name;
    uint64_t value = 0;
    CLI::Option* option = nullptr;
    std::vector<const tables::TableFamily*> families;  // those that declare it
  };

  const Entry* Find(const std::string& name) const;

  std::deque<Entry> entries_;  // a deque: CLI11 holds pointers to the values
};

}  // namespace gpkv::tools
