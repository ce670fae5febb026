// logged::LoggedTable: the gpkv::Table of a persistent hash table in logged
// mode. Write batches go to its core (core.h: a log record each, durable
// before the call returns), gets and scans to the core's index in memory
// through the core's read gate.
// The engine checks every batch's spans before they get here
// (engine/checked_table.h). On the CUDA backend gets, puts and erases take
// device memory too (a put or erase batch's arrays all in one kind of
// memory), and large put and erase batches from host memory are copied to
// device memory and written from there; mixed batches (Write) take host
// memory.
// Stats() reports the index's keys, the pool bytes of root, log and image,
// TableStats::mode "logged" and the gphash.* properties of the logged mode.
//
// Thread safety: as gpkv::Table promises (core.h).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <mutex>
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
// .write-{checkpoint,record,publish,sync,index}-ns, the checkpoint's split
// into .write-checkpoint-{scan,wait,publish}-ns.
TableStats PublicStats(const LoggedStats& stats);

// What the CUDA backend does for a batch whose arrays lie in device memory
// (gpu/device_batches.h makes it; the front names no CUDA). The CPU
// backend's front has none: its batches are host memory.
class DeviceBatches {
 public:
  virtual ~DeviceBatches() = default;
  // True when `address` lies in device memory of the table's device.
  virtual bool InDeviceMemory(const void* address) const = 0;
  // Returns once the work enqueued on `stream` (a cudaStream_t) before the
  // call is done.
  virtual Status WaitFor(void* stream) const = 0;
  // Copy `bytes` between device memory of the table's device and host
  // memory (pageable or not, at the link's rate); return once the copy is
  // done.
  virtual Status CopyToHost(void* host, const void* device_array, size_t bytes) const = 0;
  virtual Status CopyToDevice(void* device_array, const void* host, size_t bytes) const = 0;
  // Device memory of the table's device of at least `bytes`, kept (and
  // grown) between calls: where a host batch is copied to be written as a
  // device batch. Its contents last until the next call. One caller at a
  // time (the front's staging mutex).
  virtual Result<uint8_t*> Staging(size_t bytes) = 0;
};

class LoggedTable final : public tables::FamilyTable {
 public:
  // On the CUDA backend, device_batches: put and erase batches in device
  // memory go to the core as such (its DeviceRecordWriter writes their
  // records), and so do those in host memory of at least device_copy_min_ops
  // operations (0: none), once copied to device memory; a mixed batch in
  // device memory is copied to host memory, resolved and written there, its
  // erased flags copied back.
  LoggedTable(std::string name, const TableOptions& options, std::unique_ptr<Core> core,
              std::unique_ptr<DeviceBatches> device_batches = nullptr,
              uint64_t device_copy_min_ops = 0);

  Status Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) override;
  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
             const BatchOptions& options) override;
  Status Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) override;
  // Resolved (tables::ResolveWrite), then one atomic unit: its puts' and
  // its erases' records published by one store. Keys, values and erased
  // flags in device memory are copied to host memory and back: the records
  // and the erased flags are those of the same batch from host memory.
  Status Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
               const BatchOptions& options) override;
  // Publishes a pending checkpoint and makes it durable (Core::Close).
  Status Close() override;
  Result<TableStats> Stats() override;
  Status Scan(const ScanVisitor& visit) override;

 private:
  // Where a write batch's arrays (null ones skipped) lie: Unsupported when
  // some lie in host and some in device memory, or in device memory of a
  // core that takes no device batches. Waits for the work enqueued on the
  // batch's stream (options.stream) first, so that the batch reads its
  // arrays after it (the core's copies and the index's kernels run on
  // streams of their own).
  Result<BatchMemory> Prepare(std::initializer_list<const void*> arrays,
                              const BatchOptions& options) const;
  // Write for keys, values and erased in device memory (ops in host memory).
  Status WriteFromDevice(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased);
  // Whether a put or erase batch of `count` operations in host memory is
  // copied to device memory and written from there.
  bool CopiesToDevice(size_t count) const;
  // device_batches_'s staging with the keys copied to its start and room
  // for `tail_bytes` more at *tail_at (aligned). REQUIRES: staging_mutex_.
  Result<uint8_t*> StageKeys(ConstBytes keys, size_t tail_bytes, size_t* tail_at);
  // Put and Erase for arrays in host memory, through device_batches_'s
  // staging: keys and values copied in, the erased flags copied back.
  Status PutThroughDevice(ConstBytes keys, ConstBytes values);
  Status EraseThroughDevice(ConstBytes keys, MutableBytes erased);

  const std::unique_ptr<Core> core_;
  const std::unique_ptr<DeviceBatches> device_batches_;
  const uint64_t device_copy_min_ops_;
  std::mutex staging_mutex_;  // device_batches_'s staging: one batch at a time
};

}  // namespace gpkv::gphash::logged
