#include "tables/lsm/table.h"

#include "tables/lsm/root.h"
#include "tables/stats_builder.h"

namespace gpkv::lsm {

TableStats PublicStats(const LsmStats& stats) {
  tables::StatsBuilder out(kFamilyName, TableKind::kOrdered, Durability::kPersistent, stats.keys,
                           kLsmRootSize + stats.log_capacity + stats.run_bytes);
  out.Add("batch-entries", static_cast<double>(stats.batch_entries));
  out.Add("log-batches", static_cast<double>(stats.log_batches));
  out.Add("levels", stats.levels);
  out.Add("runs", stats.runs);
  out.Add("entries", static_cast<double>(stats.entries));
  out.Add("buffer-entries", static_cast<double>(stats.buffer_entries));
  out.Add("tombstones", static_cast<double>(stats.tombstones));
  out.Add("dead-entries", static_cast<double>(stats.dead_entries));
  out.Add("fill", stats.capacity == 0
                      ? 0.0
                      : static_cast<double>(stats.entries) / static_cast<double>(stats.capacity));
  out.Add("compactions", static_cast<double>(stats.compactions));
  out.Add("run-bytes", static_cast<double>(stats.run_bytes));
  out.Add("log-bytes", static_cast<double>(stats.log_bytes));
  out.Add("log-capacity", static_cast<double>(stats.log_capacity));
  out.Add("log-halves", stats.log_halves);
  out.Add("checkpoint-pending", stats.checkpoint_pending ? 1.0 : 0.0);
  // The last batch in the levels (a pending checkpoint's, which queries
  // read already).
  out.Add("applied-seq", static_cast<double>(stats.applied_seq));
  for (size_t level = 0; level < stats.level_entries.size(); ++level) {
    out.Add("level-" + std::to_string(level) + "-entries",
            static_cast<double>(stats.level_entries[level]));
  }
  for (const auto& [name, value] : stats.write_profile) out.Add(name, value);
  return out.Take();
}

LsmTable::LsmTable(std::string name, TableOptions options, std::unique_ptr<Core> core)
    : OrderedFamilyTable(std::move(name), options), core_(std::move(core)) {}

Status LsmTable::Close() { return core_->Close(); }

Result<TableStats> LsmTable::Stats() {
  auto stats = core_->Stats();
  if (!stats.ok()) return stats.status();
  return PublicStats(*stats);
}

Status LsmTable::Scan(const ScanVisitor& visit) { return core_->backend().Scan(visit); }

}  // namespace gpkv::lsm
