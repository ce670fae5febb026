// The B-tree family (ordered, volatile): a tables::VolatileFamily over the
// code of tables/btree/. The registry's one entry for it.
//
// A volatile table is declared in the catalog only (tables/volatile_family.h),
// so the family has no layout.h (no bytes of its own in the pool). Opening it
// builds an empty table in memory (GPU memory on the CUDA backend, RAM on
// the CPU backend); what it holds is gone when the DB closes. Where the
// device cannot take it, Open answers Unsupported on kCuda, and under
// Backend::kAuto the engine opens the table on the CPU backend.
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
