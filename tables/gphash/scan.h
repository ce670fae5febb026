// The host scan of a GPHash table's live pairs, which both backends' Scan
// run: every VALID slot of the given LevelSet whose key it holds is the
// winner of the duplicate rule (layout.h) is visited once, read with the
// slot-word seqlock, so both backends visit the same pairs.
//
// Who may call: tables/gphash/ (cpu/, gpu/) and tests.
// Thread safety: may run beside batches; a pair written during the scan may
// or may not be visited.
#pragma once

#include <cstdint>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash {

// Calls visit(key, value) for every live pair of the table rooted at
// root_offset whose levels are `level_set`, until visit returns false.
// REQUIRES: the root was validated at open (reader.h); the caller keeps
// level_set current for the whole scan (no resize runs) and keeps value
// cells from being reused meanwhile (an epoch); visit does not call into the
// table.
Status ScanLivePairs(const pm::Pool& pool, uint64_t root_offset, const gphash::LevelSet& level_set,
                     const Table::ScanVisitor& visit);

}  // namespace gpkv::gphash
