// lsm::LsmTable: the gpkv::Table of a persistent ordered table. Holds the
// table's core (core.h: the protocol) over the backend the family chose at
// open (cpu::CpuBackend or gpu::GpuBackend; both read and write the same
// bytes): writes and stats go to the core, queries to its backend.
// The engine checks every batch's spans before they get here
// (engine/checked_table.h). Stats() reports "lsm.*" properties.
//
// Thread safety: as gpkv::Table promises; the backend handles concurrency.
#pragma once

#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/lsm/core.h"
#include "tables/ordered_family_table.h"

namespace gpkv::lsm {

// The public stats of a table: keys, pool bytes (root, log, runs) and the
// properties lsm.batch-entries, lsm.levels, lsm.runs, lsm.entries,
// lsm.buffer-entries, lsm.tombstones, lsm.dead-entries, lsm.fill,
// lsm.compactions, lsm.run-bytes, lsm.log-bytes, lsm.log-capacity,
// lsm.level-<i>-entries for each level below lsm.levels, and the backend's
// write profile (LsmStats::write_profile; the GPU backend's lsm.gpu-*).
TableStats PublicStats(const LsmStats& stats);

// Writes go to the core; the reads to its backend
// (tables::OrderedFamilyTable).
class LsmTable final
    : public tables::OrderedFamilyTable<Backend, /*kSnapshots=*/false, /*Writer=*/Core> {
 public:
  LsmTable(std::string name, TableOptions options, std::unique_ptr<Core> core);

  // Writes are whole-batch atomic, Write's mixed batches too (Core::Write).
  Result<TableStats> Stats() override;
  // Publishes a pending checkpoint and makes it durable (Core::Close).
  Status Close() override;
  // Visits the live pairs in ascending key order.
  Status Scan(const ScanVisitor& visit) override;

 private:
  Core& writer() override { return *core_; }
  Backend& queries() override { return core_->backend(); }

  const std::unique_ptr<Core> core_;
};

}  // namespace gpkv::lsm
