// btree::BtreeTable: the gpkv::Table of a volatile ordered table. Holds the
// table's core (core.h: the clock, snapshots, batch semantics and locking)
// over the backend chosen at open (cpu::CpuBackend in RAM, gpu's B-link
// tree in GPU memory) and forwards every call to it. Contents
// live in memory only: a table opened is empty, and what it holds is gone
// when the DB closes. The engine checks every batch's spans before they get
// here (engine/checked_table.h). Stats() reports "btree.*" properties.
//
// Thread safety: as gpkv::Table promises (the core's lock).
#pragma once

#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/btree/core.h"
#include "tables/btree/stats.h"
#include "tables/ordered_family_table.h"

namespace gpkv::btree {

// The family's name, the prefix of its property names.
constexpr const char* kFamilyName = "btree";

// The public stats of a table: keys, bytes of memory held (RAM or GPU
// memory, not pool bytes) and the properties btree.versions,
// btree.tombstones, btree.snapshots, btree.reclaimed and btree.timestamp.
TableStats PublicStats(const Stats& stats);

// An empty table named `name` for `options` (checked by the family); errors
// start with `where` ("pool.gpkv: table 'index'"). On the CPU when `backend`
// is kCpu, with `cpu_threads` workers for reads; on CUDA device `cuda_device`
// (gpu::CreateGpuBackend) when it is kCuda: Unsupported where that device is
// not usable or the build has no CUDA backend (under Backend::kAuto the
// engine then opens the table on the CPU).
Result<std::unique_ptr<Table>> OpenEmptyTable(const std::string& where, const std::string& name,
                                              const TableOptions& options, gpkv::Backend backend,
                                              int cpu_threads, int cuda_device = 0);

// The reads go to the core with the batch's snapshot
// (tables::OrderedFamilyTable).
class BtreeTable final
    : public tables::OrderedFamilyTable<Core, /*kSnapshots=*/true, /*Writer=*/Core> {
 public:
  // A table whose core runs on `backend`; errors start with `where`.
  BtreeTable(std::string where, std::string name, TableOptions options,
             std::unique_ptr<Backend> backend);

  // Writes are atomic for readers and snapshots (Core::Write); Compact frees
  // every version no live snapshot sees (nothing to rewrite: the table is in
  // memory).
  Result<std::unique_ptr<Snapshot>> TakeSnapshot() override;
  Result<TableStats> Stats() override;
  // Visits the live pairs in ascending key order, as of the scan's start.
  Status Scan(const ScanVisitor& visit) override;

 private:
  Core& writer() override { return core_; }
  Core& queries() override { return core_; }

  Core core_;
};

}  // namespace gpkv::btree
