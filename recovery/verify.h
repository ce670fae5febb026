// Whole-pool verify and repair, as `gpkv verify` / `gpkv repair` run them.
#pragma once

#include <string>

#include "gpkv/status.h"
#include "recovery/report.h"

namespace gpkv::recovery {

// Read-only full check of the pool at path: header, both superblocks, extent
// table (bounds, overlaps, reachability), catalog, and every table (through its
// family's Verify, tables/family.h). Never writes. A Report with corruption findings is still an
// OK Result; the Status is an error only when the file cannot be read at all
// (NotFound, IOError) — a pool whose header is unreadable yields OK with a
// corruption finding.
Result<Report> VerifyPool(const std::string& path, const ProgressFn& progress);

// Opens the pool writable, runs open-time recovery, then repairs what verify
// would report as corruption: a bad superblock is rewritten from the good one,
// catalog entries whose table root cannot be trusted are dropped, table slots
// that cannot be trusted are dropped (the family's Repair), unreachable extents are
// freed. Returns what it changed. Corruption if the header or both
// superblocks are unreadable (nothing to salvage from).
Result<Report> RepairPool(const std::string& path, const ProgressFn& progress);

}  // namespace gpkv::recovery
