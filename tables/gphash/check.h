// Reading, checking and repairing a GPHash table's bytes without the backend:
// used at open (engine, backends), by verify and by repair.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/family.h"

namespace gpkv::gphash {

// Every extent the table rooted at root_offset references (root, levels of
// the current LevelSet, value chunks) with its length and kind, each
// bounds-checked. Corruption if the root cannot be trusted, or (with
// require_allocated) an extent is not allocated in the extent table.
Result<std::vector<tables::TableExtent>> GphashExtents(const pm::Pool& pool,
                                                       const std::string& table_name,
                                                       uint64_t root_offset,
                                                       bool require_allocated);

// Full read-only check of one table: root checksum and fields, LevelSet,
// every slot word's state, every VALID key in one of its candidate buckets,
// no key VALID twice, value references inside a chunk, cell-aligned and
// unique. Appends findings and a TableReport to `report`.
Status VerifyGphash(const pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                    uint64_t root_offset, recovery::Report& report,
                    const recovery::ProgressFn& progress);

// Repairs one table in place: slots with invalid states, keys outside their
// candidate buckets and slots with invalid value references are dropped;
// INSERT slots cleared; duplicates resolved. Appends to `report` what changed.
// Corruption if the root itself cannot be trusted (the caller then drops the
// table from the catalog).
Status RepairGphash(pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                    uint64_t root_offset, recovery::Report& report,
                    const recovery::ProgressFn& progress);

}  // namespace gpkv::gphash
