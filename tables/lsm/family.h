// The LSM family (ordered, persistent): tables::TableFamily over the code of
// tables/lsm/. The registry's one entry for it.
#pragma once

#include "tables/family.h"

namespace gpkv::lsm {

// The family object (stateless; lives for the whole program).
const tables::TableFamily& Family();

}  // namespace gpkv::lsm
