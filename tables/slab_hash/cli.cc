#include "tables/slab_hash/cli.h"

namespace gpkv::slab_hash {

// A volatile hash table's shape follows from its expected keys alone: no
// flags, no geometry. `gpkv info` says of every volatile table that its
// contents live in memory.
const tables::FamilyCli& Cli() {
  static const tables::FamilyCli cli(
      "slab_hash.buckets, .slabs, .slots, .dead-slots, .load-factor,\n"
      ".memory-utilisation, .super-blocks, .rehashes, .rehash-seconds, .flushes");
  return cli;
}

}  // namespace gpkv::slab_hash
