// The one writer of an LSM table's root: creating a table (root and log
// extent), publishing a manifest, and dropping a table (the log's commit
// words in the root are published through the log: tables/log/log.h). Both backends call these.
// Reading and validating is reader.h.
//
// Who may call: tables/lsm/ and tests.
// Thread safety: none; the caller serialises the writers of one table (the
// catalog lock at create and drop, the table's write mutex otherwise).
#pragma once

#include <cstdint>
#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/lsm/layout.h"

namespace gpkv::lsm {

// The family's name, the prefix of its property names.
constexpr const char* kFamilyName = "lsm";

// InvalidArgument, message starting with `where`, unless options describe a
// table this format can hold: key and value sizes, batch_entries a power of
// two 2^4..2^24, max_dead_percent 1..100.
Status CheckOptions(const std::string& where, const TableOptions& options);

// log2 of options.ordered.batch_entries. REQUIRES: CheckOptions passed.
uint32_t Log2Batch(const TableOptions& options);

// Creates a table: allocates the root and the log extent (two halves from M
// = 2 on: RootFlagsFor), writes and persists
// the root with an empty manifest (generation 1, log epoch 1), then publishes
// the active manifest and log words. Durable but unlinked. On an error
// nothing stays allocated.
Result<uint64_t> CreateTable(pm::Pool& pool, uint64_t table_id, const TableOptions& options);

// Writes `next` into the manifest slot of the root that is not active, with
// the next generation (set in *next), level_count recomputed and its
// checksum; persists it; then publishes the root's active_manifest word.
// REQUIRES: the caller holds the table's write mutex; root_offset names a
// validated root.
void PublishManifest(pm::Pool& pool, uint64_t root_offset, Manifest* next);

// Frees every extent of the table rooted at root_offset (runs, log, root).
// Corruption when the root cannot be trusted.
// REQUIRES: the table is unlinked from the catalog and not open.
Status DropTable(pm::Pool& pool, const std::string& table_name, uint64_t root_offset);

}  // namespace gpkv::lsm
