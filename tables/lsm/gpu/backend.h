// lsm::gpu::LsmGpu: the GPU backend of a persistent ordered table, the twin of
// cpu::LsmCpu. It writes the same bytes to the pool (the same runs,
// manifests and log records, in the same protocol order: run persisted,
// manifest published, log word, replaced runs freed), so a pool written by
// either backend opens and answers the same on the other
// (tests/lsm/gpu/lsm_cross_backend_test.cc).
//
// GPU memory holds a copy of every run of the table (its keys, meta and
// values arrays laid out as in the pool, one allocation per run), read back
// from the pool at open and checked there against the run's data checksum
// (computed on the device), and the write buffer as a few device runs (the
// log's records carried as a binary counter, newest first).
//
// Writes: a batch is staged to the device and sorted by key with CUB's radix
// sort (stable LSD passes over the key's words, least significant first,
// with the input position as payload); of a key given twice the last
// occurrence is kept. A batch that fits the write buffer (layout.h GoesToLog)
// becomes a columnar log record: its checksum summed on the device and its
// keys and values copied from the device into the log (run.h
// FinishLogRecord writes the header), on a stream of its own while the
// buffer's carry merges run; then the log word publishes it. Otherwise the
// cascade merges batch, buffer and the occupied levels newest first, pairwise
// with cub::DeviceMerge (ties keep the newer entry, the older duplicate is
// dropped; tombstones are dropped when no older level remains, the CPU's rule
// of cpu/merge.cc), and the merged run is copied from the device into its
// extent by the shared run writer (run.h WriteRunWith) and published. A
// checkpoint (two-half logs, layout.h) merges the same way, but the merged
// run's copy to the pool runs behind the next batches (checkpoint_stream_,
// a thread of its own, 16 MB slices) and its manifest is published at the
// batch the protocol fixes. At open the log's records are checked on the
// host and uploaded as they are.
// The pool mapping is registered with CUDA on a thread started at open (so
// runs reach the pool at the link's speed and neither the open nor a flush
// includes the pinning); runs written before it is done go through pageable
// memory.
// Queries run one thread per query over the device runs, newest source
// first: Get stops at the first hit or tombstone; Count, Range, Successor
// and Predecessor walk the sources' sorted runs as a k-way merge from each
// run's lower bound (Range counts first, places the queries' outputs by a
// prefix sum, then fills them).
//
// Buffers: keys, values and outputs may be host or device memory of the
// table's device (cudaPointerGetAttributes decides); Range's results are
// host vectors (Table::RangeResults), RangeOnDevice's stay in GPU memory
// (Table::DeviceRangeResults).
//
// Errors: no device memory for a batch gives OutOfDeviceMemory and writes
// nothing (device memory is taken before anything is persisted).
//
// Thread safety: as cpu::LsmCpu. Writers (Put, Erase, Compact) run one at a
// time; queries run beside them (each on its host thread's CUDA stream) and
// see the table before or after each write batch; a replaced run's device
// copy is freed when the last query holding its version returns.
//
// Who may call: tables/lsm/ (the family and LsmTable), tests and benchmarks.
// This header needs no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/lsm/cpu/backend.h"

namespace gpkv::lsm::gpu {

class LsmGpu {
 public:
  // OK when CUDA device `device` can run this backend; else Unsupported.
  static Status DeviceUsable(int device = 0);

  // Opens the table rooted at root_offset on device `device`: validates root
  // and manifest (the shared reader), reads every run into GPU memory and
  // checks its data checksum there, replays the log into the device write
  // buffer. Corruption names table and offset; OutOfDeviceMemory when the
  // runs do not fit.
  static Result<std::unique_ptr<LsmGpu>> Open(pm::Pool& pool, const std::string& table_name,
                                              uint64_t root_offset, const TableOptions& options,
                                              int threads, recovery::Report* report,
                                              int device = 0);
  // Publishes a checkpoint still pending and syncs the pool, as
  // cpu::LsmCpu::Close; the destructor does the same, its error dropped.
  Status Close();
  ~LsmGpu();
  LsmGpu(const LsmGpu&) = delete;
  LsmGpu& operator=(const LsmGpu&) = delete;

  Status Put(const uint8_t* keys, const uint8_t* values, size_t n);
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t n);
  Status Compact();

  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n);
  Status Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n);
  Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n);
  // Range with the results left in GPU memory (Table::RangeOnDevice): the
  // offsets, keys and values in results->storage, reused when it is large
  // enough and not shared.
  Status RangeOnDevice(const uint8_t* lo, const uint8_t* hi, Table::DeviceRangeResults* results,
                       size_t n);
  Status Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                   size_t n);
  Status Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values, uint8_t* found,
                     size_t n);
  // Live pairs in ascending key order (the runs copied back to the host).
  Status Scan(const Table::ScanVisitor& visit);
  Result<LsmStats> Stats();

  class Impl;

 private:
  explicit LsmGpu(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpkv::lsm::gpu
