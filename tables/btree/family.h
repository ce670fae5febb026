// The B-tree family (ordered, volatile): a tables::VolatileFamily over the
// code of tables/btree/. The registry's one entry for it.
//
// A volatile table is declared in the catalog only (tables/volatile_family.h),
// so the family has no layout.h (no bytes of its own in the pool). Opening it
// builds an empty table in memory (RAM on the CPU backend); what it holds is
// gone when the DB closes. The family has no GPU backend
// yet: on kCuda, Open answers Unsupported, and under Backend::kAuto the
// engine opens the table on the CPU backend.
#pragma once

#include <cstdint>

#include "tables/family.h"
#include "tables/volatile_family.h"

namespace gpkv::btree {

// The most keys a volatile table may expect (TableOptions::expected_keys).
constexpr uint64_t kMaxExpectedKeys = tables::kMaxVolatileExpectedKeys;

// The family object (stateless; lives for the whole program).
const tables::TableFamily& Family();

}  // namespace gpkv::btree
