// logged::LoggedTable: the gpkv::Table of a persistent hash table in logged
// mode. Write batches go to its core (core.h: a log record each, durable
// before the call returns), gets and scans to the core's index in memory
// through the core's read gate.
// The engine checks every batch's spans before they get here
// (engine/checked_table.h). On the CUDA backend gets, puts and erases take
// device memory too (a put or erase batch's arrays all in one kind of
// memory); mixed batches (Write) take host memory.
// Stats() reports the index's keys, the pool bytes of root, log and image,
// TableStats::mode "logged" and the gphash.* properties of the logged mode.
//
// Thread safety: as gpkv::Table promises (core.h).
#pragma once

#include <initializer_list>
#include <memory>
#include <string>

#include "gpkv/table.h"
#include "tables/family_table.h"
#include "tables/gphash/logged/core.h"

namespace gpkv::gphash::logged {

// The public stats of a logged table: keys, pool bytes (root, log, image)
// and the properties gphash.batch-entries, .log-batches, .log-bytes,
// .log-capacity (of one half), .checkpoints, .checkpoint-pending,
// .image-entries, .applied-seq, and where the write batches' time went since
// open (LoggedStats::WritePhases): .write-batches, .write-ns and
// .write-{checkpoint,record,publish,sync,index}-ns.
TableStats PublicStats(const LoggedStats& stats);

// Whether a batch array lies in device memory of `device` (the CUDA
// backend's check; null on the CPU backend, whose batches are host memory).
using DeviceMemoryFn = bool (*)(const void* address, int device);

class LoggedTable final : public tables::FamilyTable {
 public:
  // On the CUDA backend, in_device_memory and its device: put and erase
  // batches in device memory go to the core as such (its DeviceRecordWriter
  // writes their records); mixed batches in device memory are Unsupported.
  LoggedTable(std::string name, const TableOptions& options, std::unique_ptr<Core> core,
              DeviceMemoryFn in_device_memory = nullptr, int device = -1);

  Status Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) override;
  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
             const BatchOptions& options) override;
  Status Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) override;
  // Resolved (tables::ResolveWrite), then one atomic unit: its puts' and
  // its erases' records published by one store.
  Status Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
               const BatchOptions& options) override;
  // Publishes a pending checkpoint and makes it durable (Core::Close).
  Status Close() override;
  Result<TableStats> Stats() override;
  Status Scan(const ScanVisitor& visit) override;

 private:
  // Unsupported when one of `arrays` lies in device memory.
  Status RequireHostBatch(std::initializer_list<const void*> arrays) const;
  // Where a put or erase batch's arrays (null ones skipped) lie: Unsupported
  // when some lie in host and some in device memory, or in device memory of
  // a core that takes no device batches.
  Result<BatchMemory> MemoryOf(std::initializer_list<const void*> arrays) const;

  const std::unique_ptr<Core> core_;
  const DeviceMemoryFn in_device_memory_;
  const int device_;
};

}  // namespace gpkv::gphash::logged
