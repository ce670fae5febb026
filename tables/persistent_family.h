// tables::PersistentFamily: what every persistent family (GPHash, the LSM)
// does alike as a TableFamily. Such a family writes, checks and repairs its
// bytes in its own files (tables/<family>/root.*, check.*), one function a
// call; its family object names those functions in a PersistentFamilyCalls
// table, and PersistentFamily hands CheckOptions, Create, Drop, Extents,
// Verify and Repair to them. The family writes what is its own: its catalog
// parameter block (EncodeParams, DecodeParams), its Open (which backend, its
// front) and its Salvage (the options read back from its root).
//
// Who may derive: the persistent families (tables/<family>/family.cc).
// Thread safety: as TableFamily: stateless and immutable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tables/family.h"

namespace gpkv::tables {

// A persistent family's functions behind the TableFamily calls of the same
// names, with the contracts of tables/family.h; a table is named by its
// catalog entry's name, id and root offset.
struct PersistentFamilyCalls {
  Status (*check_options)(const std::string& where, const TableOptions& options);
  Result<uint64_t> (*create)(pm::Pool& pool, uint64_t table_id, const TableOptions& options);
  Status (*drop)(pm::Pool& pool, const std::string& table_name, uint64_t root_offset);
  Result<std::vector<TableExtent>> (*extents)(const pm::Pool& pool, const std::string& table_name,
                                              uint64_t root_offset, bool require_allocated);
  Status (*verify)(const pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                   uint64_t root_offset, recovery::Report& report,
                   const recovery::ProgressFn& progress);
  Status (*repair)(pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                   uint64_t root_offset, recovery::Report& report,
                   const recovery::ProgressFn& progress);
};

class PersistentFamily : public TableFamily {
 public:
  Status CheckOptions(const std::string& where, const TableOptions& options) const final {
    return calls_.check_options(where, options);
  }
  Result<uint64_t> Create(pm::Pool& pool, uint64_t table_id,
                          const TableOptions& options) const final {
    return calls_.create(pool, table_id, options);
  }
  Status Drop(pm::Pool& pool, const format::CatalogEntry& entry) const final {
    return calls_.drop(pool, entry.name, entry.root_offset);
  }
  Result<std::vector<TableExtent>> Extents(const pm::Pool& pool, const format::CatalogEntry& entry,
                                           bool require_allocated) const final {
    return calls_.extents(pool, entry.name, entry.root_offset, require_allocated);
  }
  Status Verify(const pm::Pool& pool, const format::CatalogEntry& entry, recovery::Report& report,
                const recovery::ProgressFn& progress) const final {
    return calls_.verify(pool, entry.name, entry.table_id, entry.root_offset, report, progress);
  }
  Status Repair(pm::Pool& pool, const format::CatalogEntry& entry, recovery::Report& report,
                const recovery::ProgressFn& progress) const final {
    return calls_.repair(pool, entry.name, entry.table_id, entry.root_offset, report, progress);
  }

 protected:
  PersistentFamily(const char* name, TableKind kind, const FamilyCli& cli,
                   const PersistentFamilyCalls& calls)
      : TableFamily(name, kind, Durability::kPersistent, cli), calls_(calls) {}

 private:
  const PersistentFamilyCalls calls_;
};

}  // namespace gpkv::tables
