#include "tables/lsm/check.h"

#include <cstring>

#include "tables/lsm/cpu/merge.h"
#include "tables/lsm/cpu/search.h"
#include "tables/lsm/cpu/write_buffer.h"
#include "tables/lsm/reader.h"
#include "tables/lsm/root.h"
#include "tables/table_check.h"

namespace gpkv::lsm {
namespace {

using recovery::Finding;
using Severity = Finding::Severity;

// What a check of a table's parts found: the intact runs and log records (as
// one buffer run), the damaged ones as findings.
struct TableCheck {
  std::vector<RunView> runs;         // intact runs, newest first
  std::vector<uint32_t> bad_levels;  // levels whose run is damaged
  // Levels whose run is intact but whose filter is damaged (repair rebuilds
  // it from the run's keys).
  std::vector<uint32_t> bad_filters;
  RunData buffer;    // the intact log records, merged
  log::Cut log_cut;  // where the intact records end
  bool log_damaged = false;
  std::vector<Finding> findings;
};

TableCheck CheckParts(const pm::Pool& pool, const LsmView& view) {
  TableCheck check;
  const EntryShape shape = view.shape();
  check.buffer = RunData(shape);
  for (uint32_t level = 0; level < view.manifest.level_count; ++level) {
    const RunRef& ref = view.manifest.levels[level];
    if (ref.offset == 0) continue;
    auto run = ReadRunData(pool, view, level, RunCheck::kFull);
    if (run.ok()) {
      check.runs.push_back(*run);
      Status filter = CheckRunFilter(pool, view, level, *run, RunCheck::kFull);
      if (!filter.ok()) {
        check.bad_filters.push_back(level);
        check.findings.push_back({Severity::kCorruption, view.RunRegion(level) + " filter",
                                  tables::OffsetNamedIn(filter, ref.offset), filter.message()});
      }
      continue;
    }
    check.bad_levels.push_back(level);
    check.findings.push_back({Severity::kCorruption, view.RunRegion(level),
                              tables::OffsetNamedIn(run.status(), ref.offset),
                              run.status().message()});
  }
  // The records as the backends replay them (a buffer of a few runs, not
  // one run merged with every record), merged into one run at the end.
  cpu::WriteBuffer records;
  BadLogRecord bad_entry;
  Status log = ReadDecodedLog(
      pool, view,
      [&](uint32_t, const log::RecordHeader&, RunData&& record) {
        records = records.With(std::move(record), shape, 1);
      },
      &bad_entry, &check.log_cut);
  if (!records.empty()) {
    std::vector<RunView> runs;
    for (const auto& run : records.runs()) runs.push_back(run->View());
    check.buffer = cpu::MergeRuns(runs, shape, /*drop_tombstones=*/false, 1);
  }
  if (!bad_entry.status.ok()) {
    check.log_damaged = true;
    check.log_cut = bad_entry.cut;
    check.findings.push_back({Severity::kCorruption, view.TableRegion() + " log", bad_entry.offset,
                              bad_entry.status.message()});
  } else if (!log.ok()) {
    check.log_damaged = true;
    check.findings.push_back({Severity::kCorruption, view.TableRegion() + " log",
                              tables::OffsetNamedIn(log, view.log_offset), log.message()});
  }
  return check;
}

uint64_t LiveKeys(const TableCheck& check, const EntryShape& shape) {
  cpu::Sources sources;
  if (!check.buffer.empty()) sources.runs[sources.count++] = check.buffer.View();
  for (const RunView& run : check.runs) sources.runs[sources.count++] = run;
  uint64_t live = 0;
  cpu::DispatchKeyWords(shape.key_words, [&](auto words) {
    live = CountLiveIn<decltype(words)::value>(sources, nullptr, nullptr);
  });
  return live;
}

void AppendReport(const LsmView& view, const TableCheck& check, recovery::Report& report) {
  tables::AppendTableReport(view, check.findings, LiveKeys(check, view.shape()), report);
}

}  // namespace

Result<std::vector<tables::TableExtent>> LsmExtents(const pm::Pool& pool,
                                                    const std::string& table_name,
                                                    uint64_t root_offset, bool require_allocated) {
  auto view = ReadLsmRoot(pool, table_name, root_offset, require_allocated);
  if (!view.ok()) return view.status();
  std::vector<tables::TableExtent> extents = {
      {root_offset, kLsmRootSize, format::kExtentKindTableRoot},
      {view->log_offset, view->log_capacity, format::kExtentKindOther}};
  for (const RunRef& run : view->manifest.levels) {
    if (run.offset == 0) continue;
    extents.push_back({run.offset, RunExtentBytes(run.entries, view->key_size, view->value_size),
                       format::kExtentKindOther});
  }
  return extents;
}

Status VerifyLsm(const pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                 uint64_t root_offset, recovery::Report& report, const recovery::ProgressFn&) {
  auto view = ReadLsmRoot(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  tables::CheckTableId(pool, *view, table_id, report);
  AppendReport(*view, CheckParts(pool, *view), report);
  return Status::OK();
}

Status RepairLsm(pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                 uint64_t root_offset, recovery::Report& report, const recovery::ProgressFn&) {
  GPKV_RETURN_IF_ERROR(tables::RequireWritable(pool));
  auto view = ReadLsmRoot(pool, table_name, root_offset, /*require_allocated=*/false);
  if (!view.ok()) return view.status();
  tables::CheckTableId(pool, *view, table_id, report);
  TableCheck check = CheckParts(pool, *view);
  for (Finding& finding : check.findings) {
    const bool log = finding.region.find(" log") != std::string::npos;
    const bool filter = finding.region.find(" filter") != std::string::npos;
    finding.message += log      ? "; the log is cut before this record"
                       : filter ? "; filter rebuilt from the run's keys"
                                : "; run dropped from the manifest";
  }
  for (uint32_t level : check.bad_filters) {
    const RunRef& ref = view->manifest.levels[level];
    WriteRunFilter(pool, view->table_id, ref.offset, ref.entries, view->shape(), 1);
  }
  if (!check.bad_levels.empty()) {
    Manifest next = view->manifest;
    for (uint32_t level : check.bad_levels) next.levels[level] = {0, 0};
    PublishManifest(pool, root_offset, &next);
  }
  if (check.log_damaged) {
    // The records before the damaged one stay; every later one goes (a
    // damaged record in the manifest's half empties the other half too:
    // its word is set back to the manifest's epoch, which readers skip).
    const log::Segment& cut = view->log_segment(check.log_cut.segment);
    const log::Place& place = view->log_place;
    log::PublishWord(pool, place.word_offsets[cut.half], cut.epoch, check.log_cut.bytes);
    if (check.log_cut.segment == 0 && view->log_segments.count == 2) {
      log::PublishWord(pool, place.word_offsets[view->log_segment(1).half],
                       view->manifest.log_epoch, 0);
    }
  }
  AppendReport(*view, check, report);
  return pool.Sync();
}

}  // namespace gpkv::lsm
