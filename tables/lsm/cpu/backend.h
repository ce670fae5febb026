// lsm::cpu::CpuBackend: the CPU backend of a persistent ordered table, the
// primitives lsm::Core runs its protocol with (backend.h), on worker threads
// (OpenMP) over the table's bytes in the pool: a batch is sorted in memory,
// runs merge in one multiway pass (merge.h), a level's run is read in place
// in the pool mapping (with its fence keys in memory), the write buffer is a
// few sorted runs in memory (write_buffer.h). Every write to the pool is
// synchronous: StartRunWrite writes the whole run.
//
// Thread safety: as backend.h says. Queries hold version_mutex_ shared for
// their whole call and Install takes it exclusive, so once Install returns
// no query reads a run the new version does not hold (the core frees the
// replaced runs' extents then).
//
// Who may call: tables/lsm/ (the family constructs it) and tests.
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "tables/lsm/backend.h"
#include "tables/lsm/cpu/search.h"
#include "tables/lsm/cpu/write_buffer.h"
#include "tables/lsm/run.h"

namespace gpkv::lsm::cpu {

// A run of the CPU backend: in memory (a sorted batch, a merge's output, a
// write buffer's run) until WriteRun puts it in the pool, then read in place
// there with its fence keys in memory.
class CpuRun final : public Run {
 public:
  explicit CpuRun(std::shared_ptr<const RunData> data);
  // A run of the pool at `offset`, its fences built.
  CpuRun(const pm::Pool& pool, uint64_t offset, uint64_t entries, const EntryShape& shape);
  // The run's arrays wherever they are (with fences once in the pool).
  const RunView& view() const { return view_; }
  const std::shared_ptr<const RunData>& data() const { return data_; }
  // Reads it from the pool at `offset` from now on (its memory released).
  void MoveToPool(const pm::Pool& pool, uint64_t offset, const EntryShape& shape);

 private:
  std::shared_ptr<const RunData> data_;  // null once in the pool
  std::vector<uint64_t> fences_;
  RunView view_;
};

// The write buffer of the CPU backend (write_buffer.h).
class CpuBuffer final : public Buffer {
 public:
  explicit CpuBuffer(WriteBuffer buffer) : buffer_(std::move(buffer)) {}
  uint64_t entries() const override { return buffer_.entries(); }
  std::vector<RunPtr> Runs() const override;
  const WriteBuffer& buffer() const { return buffer_; }

 private:
  WriteBuffer buffer_;
};

class CpuBackend final : public Backend {
 public:
  // `threads` worker threads per batch (>= 1).
  CpuBackend(pm::Pool& pool, int threads);

  Status Attach(const LsmView& view) override;
  Result<RunPtr> ReadRun(const LsmView& view, uint32_t level) override;
  Status ReplayLog(const LsmView& view, bool split, ReplayedRecords* out) override;
  Status FinishOpen() override { return Status::OK(); }
  BufferPtr EmptyBuffer() override;

  Status BindThread() override { return Status::OK(); }
  Result<RunPtr> SortPuts(const uint8_t* keys, const uint8_t* values, size_t n,
                          uint64_t seq) override;
  Result<RunPtr> SortErases(const uint8_t* keys, uint8_t* erased, size_t n, uint64_t seq,
                            const Version& current) override;
  Result<BufferPtr> CarryIntoBuffer(const BufferPtr& buffer, const RunPtr& batch) override;
  Status StartLogRecord(const Run& batch, bool tombstones, uint64_t record_offset, uint64_t epoch,
                        uint64_t seq) override;
  Result<uint64_t> FinishLogRecord(bool complete) override;
  Result<RunPtr> Merge(const std::vector<RunPtr>& newest_first, bool drop_tombstones) override;
  Result<uint64_t> WriteRun(Run& run, RunAge age) override;
  Result<uint64_t> StartRunWrite(const RunPtr& run, RunAge age) override {
    return WriteRun(*run, age);
  }
  Status FinishRunWrite() override { return Status::OK(); }
  void Install(std::shared_ptr<const Version> version) override;

  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n) override;
  Status Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n) override;
  Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n,
               tables::RangeLimit limit) override;
  Status RangeOnDevice(const uint8_t* lo, const uint8_t* hi, Table::DeviceRangeResults* results,
                       size_t n, tables::RangeLimit limit) override;
  Status Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                   size_t n) override;
  Status Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values, uint8_t* found,
                     size_t n) override;
  Status Scan(const Table::ScanVisitor& visit) override;

  Result<uint64_t> CountLive(const Version& version) override;
  void AddWriteProfile(const WriteCounters&, LsmStats*) override {}

 private:
  // The sources of a query, newest first.
  Sources SourcesOf(const Version& version) const;

  pm::Pool& pool_;
  const int threads_;
  uint64_t table_id_ = 0;
  EntryShape shape_;
  // The log record StartLogRecord wrote the arrays of (FinishLogRecord).
  log::RecordHeader record_header_{};
  uint64_t record_offset_ = 0;

  std::shared_mutex version_mutex_;  // queries shared, Install exclusive
  std::shared_ptr<const Version> version_;
};

}  // namespace gpkv::lsm::cpu
