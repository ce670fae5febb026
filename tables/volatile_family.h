// tables::VolatileFamily: what every volatile family (the slab hash, the
// B-tree) does alike with a table that lives in memory only. Such a table is
// declared in the catalog and nowhere else in the pool: its parameter block is
// all zeros, its root offset 0, and it owns no extent. So Create writes
// nothing, Drop frees nothing, Extents is empty, Verify notes the table,
// Repair has nothing to do, and Salvage cannot find it (it has no root).
// Opening one builds an empty table through the family's open function; what
// it holds is gone when the DB closes.
//
// A volatile family derives from it with its name, kind, CLI hook, the
// advice its CheckOptions gives for a hash geometry it has no use for, and
// its open function; it overrides CheckOptions only to check more.
//
// Who may derive: the volatile families (tables/<family>/family.cc).
// Thread safety: as TableFamily: stateless and immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tables/family.h"

namespace gpkv::tables {

// The most keys a volatile table may expect (TableOptions::expected_keys):
// far past any machine's memory, low enough that sizes computed from it
// cannot overflow.
constexpr uint64_t kMaxVolatileExpectedKeys = uint64_t{1} << 40;

// A family's empty table named `name` for `options` (checked by the family),
// on `backend` (kCpu or kCuda: on CUDA device `cuda_device`) with
// `cpu_threads` workers on the CPU; errors start with `where`
// ("pool.gpkv: table 'cache'").
using OpenEmptyTableFn = Result<std::unique_ptr<Table>> (*)(const std::string& where,
                                                            const std::string& name,
                                                            const TableOptions& options,
                                                            Backend backend, int cpu_threads,
                                                            int cuda_device);

class VolatileFamily : public TableFamily {
 public:
  // Key and value sizes, the expected keys (at most
  // kMaxVolatileExpectedKeys) and a hash geometry left at its default.
  Status CheckOptions(const std::string& where, const TableOptions& options) const override;
  // The block is all zeros: a volatile table has no parameters of its own.
  void EncodeParams(const TableOptions& options,
                    uint8_t (&params)[format::kCatalogParamsSize]) const final;
  // Resets the hash geometry and the ordered options to their defaults.
  Status DecodeParams(const std::string& where, const uint8_t (&params)[format::kCatalogParamsSize],
                      TableOptions* options) const final;

  Result<uint64_t> Create(pm::Pool& pool, uint64_t table_id,
                          const TableOptions& options) const final;
  Result<std::unique_ptr<Table>> Open(const OpenContext& context, const format::CatalogEntry& entry,
                                      const TableOptions& options) const final;
  Status Drop(pm::Pool& pool, const format::CatalogEntry& entry) const final;

  Result<std::vector<TableExtent>> Extents(const pm::Pool& pool, const format::CatalogEntry& entry,
                                           bool require_allocated) const final;
  Status Verify(const pm::Pool& pool, const format::CatalogEntry& entry, recovery::Report& report,
                const recovery::ProgressFn& progress) const final;
  Status Repair(pm::Pool& pool, const format::CatalogEntry& entry, recovery::Report& report,
                const recovery::ProgressFn& progress) const final;
  Result<format::CatalogEntry> Salvage(const pm::Pool& pool, const format::ExtentEntry& root_extent,
                                       const std::string& name) const final;

 protected:
  // `geometry_advice` ends CheckOptions' message for a hash geometry other
  // than the default (after "<where>: ").
  VolatileFamily(const char* name, TableKind kind, const FamilyCli& cli,
                 const char* geometry_advice, OpenEmptyTableFn open_empty)
      : TableFamily(name, kind, Durability::kVolatile, cli),
        geometry_advice_(geometry_advice),
        open_empty_(open_empty) {}

 private:
  const char* const geometry_advice_;
  const OpenEmptyTableFn open_empty_;
};

}  // namespace gpkv::tables
