// The slab-hash family (hash, volatile): tables::TableFamily over the code of
// tables/slab_hash/. The registry's one entry for it.
//
// A volatile table is declared in the catalog only: its parameter block is
// all zeros, its root offset 0, and it owns no extent of the pool. Opening
// it builds an empty table in GPU memory (or RAM on the CPU backend); what
// it holds is gone when the DB closes. Verify notes it, repair has nothing
// to do, and salvage cannot find it (it has no root).
#pragma once

#include <cstdint>

#include "tables/family.h"

namespace gpkv::slab_hash {

// The most keys a volatile table may expect (TableOptions::expected_keys):
// far past any machine's memory, low enough that sizes computed from it
// cannot overflow.
constexpr uint64_t kMaxExpectedKeys = uint64_t{1} << 40;

// The family object (stateless; lives for the whole program).
const tables::TableFamily& Family();

}  // namespace gpkv::slab_hash
