// The slab-hash family (hash, volatile): a tables::VolatileFamily over the
// code of tables/slab_hash/. The registry's one entry for it.
//
// A volatile table is declared in the catalog only (tables/volatile_family.h).
// Opening it builds an empty table in GPU memory (or RAM on the CPU backend);
// what it holds is gone when the DB closes.
#pragma once

#include <cstdint>

#include "tables/family.h"
#include "tables/volatile_family.h"

namespace gpkv::slab_hash {

// The most keys a volatile table may expect (TableOptions::expected_keys).
constexpr uint64_t kMaxExpectedKeys = tables::kMaxVolatileExpectedKeys;

// The family object (stateless; lives for the whole program).
const tables::TableFamily& Family();

}  // namespace gpkv::slab_hash
