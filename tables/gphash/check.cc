#include "tables/gphash/check.h"

#include <utility>

#include "tables/gphash/reader.h"
#include "tables/gphash/slot_scan.h"

namespace gpkv::gphash {
namespace {

using Severity = recovery::Finding::Severity;

void AddFinding(recovery::Report& report, Severity severity, std::string region, uint64_t offset,
                std::string message) {
  report.findings.push_back(
      recovery::Finding{severity, std::move(region), offset, std::move(message)});
}

// Findings that do not concern single slots: the root's table id and an
// interrupted resize.
void CheckTableFacts(const pm::Pool& pool, const GphashView& view, uint64_t table_id,
                     bool repairing, recovery::Report& report) {
  std::string root_region = view.TableRegion() + " root";
  if (view.table_id != table_id) {
    AddFinding(report, Severity::kCorruption, root_region, view.root_offset + 8,
               pool.Where(root_region, view.root_offset + 8) + ": root belongs to table id " +
                   std::to_string(view.table_id) + ", the catalog says " +
                   std::to_string(table_id));
  }
  if (view.resizing) {
    AddFinding(report, repairing ? Severity::kInfo : Severity::kRecoverable, root_region,
               view.root_offset + 64,
               pool.Where(root_region, view.root_offset + 64) +
                   ": resize in progress (LevelSet generation " +
                   std::to_string(view.levelset.generation) + ", " +
                   std::to_string(view.levels.size()) + " levels); the next open finishes it");
  }
}

void AppendScan(const GphashView& view, SlotScanResult& scan, recovery::Report& report) {
  for (recovery::Finding& finding : scan.findings) report.findings.push_back(std::move(finding));
  if (scan.findings_omitted != 0) {
    AddFinding(report, Severity::kInfo, view.TableRegion(), view.root_offset,
               view.TableRegion() + ": " + std::to_string(scan.findings_omitted) +
                   " more slot findings not listed");
  }
  recovery::TableReport table;
  table.name = view.table_name;
  table.table_id = view.table_id;
  table.keys = scan.keys;
  table.slots_scanned = scan.slots;
  table.reserved_slots = scan.reserved;
  table.duplicate_slots = scan.duplicates;
  table.value_cells_in_use = scan.cells_in_use;
  table.value_cells_unreferenced = view.TotalCells() - scan.cells_in_use;
  table.resizing = view.resizing;
  report.tables.push_back(table);
}

}  // namespace

Result<std::vector<tables::TableExtent>> GphashExtents(const pm::Pool& pool,
                                                       const std::string& table_name,
                                                       uint64_t root_offset,
                                                       bool require_allocated) {
  auto view = ReadGphash(pool, table_name, root_offset, require_allocated);
  if (!view.ok()) return view.status();
  std::vector<tables::TableExtent> extents = {
      {root_offset, gphash::kGphashRootSize, format::kExtentKindTableRoot}};
  for (uint32_t level = 0; level < view->levels.size(); ++level) {
    extents.push_back(
        {view->levels[level].offset, view->LevelBytes(level), format::kExtentKindBucketLevel});
  }
  for (uint64_t chunk : view->chunks) {
    extents.push_back({chunk, view->chunk_bytes, format::kExtentKindValueChunk});
  }
  return extents;
}

Status VerifyGphash(const pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                    uint64_t root_offset, recovery::Report& report,
                    const recovery::ProgressFn& progress) {
  auto view = ReadGphash(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  CheckTableFacts(pool, *view, table_id, /*repairing=*/false, report);
  SlotScanResult scan = VerifyGphashSlots(pool, *view, /*threads=*/0, progress);
  AppendScan(*view, scan, report);
  return Status::OK();
}

Status RepairGphash(pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                    uint64_t root_offset, recovery::Report& report,
                    const recovery::ProgressFn& progress) {
  if (pool.read_only()) {
    return Status::InvalidArgument(pool.path() + ": repair needs the pool open writable");
  }
  auto view = ReadGphash(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  CheckTableFacts(pool, *view, table_id, /*repairing=*/true, report);
  SlotScanResult scan = FixGphashSlots(pool, *view, SlotScanMode::kRepair, /*threads=*/0, progress);
  report.slots_cleared += scan.slots_cleared;
  report.duplicates_removed += scan.duplicates_removed;
  report.cells_reclaimed += scan.cells_reclaimed;
  AppendScan(*view, scan, report);
  return pool.Sync();
}

}  // namespace gpkv::gphash
