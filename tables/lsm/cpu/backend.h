// lsm::cpu::LsmCpu: the CPU backend of a persistent ordered table. Runs
// batches on worker threads (OpenMP) over the table's bytes in the pool:
// writes sort the batch and either append it to the log (small batches) or
// merge it down the levels into a new run (layout.h describes the protocol);
// queries binary-search the runs in place in the pool mapping and the write
// buffer in memory.
//
// Durability: a write batch is durable and visible when it returns OK, and
// atomic as a whole (one published 8-byte word makes it visible).
// Thread safety: any number of concurrent calls. Writers (Put, Erase,
// Compact) run one at a time; queries run beside them and see the table
// before or after each write batch. A write frees the runs it replaced only
// once no query can still be reading them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/lsm/cpu/search.h"
#include "tables/lsm/cpu/write_buffer.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"
#include "tables/lsm/stats.h"

namespace gpkv::lsm {

namespace cpu {

class LsmCpu {
 public:
  // Opens the table rooted at root_offset: validates root, manifest and every
  // run (header and data checksum), replays the log into the write buffer,
  // and resets a stale log word. Corruption names table and offset.
  static Result<std::unique_ptr<LsmCpu>> Open(pm::Pool& pool, const std::string& table_name,
                                              uint64_t root_offset, const TableOptions& options,
                                              int threads, recovery::Report* report);

  // Publishes a checkpoint still pending (layout.h) and syncs the pool, so
  // that the next open finds it done; reports what failed (the checkpoint is
  // then left to the next open). Later writes are the caller's to prevent.
  Status Close();
  // Close, its error dropped (the engine calls Close first).
  ~LsmCpu();
  LsmCpu(const LsmCpu&) = delete;
  LsmCpu& operator=(const LsmCpu&) = delete;

  Status Put(const uint8_t* keys, const uint8_t* values, size_t n);
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t n);
  Status Compact();

  void Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n);
  void Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n);
  void Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n);
  void Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                 size_t n);
  void Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values, uint8_t* found,
                   size_t n);
  // Live pairs in ascending key order.
  Status Scan(const Table::ScanVisitor& visit);
  LsmStats Stats();

 private:
  LsmCpu(pm::Pool& pool, std::string table_name, uint64_t root_offset, int threads);

  // Runs of the occupied levels, and the write buffer: what queries read.
  struct Version {
    std::vector<RunView> runs;     // occupied levels, ascending (newest first)
    std::vector<uint32_t> levels;  // the level of each run
    // The fence keys runs[i].fences points into (shared with other
    // versions holding the same run).
    std::vector<std::shared_ptr<const std::vector<uint64_t>>> fences;
    WriteBuffer buffer;  // newest of all
  };

  Status Recover(const TableOptions& options, recovery::Report* report);
  // The sources of a query, newest first. REQUIRES: version_mutex_ held.
  Sources SourcesOf(const Version& version) const;
  // Sorts the batch and applies it. REQUIRES: write_mutex_ held.
  Status Write(RunData batch);
  Status AppendToLog(RunData batch);
  Status Flush(RunData batch);
  // The cascade (layout.h PlanCascade) of `sources` (newest first; `incoming`
  // entries as the log counts them) into manifest_'s levels: merged with
  // the occupied levels below the target into one run written to the pool;
  // in *next those levels are replaced by the run, *replaced gets their runs.
  Status Cascade(std::vector<RunView> sources, uint64_t incoming, Manifest* next,
                 std::vector<uint64_t>* replaced);
  // A checkpoint (two-half logs): the buffer (records up to applied_seq)
  // and the cascade's levels merged into a run written to the pool, the
  // levels it makes installed for queries, its manifest held in pending_;
  // appends go to the other half from here. REQUIRES: no checkpoint
  // pending.
  Status StartCheckpoint(uint64_t applied_seq);
  // Publishes pending_'s manifest and frees the runs it replaced.
  Status PublishCheckpoint();
  // The levels as queries see them: pending_'s manifest, else manifest_.
  const Manifest& Levels() const { return pending_ != nullptr ? pending_->next : manifest_; }
  void UpdateLevelTombstones();
  // Appends go to the (empty) log half of `manifest`'s epoch from here on.
  void EnterLogHalf(const Manifest& manifest);
  // Installs the version of `manifest`'s levels with an empty buffer.
  void InstallLevels(const Manifest& manifest);
  Status CompactLocked();
  Status MaybeCompact();
  // Publishes `next` (a new log epoch: the buffer is in its runs), installs
  // the version it describes with an empty buffer, frees the runs of
  // `replaced`. REQUIRES: write_mutex_ held.
  Status Install(Manifest next, const std::vector<uint64_t>& replaced);
  // The version of `manifest`: its runs with their fences (reused from
  // fence_cache_ for runs that were already published, built for new ones).
  // REQUIRES: write_mutex_ held (or the open in progress).
  std::unique_ptr<Version> VersionOf(const Manifest& manifest, WriteBuffer buffer);
  // Live keys of all sources (merge scan). REQUIRES: version_mutex_ held.
  uint64_t CountLive(const Version& version) const;

  pm::Pool& pool_;
  const std::string table_name_;
  const uint64_t root_offset_;
  const int threads_;
  uint64_t table_id_ = 0;
  EntryShape shape_;
  uint32_t log2_batch_ = 0;
  uint64_t log_offset_ = 0;
  uint64_t log_capacity_ = 0;
  uint64_t buffer_entries_ = 0;  // M * b: the flush rule's bound (GoesToLog)
  uint32_t max_dead_percent_ = 50;
  uint32_t log_halves_ = 1;
  uint64_t half_capacity_ = 0;  // bytes of a log half
  uint64_t publish_batch_ = 1;  // CheckpointPublishBatch(M)

  std::mutex write_mutex_;  // serialises writers; guards the fields below
  Manifest manifest_{};     // the published manifest
  // A checkpoint written and not yet published.
  struct Pending {
    Manifest next;                   // its manifest (log_epoch, log_half: the other half's)
    std::vector<uint64_t> replaced;  // runs it frees once published
    uint64_t batches = 0;            // batches appended since it started
  };
  std::unique_ptr<Pending> pending_;
  // Where batches are appended: manifest_'s half and epoch, or the other
  // half and the next epoch while a checkpoint is pending.
  uint32_t log_half_ = 0;
  uint64_t log_epoch_ = 0;
  uint64_t log_bytes_ = 0;  // published log bytes of that half
  // Entries of the published log records (a key counted once per record):
  // the write buffer's size as the flush rule counts it (both backends).
  uint64_t log_entries_ = 0;
  uint64_t next_seq_ = 1;
  std::vector<uint64_t> level_tombstones_;  // per level, from the run headers
  // Fences of the published runs, by run offset.
  std::map<uint64_t, std::shared_ptr<const std::vector<uint64_t>>> fence_cache_;

  std::shared_mutex version_mutex_;  // queries shared, installing a version exclusive
  std::unique_ptr<Version> version_;
};

}  // namespace cpu
}  // namespace gpkv::lsm
