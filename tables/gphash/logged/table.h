// logged::LoggedTable: the gpkv::Table of a persistent hash table in logged
// mode. Write batches go to its core (core.h: a log record each, durable
// before the call returns), gets and scans to the core's index in memory.
// The engine checks every batch's spans before they get here
// (engine/checked_table.h). Batches take host memory (the CPU backend).
// Stats() reports the index's keys, the pool bytes of root, log and image,
// TableStats::mode "logged" and the gphash.* properties of the logged mode.
//
// Thread safety: as gpkv::Table promises (core.h).
#pragma once

#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/family_table.h"
#include "tables/gphash/logged/core.h"

namespace gpkv::gphash::logged {

// The public stats of a logged table: keys, pool bytes (root, log, image)
// and the properties gphash.batch-entries, .log-batches, .log-bytes,
// .log-capacity, .checkpoints, .image-entries, .applied-seq.
TableStats PublicStats(const LoggedStats& stats);

class LoggedTable final : public tables::FamilyTable {
 public:
  LoggedTable(std::string name, const TableOptions& options, std::unique_ptr<Core> core);

  Status Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) override;
  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
             const BatchOptions& options) override;
  Status Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) override;
  // Resolved (tables::ResolveWrite), then one atomic unit: its puts' and
  // its erases' records published by one store.
  Status Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
               const BatchOptions& options) override;
  Result<TableStats> Stats() override;
  Status Scan(const ScanVisitor& visit) override;

 private:
  const std::unique_ptr<Core> core_;
};

}  // namespace gpkv::gphash::logged
