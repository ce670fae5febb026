// What the verify and repair of the persistent families share, around each
// family's own check of its parts: the offset a Corruption names, the
// finding of a root that belongs to another table id, a table's report, and
// repair's need of a writable pool.
//
// Who may call: the families' check.* (verify, repair). Thread safety:
// plain functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/root_reader.h"

namespace gpkv::tables {

// The offset a Corruption's message names ("(offset 0x3a000)"), else
// `fallback`: the offset field of the finding that repeats it.
uint64_t OffsetNamedIn(const Status& status, uint64_t fallback);

// Appends a Corruption finding to `report` when the root of `view` belongs
// to another table id than the catalog's `table_id`.
void CheckTableId(const pm::Pool& pool, const RootIdentity& view, uint64_t table_id,
                  recovery::Report& report);

// Appends `findings` and the TableReport of `view` with `keys` live keys.
void AppendTableReport(const RootIdentity& view, const std::vector<recovery::Finding>& findings,
                       uint64_t keys, recovery::Report& report);

// InvalidArgument unless `pool` is open writable (what repair needs).
Status RequireWritable(const pm::Pool& pool);

}  // namespace gpkv::tables
