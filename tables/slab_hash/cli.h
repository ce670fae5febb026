// The slab-hash family (hash, volatile) in the gpkv tool: its flags of
// `gpkv tables create` and what it adds to a table in `gpkv info` and
// `gpkv tables` (tables/family_cli.h). Plain data: it names no command-line
// library.
#pragma once

#include "tables/family.h"

namespace gpkv::slab_hash {

// The family's CLI hook (stateless; lives for the whole program).
const tables::FamilyCli& Cli();

}  // namespace gpkv::slab_hash
