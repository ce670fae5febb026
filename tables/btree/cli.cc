#include "tables/btree/cli.h"

namespace gpkv::btree {

// A volatile ordered table has no shape to choose: no flags, no geometry.
// `gpkv info` says of every volatile table that its contents live in memory.
const tables::FamilyCli& Cli() {
  static const tables::FamilyCli cli(
      "btree.versions, .tombstones, .snapshots, .reclaimed, .timestamp");
  return cli;
}

}  // namespace gpkv::btree
