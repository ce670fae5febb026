#include "tables/btree/cli.h"

#include <string>
#include <vector>

namespace gpkv::btree {
namespace {

// A volatile ordered table has no shape to choose: no flags, no geometry.
// `gpkv info` says of every volatile table that its contents live in memory.
class BtreeCli final : public tables::FamilyCli {
 public:
  const std::vector<tables::CliFlag>& Flags() const override {
    static const std::vector<tables::CliFlag> flags;
    return flags;
  }

  const char* PropertiesHelp() const override {
    return "btree.versions, .tombstones, .snapshots, .reclaimed, .timestamp";
  }

  std::string Geometry(const TableOptions&) const override { return "-"; }

  std::vector<tables::InfoLine> InfoLines(const TableOptions&) const override { return {}; }

  std::vector<tables::JsonField> JsonFields(const TableOptions&) const override { return {}; }
};

}  // namespace

const tables::FamilyCli& Cli() {
  static const BtreeCli cli;
  return cli;
}

}  // namespace gpkv::btree
