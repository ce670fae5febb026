// Checking and repairing a logged hash table's bytes without opening it:
// the extent sweep at open, verify and repair (the family hands them a root
// whose magic word is the logged mode's).
//
// Who may call: tables/gphash/ and tests.
// Thread safety: plain functions; repair requires that no one else uses the
// table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/family.h"

namespace gpkv::gphash::logged {

// The root, the log and the active image, each bounds-checked (and
// allocated, with require_allocated). Corruption when the root cannot be
// trusted.
Result<std::vector<tables::TableExtent>> LoggedExtents(const pm::Pool& pool,
                                                       const std::string& table_name,
                                                       uint64_t root_offset,
                                                       bool require_allocated);

// Read-only check: root, active checkpoint, image (header, data checksum,
// key order), every published log record of both halves (bounds, sequence
// numbers, checksums). Appends findings (file, table and offset) and a TableReport
// with the live keys.
Status VerifyLogged(const pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                    uint64_t root_offset, recovery::Report& report,
                    const recovery::ProgressFn& progress);

// Repairs in place what verify reports: a damaged log record and every one
// after it are dropped (its half's log word moved back to the last intact
// record; a damage in the checkpoint's half drops the other half's records
// too),
// a damaged image is dropped from the checkpoint (its keys are lost; the
// log's records stay). Appends what changed to `report`. Corruption when the
// root cannot be trusted.
Status RepairLogged(pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                    uint64_t root_offset, recovery::Report& report,
                    const recovery::ProgressFn& progress);

}  // namespace gpkv::gphash::logged
