// lsm::Core: the protocol of a persistent ordered table, written once for
// both backends (layout.h describes it; the backend, backend.h, supplies the
// sorts, merges, copies and queries). It owns:
//   - the open: root and manifest validated, every run read and checked by
//     the backend, the log replayed, an interrupted checkpoint completed;
//   - the write path: each batch sorted, then PlanWrite decides (publish a
//     pending checkpoint first, start a checkpoint, flush into the levels or
//     append to the log), the log word and the counters, the automatic
//     compaction, the pool Sync before the call returns;
//   - the cascade (PlanCascade), checkpoints (started when a log half is
//     full, published at the batch CheckpointPublishBatch fixes), compaction
//     and Install (manifest published, log word reset, replaced runs freed);
//   - the writer mutex, the version queries read, and the stats.
//
// Durability: a write batch is durable and visible when it returns OK, and
// atomic as a whole (one published 8-byte word makes it visible).
// Thread safety: any number of concurrent calls. Writers (Put, Erase,
// Compact, Stats) run one at a time; queries go straight to the backend and
// run beside them, seeing the table before or after each write batch.
//
// Who may call: tables/lsm/ (the front, LsmTable) and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/log/log.h"
#include "tables/lsm/backend.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/stats.h"
#include "tables/write_batch.h"

namespace gpkv::lsm {

class Core {
 public:
  // Opens the table rooted at root_offset on `backend`: validates root and
  // manifest, has the backend read and check every run and replay the log,
  // completes a checkpoint a crash interrupted (writable pools). Corruption
  // names table and offset.
  static Result<std::unique_ptr<Core>> Open(pm::Pool& pool, const std::string& table_name,
                                            uint64_t root_offset, const TableOptions& options,
                                            std::unique_ptr<Backend> backend,
                                            recovery::Report* report);

  // Close(), its error dropped (DB::Close reports it).
  ~Core();
  // Publishes a checkpoint still pending (layout.h) and syncs the pool, so
  // that the next open finds it done; what fails is returned. Further
  // writes are the caller's to prevent (gpkv::Table::Close's contract).
  Status Close();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  Status Put(const uint8_t* keys, const uint8_t* values, size_t n);
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t n);
  // A mixed batch, resolved (tables::ResolvedWrite), applied as one atomic
  // unit: its puts and its tombstones two log records published by one
  // store of the log word, or one run when it flushes. probe_found
  // receives batch.probes bytes: 1 where a probe key was live before it.
  Status Write(const tables::ResolvedWrite& batch, uint8_t* probe_found);
  Status Compact();
  Result<LsmStats> Stats();

  // The backend, for queries (they read the version the core installed).
  Backend& backend() { return *backend_; }

 private:
  Core(pm::Pool& pool, std::string table_name, uint64_t root_offset,
       std::unique_ptr<Backend> backend);

  Status Recover(const TableOptions& options, recovery::Report* report);
  // Applies a sorted batch: its puts (sequence number next_seq_) and its
  // tombstones (next_seq_ + 1 when there are puts too), either null or
  // empty, the keys of the two disjoint. REQUIRES: write_mutex_ held.
  Status Apply(RunPtr puts, RunPtr tombstones);
  // Writes each part as a record of its own past the published bytes, then
  // publishes them together (one store of the log word).
  Status AppendToLog(const RunPtr& puts, const RunPtr& tombstones);
  // Flushes the batch's run into the levels; last_seq: its last sequence
  // number.
  Status Flush(RunPtr batch, uint64_t last_seq);
  // The cascade (layout.h PlanCascade) of `sources` (newest first;
  // `incoming` entries as the log counts them) into manifest_'s levels: the
  // occupied levels below the target join the merge, are emptied in *next
  // and *next_version, and their runs go to *replaced; *target is the level
  // the merged run (returned) goes to, *age whether it is the oldest there.
  Result<RunPtr> CascadeMerge(std::vector<RunPtr> sources, uint64_t incoming, Manifest* next,
                              Version* next_version, std::vector<uint64_t>* replaced,
                              uint32_t* target, RunAge* age);
  // A checkpoint (two-half logs): the buffer (records up to applied_seq)
  // and the cascade's levels merged into a run whose write to the pool may
  // go on behind the next batches (Backend::StartRunWrite); the levels it
  // makes serve queries at once, its manifest waits in pending_; appends go
  // to the other half from here. REQUIRES: no checkpoint pending.
  Status StartCheckpoint(uint64_t applied_seq);
  // Waits for pending_'s run write, publishes its manifest, frees the runs
  // it replaced. A failed write leaves the table refusing writes (its
  // levels in memory are ahead of the pool's): reopen it.
  Status PublishCheckpoint();
  // The levels as queries see them: pending_'s manifest, else manifest_.
  const Manifest& Levels() const { return pending_ != nullptr ? pending_->next : manifest_; }
  // Appends go to the (empty) log half of `manifest`'s epoch from here on.
  void EnterLogHalf(const Manifest& manifest);
  // Installs `next_version` for queries, its levels' tombstone counts kept.
  void InstallLevels(std::shared_ptr<Version> next_version);
  // Makes `next_version` the writer's version and the one queries read.
  void SetVersion(std::shared_ptr<const Version> next_version);
  Status CompactLocked();
  Status MaybeCompact();
  // Publishes `next` (a new log epoch: the buffer is in its runs), installs
  // `next_version`, frees the runs of `replaced`. REQUIRES: write_mutex_
  // held.
  Status Install(Manifest next, const std::vector<uint64_t>& replaced,
                 std::shared_ptr<Version> next_version);
  // A copy of the writer's version with an empty buffer.
  std::shared_ptr<Version> LevelsOnly() const;
  std::string Where() const;

  pm::Pool& pool_;
  const std::string table_name_;
  const uint64_t root_offset_;
  const std::unique_ptr<Backend> backend_;
  EntryShape shape_;
  uint32_t log2_batch_ = 0;
  uint64_t log_capacity_ = 0;
  uint64_t buffer_entries_ = 0;  // M * b: the flush rule's bound (GoesToLog)
  uint32_t max_dead_percent_ = 50;
  uint32_t log_halves_ = 1;
  uint64_t publish_batch_ = 1;  // CheckpointPublishBatch(M)

  std::mutex write_mutex_;  // serialises writers; guards the fields below
  Manifest manifest_{};     // the published manifest
  // A checkpoint started and not yet published.
  struct Pending {
    Manifest next;                   // its manifest (log_epoch, log_half: the other half's)
    std::vector<uint64_t> replaced;  // runs it frees once published
    uint64_t batches = 0;            // batches appended since it started
    uint64_t run_offset = 0;         // its run's extent (0: none), written behind the batches
  };
  std::unique_ptr<Pending> pending_;
  Status broken_;  // set by a failed checkpoint write: writes refused
  // Where batches are appended: manifest_'s half and epoch, or the other
  // half and the next epoch while a checkpoint is pending; and the
  // published bytes of that half.
  log::Appender log_;
  // Entries of the published log records (a key counted once per record):
  // the write buffer's size as the flush rule counts it.
  uint64_t log_entries_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t level_tombstones_[kMaxLevels] = {};
  // The version the writer builds on (the one installed for queries).
  std::shared_ptr<const Version> version_;
  WriteCounters counters_;
};

}  // namespace gpkv::lsm
