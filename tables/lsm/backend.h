// lsm::Backend: the primitives an ordered table's backend supplies to its
// core (lsm::Core, core.h), which owns the protocol: what is written when,
// what is published, in which order. cpu::CpuBackend runs them on worker
// threads over the pool mapping and memory; gpu::GpuBackend on a CUDA device
// over copies of the runs in GPU memory. Neither decides anything the pool's
// bytes depend on: every byte either writes goes through the shared writers
// of run.h and root.h, called by the core or by the primitive it asks for.
//
// Runs and write buffers are the backend's: the core holds them as opaque
// shared handles (Run, Buffer) and gives them back to the backend's
// primitives. A Version (the levels' runs and the write buffer) is what
// queries read; the core installs each new one (Install) and the backend's
// queries read the latest installed.
//
// Who may call: tables/lsm/ (the core and the family). Thread safety: the
// write primitives are called by one writer at a time (the core's writer
// mutex); the queries, Install and CountLive may run beside them as each
// says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/reader.h"
#include "tables/lsm/stats.h"
#include "tables/range_limit.h"

namespace gpkv::lsm {

// A sorted run of unique keys held by a backend: a sorted batch, a merge's
// output, a level's run. Immutable once made, except that writing it to the
// pool (WriteRun, StartRunWrite) may change where the backend reads it from.
class Run {
 public:
  virtual ~Run() = default;
  // Entries (keys) of the run.
  uint64_t count = 0;
  // Tombstones among them: known for a level's run (read at open, or counted
  // when it was written to the pool).
  uint64_t tombstones = 0;
};
using RunPtr = std::shared_ptr<Run>;

// A run written to the pool is the table's oldest (kOldest) when no level
// above its own is occupied. It stays the oldest until a merge replaces it
// (a run is only ever written above the levels it merges), and gets do not
// read the oldest run's filter (layout.h).
enum class RunAge { kNewer, kOldest };

// The write buffer: the log's published records as a few sorted runs.
class Buffer {
 public:
  virtual ~Buffer() = default;
  // Entries of its runs (a key counted once per run).
  virtual uint64_t entries() const = 0;
  bool empty() const { return entries() == 0; }
  // Its runs, newest first.
  virtual std::vector<RunPtr> Runs() const = 0;
};
using BufferPtr = std::shared_ptr<const Buffer>;

// What queries read: the runs of the levels and the write buffer (newer
// than every level).
struct Version {
  RunPtr levels[kMaxLevels];  // null: an empty level
  BufferPtr buffer;           // never null
};

// The log's published records replayed at open (ReplayLog).
struct ReplayedRecords {
  BufferPtr buffers[2];       // the records of each log segment
  uint64_t entries[2] = {};   // their entries (a key counted once per record)
  uint64_t last_seq[2] = {};  // the last sequence number up to each segment's end
  uint64_t records = 0;
};

// What the core counts and times of the write path; a backend may report it
// with its own counters (AddWriteProfile).
struct WriteCounters {
  uint64_t batches = 0, flushes = 0, log_appends = 0, checkpoints = 0;
  double install = 0;  // seconds: manifest, log word, frees, version swap
  double sync = 0;     // seconds: pool Sync at the end of each batch
  double compact = 0;  // seconds: the automatic compaction check and its compactions
};

class Backend {
 public:
  virtual ~Backend() = default;

  // ---- open ----

  // Takes the table's facts from its validated root (shape, table id, batch
  // and buffer sizes) and makes what the backend needs before anything else
  // (streams, pinned memory).
  virtual Status Attach(const LsmView& view) = 0;
  // The run of `level` (occupied in view.manifest), checked whole (its
  // header, and its data checksum against the header's), as the level's run.
  // Corruption names table and offset.
  virtual Result<RunPtr> ReadRun(const LsmView& view, uint32_t level) = 0;
  // Replays the log's published records, oldest first, each checked, into
  // buffers[segment] (all into buffers[0] unless `split`); last_seq starts
  // at the manifest's applied_seq. Corruption names the record's offset.
  virtual Status ReplayLog(const LsmView& view, bool split, ReplayedRecords* out) = 0;
  // The open is done (runs read, log replayed, an interrupted checkpoint
  // completed): what the backend does last (the GPU's warm-up and pool
  // registration).
  virtual Status FinishOpen() = 0;
  // An empty write buffer.
  virtual BufferPtr EmptyBuffer() = 0;

  // ---- writes (one writer at a time) ----

