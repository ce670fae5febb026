#include "tables/slab_hash/cli.h"

#include <string>
#include <vector>

namespace gpkv::slab_hash {
namespace {

// A volatile hash table's shape follows from its expected keys alone: no
// flags, no geometry. `gpkv info` says of every volatile table that its
// contents live in memory.
class SlabHashCli final : public tables::FamilyCli {
 public:
  const std::vector<tables::CliFlag>& Flags() const override {
    static const std::vector<tables::CliFlag> flags;
    return flags;
  }

  const char* PropertiesHelp() const override {
    return "slab_hash.buckets, .slabs, .slots, .dead-slots, .load-factor,\n"
           ".memory-utilisation, .super-blocks, .rehashes, .rehash-seconds, .flushes";
  }

  std::string Geometry(const TableOptions&) const override { return "-"; }

  std::vector<tables::InfoLine> InfoLines(const TableOptions&) const override { return {}; }

  std::vector<tables::JsonField> JsonFields(const TableOptions&) const override { return {}; }
};

}  // namespace

const tables::FamilyCli& Cli() {
  static const SlabHashCli cli;
  return cli;
}

}  // namespace gpkv::slab_hash
