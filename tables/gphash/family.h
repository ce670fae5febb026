// The GPHash family (hash, persistent): tables::TableFamily over the code of
// tables/gphash/. The registry's one entry for it.
#pragma once

#include "tables/family.h"

namespace gpkv::gphash {

// The family object (stateless; lives for the whole program).
const tables::TableFamily& Family();

}  // namespace gpkv::gphash
