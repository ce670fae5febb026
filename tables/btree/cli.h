// The B-tree family (ordered, volatile) in the gpkv tool: its flags of
// `gpkv tables create` and what it adds to a table in `gpkv info` and
// `gpkv tables` (tables/family_cli.h). Plain data: it names no command-line
// library.
#pragma once

#include "tables/family.h"

namespace gpkv::btree {

// The family's CLI hook (stateless; lives for the whole program).
const tables::FamilyCli& Cli();

}  // namespace gpkv::btree
