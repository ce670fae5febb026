#include "tools/family_flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>

namespace gpkv::tools {
namespace {

// "persistent hash tables": the tables a family serves, in words.
std::string TablesOf(Durability durability, TableKind kind) {
  return std::string(tables::DurabilityName(durability)) + " " + tables::KindName(kind) + " tables";
}

std::vector<uint64_t> PowersOfTwo(uint64_t first, uint64_t last) {
  std::vector<uint64_t> values;
  for (uint64_t value = first; value != 0 && value <= last; value *= 2) values.push_back(value);
  return values;
}

}  // namespace

void FamilyFlags::AddTo(CLI::App* cmd) {
  for (const tables::TableFamily* family : tables::Families()) {
    const std::string group =
        TablesOf(family->durability(), family->kind()) + " (" + family->name() + ")";
    for (const tables::CliFlag& flag : family->cli().Flags()) {
      auto shared = std::find_if(entries_.begin(), entries_.end(),
                                 [&](const Entry& entry) { return entry.name == flag.name; });
      if (shared != entries_.end()) {
        shared->families.push_back(family);
        continue;
      }
      Entry& entry = entries_.emplace_back();
      entry.name = flag.name;
      entry.families.push_back(family);
      CLI::Option* option = cmd->add_option(entry.name, entry.value, flag.help);
      if (flag.value == tables::CliFlag::Value::kSize) {
        option->transform(CLI::AsSizeValue(false));
      }
      switch (flag.check) {
        case tables::CliFlag::Check::kNone:
          break;
        case tables::CliFlag::Check::kRange:
          option->check(CLI::Range(flag.min, flag.max));
          break;
        case tables::CliFlag::Check::kPowerOfTwo:
          option->check(CLI::IsMember(PowersOfTwo(flag.min, flag.max)));
          break;
      }
      option->default_str(std::to_string(flag.get(TableOptions{})));
      option->group(group);
      entry.option = option;
    }
  }
}

std::string FamilyFlags::Apply(TableOptions* options) const {
  const tables::TableFamily* family = tables::FindFamily(options->kind, options->durability);
  for (const Entry& entry : entries_) {
    if (entry.option->count() == 0) continue;
    if (std::find(entry.families.begin(), entry.families.end(), family) != entry.families.end()) {
      continue;
    }
    std::string owners;
    for (const tables::TableFamily* owner : entry.families) {
      owners += (owners.empty() ? "" : " and ") + TablesOf(owner->durability(), owner->kind());
    }
    return entry.name + " is a flag of " + owners + ", not of " +
           TablesOf(options->durability, options->kind);
  }
  if (family == nullptr) return "";
  for (const tables::CliFlag& flag : family->cli().Flags()) {
    const Entry* entry = Find(flag.name);
    if (entry->option->count() == 0) continue;
    // A flag two families share is checked by the first one's range on the
    // command line; each family's own range here.
    if (flag.check == tables::CliFlag::Check::kRange &&
        (entry->value < flag.min || entry->value > flag.max)) {
      return entry->name + ": " + std::to_string(entry->value) + " not in [" +
             std::to_string(flag.min) + " - " + std::to_string(flag.max) + "] for " +
             TablesOf(options->durability, options->kind);
    }
    flag.set(entry->value, options);
  }
  return "";
}

const FamilyFlags::Entry* FamilyFlags::Find(const std::string& name) const {
  for (const Entry& entry : entries_) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace gpkv::tools
