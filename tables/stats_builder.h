// tables::StatsBuilder: how a family's PublicStats builds the TableStats of
// one table: the fields every family has, given at construction, then the
// family's properties, each named "<family>.<name>" ("gphash.load-factor"),
// in the order they are added.
//
// Who may call: the families' fronts (tables/<family>/table.cc), tests.
// Thread safety: a builder is used on one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "gpkv/options.h"
#include "gpkv/table.h"

namespace gpkv::tables {

class StatsBuilder {
 public:
  // `family` is the family's name (TableFamily::name); `bytes` as
  // TableStats::bytes.
  StatsBuilder(const char* family, TableKind kind, Durability durability, uint64_t keys,
               uint64_t bytes) {
    stats_.kind = kind;
    stats_.durability = durability;
    stats_.family = family;
    stats_.keys = keys;
    stats_.bytes = bytes;
  }

  // Appends the property "<family>.<name>".
  void Add(std::string_view name, double value) {
    stats_.properties.push_back({stats_.family + "." + std::string(name), value});
  }

  // The stats built; the builder is spent.
  TableStats Take() { return std::move(stats_); }

 private:
  TableStats stats_;
};

}  // namespace gpkv::tables