  // Makes the calling thread ready to run write primitives (the GPU: its
  // device current). Called at the start of each writer call.
  virtual Status BindThread() = 0;
  // The end of a writer call that BindThread began, after its batch is
  // written or has failed: the backend releases what the call's batch held
  // (the GPU: the sort's scratch, given back to the stream-ordered memory
  // pool only now, so that the next batch's sort takes the same memory
  // again rather than memory the pool must map).
  virtual void EndWrite() {}
  // The n pairs of a put batch as a sorted run of unique keys (of a key
  // given twice the last occurrence), every entry of sequence number seq.
  // REQUIRES: n >= 1.
  virtual Result<RunPtr> SortPuts(const uint8_t* keys, const uint8_t* values, size_t n,
                                  uint64_t seq) = 0;
  // The tombstones of an erase batch of n keys, sequence number seq: its
  // keys sorted, unique, those live in `current` only. erased (n bytes, or
  // null): 1 where input i is its key's first occurrence and the key was
  // live. REQUIRES: n >= 1.
  virtual Result<RunPtr> SortErases(const uint8_t* keys, uint8_t* erased, size_t n, uint64_t seq,
                                    const Version& current) = 0;
  // `buffer` with `batch` (newer than every entry of it) carried in.
  virtual Result<BufferPtr> CarryIntoBuffer(const BufferPtr& buffer, const RunPtr& batch) = 0;
  // Starts writing the columnar log record of `batch` (all puts, or all
  // erases when `tombstones`; sequence number seq) at record_offset with the
  // checksum of log epoch `epoch`: its arrays copied into the pool, its
  // checksum summed. It may go on beside the calls that follow (the GPU's
  // copy beside CarryIntoBuffer) until FinishLogRecord.
  virtual Status StartLogRecord(const Run& batch, bool tombstones, uint64_t record_offset,
                                uint64_t epoch, uint64_t seq) = 0;
  // Waits for the record StartLogRecord began; when `complete`, writes its
  // header and persists it (log::FinishRecord) and returns its bytes;
  // else leaves it unwritten (nothing reads past the published bytes) and
  // returns 0.
  virtual Result<uint64_t> FinishLogRecord(bool complete) = 0;
  // Runs given newest first merged into one: of a key the newest entry;
  // tombstones dropped when drop_tombstones. May return sources[0] itself
  // when it is the only source and nothing is dropped.
  virtual Result<RunPtr> Merge(const std::vector<RunPtr>& newest_first, bool drop_tombstones) = 0;
  // Writes `run` (count >= 1) to the pool as a level's run (run.h: the
  // extent allocated, arrays and header written, persisted; unreferenced
  // until a manifest names it) and returns its offset; run.tombstones is set.
  // A run of RunAge::kOldest gets a filter of every bit set (layout.h).
  virtual Result<uint64_t> WriteRun(Run& run, RunAge age) = 0;
  // WriteRun that may finish behind the next batches: the extent allocated
  // and its offset returned (run.tombstones set), the rest of the write
  // going on until FinishRunWrite. One at a time.
  virtual Result<uint64_t> StartRunWrite(const RunPtr& run, RunAge age) = 0;
  // Waits for the write StartRunWrite began: OK once the run is durable.
  virtual Status FinishRunWrite() = 0;
  // Makes `version` the one queries read from the next query on. Once it
  // returns, no query reads a pool run that `version` does not hold.
  virtual void Install(std::shared_ptr<const Version> version) = 0;

  // ---- queries (any number, beside the writer) ----

  virtual Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n) = 0;
  virtual Status Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n) = 0;
  // Of each query the pairs `limit` selects; each query's walk stops once
  // it has them.
  virtual Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n,
                       tables::RangeLimit limit) = 0;
  // Range with the results left in GPU memory; Unsupported where there is
  // none.
  virtual Status RangeOnDevice(const uint8_t* lo, const uint8_t* hi,
                               Table::DeviceRangeResults* results, size_t n,
                               tables::RangeLimit limit) = 0;
  virtual Status Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                           size_t n) = 0;
  virtual Status Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values,
                             uint8_t* found, size_t n) = 0;
  // Live pairs in ascending key order.
  virtual Status Scan(const Table::ScanVisitor& visit) = 0;

  // ---- stats ----

  // Live keys of `version` (the writer's: called under the core's writer
  // mutex).
  virtual Result<uint64_t> CountLive(const Version& version) = 0;
  // Adds the backend's write profile (LsmStats::write_profile) to *stats.
  virtual void AddWriteProfile(const WriteCounters& counters, LsmStats* stats) = 0;
};

}  // namespace gpkv::lsm
