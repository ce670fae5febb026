// lsm::LsmTable: the gpkv::Table of a persistent ordered table. Hands each
// batch to its backend, cpu::LsmCpu or (in a CUDA build) gpu::LsmGpu; both
// read and write the same bytes.
// The engine checks every batch's spans before they get here
// (engine/checked_table.h). Stats() reports "lsm.*" properties.
//
// Thread safety: as gpkv::Table promises; the backend handles concurrency.
#pragma once

#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/lsm/cpu/backend.h"
#if GPKV_HAVE_CUDA
#include "tables/lsm/gpu/backend.h"
#endif

namespace gpkv::lsm {

// The public stats of a table: keys, pool bytes (root, log, runs) and the
// properties lsm.batch-entries, lsm.levels, lsm.runs, lsm.entries,
// lsm.buffer-entries, lsm.tombstones, lsm.dead-entries, lsm.fill,
// lsm.compactions, lsm.run-bytes, lsm.log-bytes, lsm.log-capacity,
// lsm.level-<i>-entries for each level below lsm.levels, and the backend's
// write profile (LsmStats::write_profile; the GPU backend's lsm.gpu-*).
TableStats PublicStats(const LsmStats& stats);

class LsmTable final : public Table {
 public:
  LsmTable(std::string name, TableOptions options, std::unique_ptr<cpu::LsmCpu> backend);
#if GPKV_HAVE_CUDA
  LsmTable(std::string name, TableOptions options, std::unique_ptr<gpu::LsmGpu> backend);
#endif

  const std::string& name() const override { return name_; }
  const TableOptions& options() const override { return options_; }
  Status Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) override;
  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
             const BatchOptions& options) override;
  Status Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) override;
  Status Count(ConstBytes lo, ConstBytes hi, MutableBytes counts,
               const BatchOptions& options) override;
  Status Range(ConstBytes lo, ConstBytes hi, RangeResults* results,
               const BatchOptions& options) override;
  // The GPU backend's device-resident Range; Unsupported on the CPU backend.
  Status RangeOnDevice(ConstBytes lo, ConstBytes hi, DeviceRangeResults* results,
                       const BatchOptions& options) override;
  Status Successor(ConstBytes keys, MutableBytes next_keys, MutableBytes values, MutableBytes found,
                   const BatchOptions& options) override;
  Status Predecessor(ConstBytes keys, MutableBytes previous_keys, MutableBytes values,
                     MutableBytes found, const BatchOptions& options) override;
  Status Compact() override;
  Result<TableStats> Stats() override;
  // Publishes a pending checkpoint through the backend's Close.
  Status Close() override;
  // Visits the live pairs in ascending key order.
  Status Scan(const ScanVisitor& visit) override;

 private:
  size_t CountOf(ConstBytes keys) const { return keys.size() / options_.key_size; }

  const std::string name_;
  const TableOptions options_;
  std::unique_ptr<cpu::LsmCpu> cpu_;  // exactly one of cpu_ / gpu_ is set
#if GPKV_HAVE_CUDA
  std::unique_ptr<gpu::LsmGpu> gpu_;
#endif
};

}  // namespace gpkv::lsm
