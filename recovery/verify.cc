#include "recovery/verify.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>

#include "format/checksum.h"
#include "format/pool_layout.h"
#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "recovery/catalog.h"
#include "tables/registry.h"

namespace gpkv::recovery {
namespace {

using Severity = Finding::Severity;

void Add(Report& report, Severity severity, std::string region, uint64_t offset,
         std::string message) {
  report.findings.push_back(Finding{severity, std::move(region), offset, std::move(message)});
}

// A status from opening or reading becomes a finding where it is about the
// pool's bytes (Corruption, Unsupported); other errors stay errors.
bool AsFinding(const Status& status, Report& report, const std::string& region) {
  if (status.IsCorruption() || status.IsUnsupported()) {
    Add(report, Severity::kCorruption, region, 0, status.ToString());
    return true;
  }
  return false;
}

bool SuperblockCopyValid(const pm::Pool& pool, int index, uint64_t* magic) {
  format::Superblock copy;
  std::memcpy(&copy, pool.At<uint8_t>(format::kSuperblockOffset[index]), sizeof(copy));
  *magic = copy.magic;
  return copy.magic == format::kSuperblockMagic && copy.generation > 0 &&
         copy.checksum == format::Checksum64(&copy, offsetof(format::Superblock, checksum));
}

// Superblock copy other than the current one that is damaged (not merely
// never written): returns its index, or -1.
int DamagedSuperblock(const pm::Pool& pool) {
  for (int i = 0; i < 2; ++i) {
    uint64_t magic = 0;
    if (!SuperblockCopyValid(pool, i, &magic) && magic != 0) return i;
  }
  return -1;
}

std::string TableRegion(const format::CatalogEntry& entry) {
  return std::string("table '") + entry.name + "'";
}

// The family of a catalog entry, or null (a family this build lacks).
const tables::TableFamily* FamilyOrNull(const pm::Pool& pool, const format::CatalogEntry& entry) {
  auto family = tables::FamilyOf(pool.path() + ": " + TableRegion(entry), entry);
  return family.ok() ? *family : nullptr;
}

bool IsPersistent(const format::CatalogEntry& entry) {
  return entry.durability == static_cast<uint8_t>(Durability::kPersistent);
}

// Reachable extents of the pool: the catalog and every table's extents.
// Tables whose root cannot be trusted are reported and left out. *complete is
// false when a persistent table's family is not built in: its extents are
// unknown, so no extent may be called unreachable.
std::vector<uint64_t> ReachableExtents(const pm::Pool& pool,
                                       const std::vector<format::CatalogEntry>& catalog,
                                       Report& report, std::set<uint64_t>* bad_tables,
                                       bool* complete) {
  std::vector<uint64_t> reachable;
  *complete = true;
  format::Superblock superblock = pool.superblock();
  if (superblock.catalog_offset != 0) reachable.push_back(superblock.catalog_offset);
  for (const format::CatalogEntry& entry : catalog) {
    if (!IsPersistent(entry)) continue;
    const tables::TableFamily* family = FamilyOrNull(pool, entry);
    if (family == nullptr) {
      *complete = false;
      continue;
    }
    auto extents = family->Extents(pool, entry, /*require_allocated=*/true);
    if (!extents.ok()) {
      Add(report, Severity::kCorruption, TableRegion(entry) + " root", entry.root_offset,
          extents.status().ToString());
      bad_tables->insert(entry.table_id);
      continue;
    }
    for (const tables::TableExtent& extent : *extents) reachable.push_back(extent.offset);
  }
  return reachable;
}

}  // namespace

Result<Report> VerifyPool(const std::string& path, const ProgressFn& progress) {
  Report report;
  report.path = path;
  auto opened = pm::Pool::Open(path, /*read_only=*/true, SyncMode::kBatch);
  if (!opened.ok()) {
    if (AsFinding(opened.status(), report, "pool")) return report;
    return opened.status();
  }
  const pm::Pool& pool = **opened;
  report.superblock_generation = pool.superblock().generation;
  report.extents = pool.allocator().AllocatedExtents().size();
  report.used_bytes = pool.allocator().used_bytes();
  int damaged = DamagedSuperblock(pool);
  if (damaged >= 0) {
    Add(report, Severity::kRecoverable, damaged == 0 ? "superblock A" : "superblock B",
        format::kSuperblockOffset[damaged],
        pool.Where(damaged == 0 ? "superblock A" : "superblock B",
                   format::kSuperblockOffset[damaged]) +
            ": not valid (torn by a crash or damaged); the other copy is current");
  }

  auto catalog = ReadCatalog(pool);
  if (!catalog.ok()) {
    if (AsFinding(catalog.status(), report, "catalog")) return report;
    return catalog.status();
  }
  std::set<uint64_t> bad_tables;
  bool complete = true;
  std::vector<uint64_t> reachable =
      ReachableExtents(pool, *catalog, report, &bad_tables, &complete);
  std::set<uint64_t> reachable_set(reachable.begin(), reachable.end());
  std::set<uint64_t> allocated;
  for (const format::ExtentEntry& extent : pool.allocator().AllocatedExtents()) {
    allocated.insert(extent.offset);
    if (complete && reachable_set.count(extent.offset) == 0) {
      Add(report, Severity::kRecoverable, "extent", extent.offset,
          pool.Where("extent", extent.offset) + ": " + std::to_string(extent.length) +
              " bytes (kind " + std::to_string(extent.kind) +
              ") are allocated but not reachable; freed at the next open");
    }
  }
  for (uint64_t offset : reachable_set) {
    if (allocated.count(offset) == 0) {
      Add(report, Severity::kCorruption, "extent", offset,
          pool.Where("extent", offset) + ": referenced but not allocated in the extent table");
    }
  }
  for (const format::CatalogEntry& entry : *catalog) {
    if (bad_tables.count(entry.table_id) != 0) continue;
    const tables::TableFamily* family = FamilyOrNull(pool, entry);
    if (family == nullptr) {
      Add(report, Severity::kInfo, TableRegion(entry), entry.root_offset,
          pool.path() + ": " + TableRegion(entry) + ": " +
              tables::DurabilityName(static_cast<Durability>(entry.durability)) + " " +
              tables::KindName(static_cast<TableKind>(entry.kind)) +
              " tables are not built into this gpkv; not checked");
      continue;
    }
    // A volatile family has nothing in the pool to check; its Verify says so.
    Status status = family->Verify(pool, entry, report, progress);
    if (!status.ok() && !AsFinding(status, report, TableRegion(entry))) return status;
  }
  return report;
}

namespace {

// Catalog entries rebuilt from the table roots the extent table still lists
// (for tables the catalog lost): each root is offered to every persistent
// family. Tables are named "recovered-<id>".
std::vector<format::CatalogEntry> SalvageCatalog(pm::Pool& pool, uint64_t* next_table_id) {
  std::vector<format::CatalogEntry> entries;
  for (const format::ExtentEntry& extent : pool.allocator().AllocatedExtents()) {
    if (extent.kind != format::kExtentKindTableRoot) continue;
    std::string name = "recovered-" + std::to_string(extent.owner_table_id);
    for (const tables::TableFamily* family : tables::Families()) {
      if (family->durability() != Durability::kPersistent) continue;
      auto entry = family->Salvage(pool, extent, name);
      if (!entry.ok()) continue;
      if (!CheckCatalogEntry(pool, *entry, "salvaged table", extent.offset).ok()) continue;
      *next_table_id = std::max(*next_table_id, entry->table_id + 1);
      entries.push_back(*entry);
      break;
    }
  }
  return entries;
}

// Adds the salvaged tables whose ids the catalog does not list.
bool MergeSalvaged(pm::Pool& pool, std::vector<format::CatalogEntry>& catalog, Report& report,
                   uint64_t* next_table_id) {
  std::set<uint64_t> ids;
  for (const format::CatalogEntry& entry : catalog) ids.insert(entry.table_id);
  bool added = false;
  for (const format::CatalogEntry& entry : SalvageCatalog(pool, next_table_id)) {
    if (ids.count(entry.table_id) != 0) continue;
    catalog.push_back(entry);
    added = true;
    Add(report, Severity::kInfo, "catalog", entry.root_offset,
        pool.Where("table root", entry.root_offset) + ": table " + std::to_string(entry.table_id) +
            " salvaged as '" + entry.name + "'");
  }
  return added;
}

// Records in the extent table every extent of an intact table that the
// extent table lost (a damaged entry, a stale superblock). Corruption if the
// root cannot be trusted or an extent overlaps another one.
Status AdoptTableExtents(pm::Pool& pool, const tables::TableFamily& family,
                         const format::CatalogEntry& entry, Report& report) {
  auto extents = family.Extents(pool, entry, /*require_allocated=*/false);
  if (!extents.ok()) return extents.status();
  for (const tables::TableExtent& extent : *extents) {
    if (pool.allocator().IsAllocated(extent.offset, extent.length)) continue;
    GPKV_RETURN_IF_ERROR(
        pool.allocator().Adopt(extent.offset, extent.length, extent.kind, entry.table_id));
    Add(report, Severity::kInfo, TableRegion(entry), extent.offset,
        pool.Where("extent", extent.offset) + ": " + TableRegion(entry) +
            " uses it; allocated again in the extent table");
  }
  return Status::OK();
}

// Catalog entries whose table root names another table id. The root's id
// is the one the table's own bytes carry (its checksummed root, its runs'
// headers, its extents' owner), so a lone mismatch is the catalog's: the entry
// takes the root's id. An entry whose root belongs to a table the catalog
// lists under that id points at another table's root: it is dropped.
bool ReconcileTableIds(const pm::Pool& pool, std::vector<format::CatalogEntry>& catalog,
                       Report& report, uint64_t* next_table_id) {
  std::set<uint64_t> ids;
  for (const format::CatalogEntry& entry : catalog) ids.insert(entry.table_id);
  bool changed = false;
  std::vector<format::CatalogEntry> kept;
  for (format::CatalogEntry& entry : catalog) {
    const tables::TableFamily* family = FamilyOrNull(pool, entry);
    if (!IsPersistent(entry) || family == nullptr) {
      kept.push_back(entry);
      continue;
    }
    format::ExtentEntry root{};
    root.offset = entry.root_offset;
    auto owner = family->Salvage(pool, root, entry.name);
    if (!owner.ok() || owner->table_id == entry.table_id || owner->table_id == 0) {
      kept.push_back(entry);
      continue;
    }
    const std::string where = pool.Where(TableRegion(entry) + " root", entry.root_offset + 8);
    changed = true;
    if (ids.count(owner->table_id) != 0) {
      Add(report, Severity::kCorruption, TableRegion(entry), entry.root_offset,
          where + ": root belongs to table id " + std::to_string(owner->table_id) +
              ", which the catalog lists as another table; table dropped from the catalog");
      ++report.tables_dropped;
      ids.erase(entry.table_id);
      continue;
    }
    Add(report, Severity::kCorruption, "catalog", entry.root_offset,
        where + ": root belongs to table id " + std::to_string(owner->table_id) +
            ", the catalog said " + std::to_string(entry.table_id) + "; catalog entry corrected");
    ids.erase(entry.table_id);
    ids.insert(owner->table_id);
    entry.table_id = owner->table_id;
    *next_table_id = std::max(*next_table_id, entry.table_id + 1);
    kept.push_back(entry);
  }
  catalog = std::move(kept);
  return changed;
}

}  // namespace

Result<Report> RepairPool(const std::string& path, const ProgressFn& progress) {
  Report report;
  report.path = path;
  auto opened = pm::Pool::Open(path, /*read_only=*/false, SyncMode::kBatch, /*salvage=*/true);
  if (!opened.ok()) return opened.status();
  pm::Pool& pool = **opened;
  std::lock_guard<std::mutex> lock(pool.metadata_mutex());

  for (const std::string& problem : pool.allocator().load_problems()) {
    Add(report, Severity::kCorruption, "extent table", 0, problem + "; entry cleared");
  }
  GPKV_RETURN_IF_ERROR(pool.allocator().ClearBadEntries());
  if (DamagedSuperblock(pool) >= 0) {
    // Rewriting the current superblock puts it in the other slot.
    GPKV_RETURN_IF_ERROR(pool.WriteSuperblock(pool.superblock()));
    Add(report, Severity::kInfo, "superblock", 0, path + ": damaged superblock copy rewritten");
  }

  format::Superblock superblock = pool.superblock();
  uint64_t next_table_id = superblock.next_table_id;
  bool catalog_changed = false;
  std::vector<format::CatalogEntry> catalog;
  auto read = ReadCatalog(pool, /*require_allocated=*/false);
  if (read.ok()) {
    catalog = std::move(read.value());
    if (superblock.catalog_offset != 0 &&
        !pool.allocator().IsAllocated(superblock.catalog_offset, superblock.catalog_size)) {
      // A stale superblock or a damaged entry: keep what the catalog lists,
      // add the tables whose roots the extent table still holds, rewrite it.
      Add(report, Severity::kCorruption, "catalog", superblock.catalog_offset,
          pool.Where("catalog", superblock.catalog_offset) +
              ": the catalog extent is not allocated; catalog rewritten");
      MergeSalvaged(pool, catalog, report, &next_table_id);
      catalog_changed = true;
    }
  } else {
    if (!read.status().IsCorruption()) return read.status();
    Add(report, Severity::kCorruption, "catalog", superblock.catalog_offset,
        read.status().ToString());
    MergeSalvaged(pool, catalog, report, &next_table_id);
    catalog_changed = true;
  }

  if (ReconcileTableIds(pool, catalog, report, &next_table_id)) catalog_changed = true;

  // Free what nothing references before re-adopting what tables use: a
  // damaged entry (an offset moved by a few pages) may cover a range an
  // intact table still uses.
  std::vector<uint64_t> referenced;
  if (!catalog_changed && superblock.catalog_offset != 0) {
    referenced.push_back(superblock.catalog_offset);
  }
  bool complete = true;
  for (const format::CatalogEntry& entry : catalog) {
    if (!IsPersistent(entry)) continue;
    const tables::TableFamily* family = FamilyOrNull(pool, entry);
    if (family == nullptr) {
      complete = false;
      continue;
    }
    auto extents = family->Extents(pool, entry, /*require_allocated=*/false);
    if (!extents.ok()) continue;
    for (const tables::TableExtent& extent : *extents) referenced.push_back(extent.offset);
  }
  // A table of a family this build lacks owns extents nobody here can name:
  // free nothing then.
  uint64_t unreferenced = 0;
  if (complete) {
    auto freed = pool.allocator().FreeUnreachable(referenced);
    if (!freed.ok()) return freed.status();
    unreferenced = *freed;
  }

  std::vector<format::CatalogEntry> kept;
  for (const format::CatalogEntry& entry : catalog) {
    const tables::TableFamily* family = FamilyOrNull(pool, entry);
    if (!IsPersistent(entry) || family == nullptr) {
      kept.push_back(entry);
      continue;
    }
    Status repaired = AdoptTableExtents(pool, *family, entry, report);
    if (repaired.ok()) repaired = family->Repair(pool, entry, report, progress);
    if (repaired.IsCorruption()) {
      Add(report, Severity::kCorruption, TableRegion(entry), entry.root_offset,
          repaired.ToString() + "; table dropped from the catalog");
      ++report.tables_dropped;
      catalog_changed = true;
      continue;
    }
    GPKV_RETURN_IF_ERROR(repaired);
    kept.push_back(entry);
  }
  if (catalog_changed) GPKV_RETURN_IF_ERROR(PublishCatalog(pool, kept, next_table_id));

  std::set<uint64_t> bad_tables;
  std::vector<uint64_t> reachable = ReachableExtents(pool, kept, report, &bad_tables, &complete);
  uint64_t freed = 0;
  if (complete) {
    auto swept = pool.allocator().FreeUnreachable(reachable);
    if (!swept.ok()) return swept.status();
    freed = *swept;
  }
  report.extents_freed = unreferenced + freed;
  report.extents = pool.allocator().AllocatedExtents().size();
  report.used_bytes = pool.allocator().used_bytes();
  report.superblock_generation = pool.superblock().generation;
  GPKV_RETURN_IF_ERROR(pool.Sync());
  return report;
}

}  // namespace gpkv::recovery
