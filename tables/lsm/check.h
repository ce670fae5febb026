// Checking and repairing an LSM table's bytes without opening the table:
// the extent list of the open-time sweep, verify and repair.
//
// Who may call: tables/lsm/family.cc and tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/family.h"

namespace gpkv::lsm {

// Root, log and the runs of the active manifest, each bounds-checked (and
// allocated, with require_allocated). Corruption when the root or manifest
// cannot be trusted.
Result<std::vector<tables::TableExtent>> LsmExtents(const pm::Pool& pool,
                                                    const std::string& table_name,
                                                    uint64_t root_offset, bool require_allocated);

// Read-only check: root, manifest, every run (header, data checksum, keys in
// strictly ascending order, meta words, sequence numbers not past the
// manifest's) and every published log record. Appends a finding per damaged
// run or record and a TableReport (keys = live keys of the intact parts).
// It reports no progress: `progress` is not called.
Status VerifyLsm(const pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                 uint64_t root_offset, recovery::Report& report,
                 const recovery::ProgressFn& progress);

// Drops what VerifyLsm finds damaged: a damaged run leaves the manifest (its
// entries are lost; the next sweep frees its extent), a damaged log record
// and every record after it leave the log. Corruption when the root or the
// active manifest cannot be trusted (the caller drops the table). It reports
// no progress: `progress` is not called.
Status RepairLsm(pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                 uint64_t root_offset, recovery::Report& report,
                 const recovery::ProgressFn& progress);

}  // namespace gpkv::lsm
