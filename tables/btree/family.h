// The B-tree family (ordered, volatile): tables::TableFamily over the code
// of tables/btree/. The registry's one entry for it.
//
// A volatile table is declared in the catalog only: its parameter block is
// all zeros, its root offset 0, and it owns no extent of the pool, so the
// family has no layout.h (no bytes of its own in the pool). Opening it
// builds an empty table in memory (RAM on the CPU backend); what it holds is
// gone when the DB closes. Verify notes it, repair has nothing to do, and
// salvage cannot find it (it has no root). The family has no GPU backend
// yet: on kCuda, Open answers Unsupported, and under Backend::kAuto the
// engine opens the table on the CPU backend.
#pragma once

#include <cstdint>

#include "tables/family.h"

namespace gpkv::btree {

// The most keys a volatile table may expect (TableOptions::expected_keys):
// far past any machine's memory.
constexpr uint64_t kMaxExpectedKeys = uint64_t{1} << 40;

// The family object (stateless; lives for the whole program).
const tables::TableFamily& Family();

}  // namespace gpkv::btree
