// gphash::GphashTable: the gpkv::Table of a persistent hash table. Hands each
// batch to the backend the family chose at open (backend.h: cpu::CpuBackend,
// or gpu::GpuBackend in a CUDA build); both read and write the same bytes.
// The engine checks every batch's spans before they get here
// (engine/checked_table.h). Stats() reports the backend's counters as
// "gphash.*" properties and its index mode (TableStats::mode).
//
// Thread safety: as gpkv::Table promises; the backends handle concurrent
// batches.
#pragma once

#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/gphash/backend.h"
#include "tables/gphash/stats.h"
#include "tables/hash_family_table.h"

namespace gpkv::gphash {

// The family's name, the prefix of its property names.
constexpr const char* kFamilyName = "gphash";

// The public stats of a table from its backend's counters: keys, pool bytes
// (root, index, value cells) and the properties gphash.slots,
// gphash.load-factor, gphash.levels, gphash.top-buckets, gphash.resizes,
// gphash.index-bytes, gphash.value-bytes, gphash.resizing (0 or 1) and the
// GPU's cache of hot buckets: gphash.cache-buckets, .cache-table-buckets,
// .cache-reloads, .cache-buckets-loaded, .cache-get-reads,
// .cache-get-pool-reads.
TableStats PublicStats(const Stats& stats);

class GphashTable final : public tables::HashFamilyTable<Backend> {
 public:
  GphashTable(std::string name, TableOptions options, std::unique_ptr<Backend> backend);

  Result<TableStats> Stats() override;
  Status Scan(const ScanVisitor& visit) override;
};

}  // namespace gpkv::gphash
