#include "tables/gphash/logged/check.h"

#include <cstdlib>
#include <string>
#include <unordered_set>
#include <utility>

#include "pm/extent_allocator.h"
#include "tables/gphash/logged/reader.h"
#include "tables/gphash/logged/root.h"
#include "tables/log/log.h"
#include "tables/table_check.h"

namespace gpkv::gphash::logged {
namespace {

using Severity = recovery::Finding::Severity;

// What a check of a table's image and log found.
struct TableCheck {
  std::vector<recovery::Finding> findings;
  bool image_damaged = false;
  bool log_damaged = false;
  log::Cut log_cut;
  uint64_t keys = 0;  // live keys of what is intact
};

TableCheck CheckParts(const pm::Pool& pool, const LoggedView& view) {
  TableCheck check;
  std::unordered_set<std::string> live;
  Status image = CheckImage(pool, view);
  if (!image.ok()) {
    check.image_damaged = true;
    check.findings.push_back({Severity::kCorruption, view.ImageRegion(),
                              tables::OffsetNamedIn(image, view.checkpoint.image_offset),
                              image.message()});
  } else {
    const ImageArrays arrays = ImageOf(pool, view);
    for (uint64_t i = 0; i < arrays.entries; ++i) {
      live.emplace(reinterpret_cast<const char*>(arrays.keys + i * view.key_size), view.key_size);
    }
  }
  Status log = log::ReadRecords(
      pool, view.LogRegion(), view.log_segments, view.key_size, view.value_size,
      view.checkpoint.applied_seq,
      [&](uint32_t, const log::RecordHeader& header, uint64_t, const uint8_t* entries) {
        const bool erases = log::HasTombstones(header.flags);
        for (uint64_t i = 0; i < header.count; ++i) {
          std::string key(reinterpret_cast<const char*>(entries + i * view.key_size),
                          view.key_size);
          if (erases) {
            live.erase(key);
          } else {
            live.insert(std::move(key));
          }
        }
      },
      &check.log_cut);
  if (!log.ok()) {
    check.log_damaged = true;
    check.findings.push_back({Severity::kCorruption, view.LogRegion(),
                              tables::OffsetNamedIn(log, view.log_offset), log.message()});
  }
  check.keys = live.size();
  return check;
}

}  // namespace

Result<std::vector<tables::TableExtent>> LoggedExtents(const pm::Pool& pool,
                                                       const std::string& table_name,
                                                       uint64_t root_offset,
                                                       bool require_allocated) {
  auto view = ReadLoggedRoot(pool, table_name, root_offset, require_allocated);
  if (!view.ok()) return view.status();
  std::vector<tables::TableExtent> extents = {
      {root_offset, kLoggedRootSize, format::kExtentKindTableRoot},
      {view->log_offset, LogExtentBytes(view->log_capacity), format::kExtentKindOther}};
  if (view->checkpoint.image_offset != 0) {
    extents.push_back({view->checkpoint.image_offset,
                       ImageBytes(view->checkpoint.image_entries, view->key_size, view->value_size),
                       format::kExtentKindOther});
  }
  return extents;
}

Status VerifyLogged(const pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                    uint64_t root_offset, recovery::Report& report, const recovery::ProgressFn&) {
  auto view = ReadLoggedRoot(pool, table_name, root_offset, /*require_allocated=*/true);
  if (!view.ok()) return view.status();
  tables::CheckTableId(pool, *view, table_id, report);
  const TableCheck check = CheckParts(pool, *view);
  tables::AppendTableReport(*view, check.findings, check.keys, report);
  return Status::OK();
}

Status RepairLogged(pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                    uint64_t root_offset, recovery::Report& report, const recovery::ProgressFn&) {
  GPKV_RETURN_IF_ERROR(tables::RequireWritable(pool));
  auto view = ReadLoggedRoot(pool, table_name, root_offset, /*require_allocated=*/false);
  if (!view.ok()) return view.status();
  tables::CheckTableId(pool, *view, table_id, report);
  TableCheck check = CheckParts(pool, *view);
  for (recovery::Finding& finding : check.findings) {
    finding.message += finding.region == view->LogRegion()
                           ? "; the log is cut before this record"
                           : "; image dropped from the checkpoint (its keys are lost)";
  }
  if (check.image_damaged) {
    Checkpoint next = view->checkpoint;
    next.image_offset = 0;
    next.image_entries = 0;
    PublishCheckpoint(pool, root_offset, &next);
    pool.allocator().Free(view->checkpoint.image_offset).IgnoreError();
  }
  if (check.log_damaged) {
    // The records before the damaged one stay; it and every later one go:
    // its half's word moves back to the last intact record, and a damaged
    // first half takes the second half's records with it (its word gets
    // the first half's epoch, which FindSegments does not replay).
    const log::Segments& segments = view->log_segments;
    const log::Segment& cut = segments.segments[check.log_cut.segment];
    log::PublishWord(pool, view->log_place.word_offsets[cut.half], cut.epoch, check.log_cut.bytes);
    if (check.log_cut.segment == 0 && segments.count == 2) {
      const log::Segment& second = segments.segments[1];
      log::PublishWord(pool, view->log_place.word_offsets[second.half], cut.epoch, 0);
    }
  }
  tables::AppendTableReport(*view, check.findings, check.keys, report);
  return pool.Sync();
}

}  // namespace gpkv::gphash::logged
