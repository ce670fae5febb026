// logged::Core: the protocol of a persistent hash table in logged mode
// (layout.h), written once for every backend: the index is a volatile hash
// table (tables/hash_index.h) that the core reaches only through
// gpkv::Table's batches. It owns:
//   - the open: root and checkpoint validated, the image checked and put
//     into the index, the log's records replayed into it (nothing written);
//   - the write path: each batch one log record (a mixed batch two, published
//     by one store), durable before it is applied to the index and before the
//     call returns;
//   - the checkpoint behind the batches (layout.h): when the active log half
//     cannot take a batch, the index's pairs are taken (ImageWriter::Scan)
//     and the batches go to the other half while the core's worker thread
//     writes the image (ImageWriter::Write); a later batch, or Close,
//     publishes it by one store of the root's active_checkpoint word;
//   - group commit: host write batches that arrive while another is being
//     written queue, and the first of them (the leader) writes the queued
//     batches' records back to back, publishes them by one store and one
//     Sync, then applies them to the index in arrival order;
//   - the writer mutex and the stats.
//
// Durability: a write batch is durable when it returns OK, and atomic as a
// whole across a crash (one published 8-byte word makes it part of the
// table; a group's batches are published by one word, all or none).
// Thread safety: any number of concurrent calls. Writers (a group's leader,
// a device batch, Stats) run one at a time; gets and scans (Get, Scan) run
// beside them, seeing each operation of a host batch applied or not.
//
// Write batches come from host memory, or, on the CUDA backend (a
// DeviceRecordWriter given at open), from device memory: the record is then
// checksummed on the device and copied from there to the pool in bulk while
// the batch is applied to the index from device memory, and readers wait
// behind the read gate from the index apply's start until the record is
// durable (docs/ARCHITECTURE.md, "Logged hash tables"). A host put batch
// that commits alone on the CUDA backend is applied the other way round:
// the index's kernels start, and the record is written, published and synced
// on the host while they run, readers held at the gate as for a device
// batch. A batch whose record could not be made durable while the index
// shows it leaves the index ahead of the pool: the table then refuses reads
// and writes until it is reopened, and the reopen's replay of the log keeps
// every acknowledged batch.
//
// Who may call: tables/gphash/ (the front, LoggedTable) and tests.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/logged/image_writer.h"
#include "tables/gphash/logged/layout.h"
#include "tables/hash_index.h"
#include "tables/log/layout.h"
#include "tables/log/log.h"
#include "tables/write_batch.h"

namespace gpkv::gphash::logged {

struct LoggedView;

// What a logged table reports beyond its keys (the front's properties).
struct LoggedStats {
  uint64_t keys = 0;
  uint64_t batch_entries = 0;
  uint64_t log_batches = 0;
  uint64_t log_bytes = 0;
  uint64_t log_capacity = 0;
  uint64_t checkpoints = 0;         // published since open
  bool checkpoint_pending = false;  // one started whose publish is still to come
  uint64_t image_entries = 0;
  uint64_t image_bytes = 0;
  uint64_t applied_seq = 0;
  // Where the write batches' time went since open (steady_clock, summed
  // over the batches, wall time of the writing thread). A device batch's
  // index apply runs on the GPU beside its record's copy: index_ns then
  // covers the part of the copy it hides, and record_ns is only the rest.
  struct WritePhases {
    uint64_t batches = 0;   // write batches timed (host and device)
    uint64_t total_ns = 0;  // the whole write, once the writer holds the mutex
    // Starting and publishing checkpoints, batches larger than a half: the
    // sum of the three steps below.
    uint64_t checkpoint_ns = 0;
    uint64_t checkpoint_scan_ns = 0;     // ImageWriter::Scan, the other half opened
    uint64_t checkpoint_wait_ns = 0;     // waiting for the worker's image
    uint64_t checkpoint_publish_ns = 0;  // the checkpoint published, the old image freed
    // Writing the records' arrays: checksums and copies to the pool; a device
    // batch's ends when its stream is synchronised (the record is in the pool).
    uint64_t record_ns = 0;
    uint64_t publish_ns = 0;  // the records' headers persisted, the log word published
    uint64_t sync_ns = 0;     // pool Sync: what makes the batch durable
    // Applying the batch to the index; the index's calls return when its GPU
    // work is done.
    uint64_t index_ns = 0;
  };
  WritePhases write_phases;
  // Where the open's time went (steady_clock, wall time of the opening
  // thread): the image's checksums checked, the index made, the image put
  // into it, the log's records checked and replayed into it (a checkpoint
  // an earlier crash left pending completed included).
  struct OpenPhases {
    uint64_t check_ns = 0;
    uint64_t index_ns = 0;
    uint64_t image_ns = 0;
    uint64_t replay_ns = 0;
  };
  OpenPhases open_phases;
  // The device record writer's registration of the pool (CUDA backend):
  // how long it took once started (0 until done), and how many records from
  // device memory were copied through pageable memory because the pool
  // could not be registered.
  uint64_t registration_ns = 0;
  uint64_t pageable_records = 0;
};

// Test only: whether a checkpoint's image is written on the batch's own
// thread when the checkpoint starts (true) instead of on the core's worker
// thread (false, the default). The crash tests set it so that the persist
// points come in a fixed order; the checkpoint is still published later, as
// layout.h says. Process-wide.
void TEST_WriteImagesInline(bool inline_writes);

// Test only: the next `count` records of write batches in device memory
// fail as if their copy to the pool had failed (after the copy ran, with the
// batch applied to the index beside it). Process-wide; 0 stops it.
void TEST_FailNextDeviceRecords(int count);

// Where a write batch's arrays lie.
enum class BatchMemory { kHost, kDevice };

// The CUDA backend's writer of a log record whose arrays are in device
// memory (gpu/device_records.h makes it; the core names no CUDA). A record
// is started, then waited for, so that the caller's own GPU work (the index
// apply) runs beside its copy.
class DeviceRecordWriter {
 public:
  virtual ~DeviceRecordWriter() = default;
  // Queues the checksum and the copy of the arrays of the columnar record of
  // `count` keys (and values, unless `values` is null: a tombstone record),
  // sequence number `seq`, from device memory to record_offset in the pool.
  // Returns once queued (a pool the driver could not register is copied to
  // from pageable memory, and the copy is then done on return). On error
  // nothing of the record is left queued. REQUIRES: count >= 1; the record
  // fits its half; no record started and not waited for; the arrays stay
  // as they are until WaitRecordArrays returns.
  virtual Status StartRecordArrays(pm::Pool& pool, uint64_t record_offset, uint64_t epoch,
                                   uint64_t seq, const uint8_t* keys, const uint8_t* values,
                                   uint64_t count, uint32_t key_size, uint32_t value_size) = 0;
  // Waits until the started record's arrays are in the pool, and returns its
  // header with the checksum of log `epoch`: what log::FinishRecord then
  // completes (the same bytes as log::cpu::WriteRecordArrays from host
  // memory). REQUIRES: a record started.
  virtual Result<log::RecordHeader> WaitRecordArrays() = 0;
  // Starts what makes the device's copies into the pool fast (the CUDA
  // writer registers the pool mapping with the device on a thread of its
  // own; the first record waits for it, and starts it if nothing has).
  // The core calls it once its open is done: registering pins every page of
  // the mapping (0.5-1 s for a pool of 6 GiB), and run beside the open it
  // slowed the image check's first reads of the pool and the index's device
  // allocations.
  virtual void StartRegistration() {}
  // LoggedStats' registration_ns and pageable_records.
  struct Counters {
    uint64_t registration_ns = 0;
    uint64_t pageable_records = 0;
  };
  virtual Counters counters() const { return {}; }
};

class Core {
 public:
  // Makes the empty index, sized for `expected_keys`.
  using IndexFactory = std::function<Result<std::unique_ptr<Table>>(uint64_t expected_keys)>;

  // Opens the table rooted at root_offset: validates root and checkpoint,
  // checks the image and puts it into a new index (`make_index`), replays the
  // log's records into it. Writes nothing. Corruption names table and
  // offset. `threads`: CPU threads for checksums. `device_records`: the
  // CUDA backend's record writer (null: write batches in host memory only).
  // `make_image_writer`: the CUDA backend's checkpoint image writer (null:
  // MakeHostImageWriter's).
  static Result<std::unique_ptr<Core>> Open(
      pm::Pool& pool, const std::string& table_name, uint64_t root_offset,
      const IndexFactory& make_index, int threads, recovery::Report* report,
      std::unique_ptr<DeviceRecordWriter> device_records = nullptr,
      const ImageWriterFactory& make_image_writer = nullptr);

  // Close(), its error dropped (DB::Close reports it).
  ~Core();
  // Publishes a checkpoint still pending (waiting for its image) and syncs
  // the pool, so that the next open finds it done; what fails is returned.
  // Further writes are the caller's to prevent (gpkv::Table::Close's
  // contract).
  Status Close();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  // Write batches (Table's contracts: the last put of a key wins; erased,
  // when not null, gets 1 where a key was live), every array in `memory`.
  // kDevice: Unsupported unless the core has a DeviceRecordWriter.
  Status Put(const uint8_t* keys, const uint8_t* values, size_t n,
             BatchMemory memory = BatchMemory::kHost);
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t n,
               BatchMemory memory = BatchMemory::kHost);
  // Whether write batches may come from device memory.
  bool TakesDeviceBatches() const { return device_records_ != nullptr; }
  // A mixed batch, resolved (tables::ResolvedWrite): its puts' record and
  // its erases' record published by one store. probe_found receives
  // batch.probes bytes: 1 where a probe key was live before it.
  Status Write(const tables::ResolvedWrite& batch, uint8_t* probe_found);
  Result<LoggedStats> Stats();

  // Gets and scans of the index (Table's contracts), behind the read gate:
  // they wait while a device batch is applied and not yet durable, and fail
  // once such a batch could not be made durable. A scan's visitor must not
  // write to this table (the gate is held while it runs).
  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found, const BatchOptions& options);
  Status Scan(const Table::ScanVisitor& visit);

 private:
  Core(pm::Pool& pool, std::string table_name, uint64_t root_offset, int threads);

  Status Recover(const IndexFactory& make_index, const ImageWriterFactory& make_image_writer,
                 recovery::Report* report);
  // Applies the log's records after the checkpoint of `view` to the index
  // and sets where the next record goes. With records in both halves (a
  // checkpoint was in flight) on a writable pool, that checkpoint is done
  // again between the two halves and published.
  Status Replay(const LoggedView& view, recovery::Report* report);
  // Applies the records of segment `segment` of `view` after sequence number
  // *last_seq to the index; *last_seq becomes the last one's, *records
  // counts them.
  Status ReplaySegment(const LoggedView& view, uint32_t segment, uint64_t* last_seq,
                       uint64_t* records);
  // A part of a batch: `count` keys and their values (null: erases).
  struct Part {
    const uint8_t* keys = nullptr;
    const uint8_t* values = nullptr;
    size_t count = 0;
  };
  // A write batch and what its caller is told: one entry of the commit
  // queue (host batches), or a device batch.
  struct Writer {
    Part puts;
    Part erases;
    uint8_t* erased = nullptr;  // the erases' results (null: not asked)
    // A mixed batch's probes: probe_found gets 1 where a probe key is live
    // in the index before the batch.
    const uint8_t* probe_keys = nullptr;
    uint8_t* probe_found = nullptr;
    size_t probes = 0;
    BatchMemory memory = BatchMemory::kHost;
    Status status;      // set by the group's leader
    bool done = false;  // guarded by queue_mutex_: status is set
    std::condition_variable wake;
  };
  // Makes the writer's batch durable and applied, alone (a device batch) or
  // in a group (host batches: the queue, one leader at a time).
  Status Commit(Writer* writer);
  // How many of the queued batches from the first on the leader writes as
  // one group: those whose records fit the active half's room (1 when the
  // first does not: it goes alone, as Apply takes a batch).
  // REQUIRES: write_mutex_.
  size_t GroupSize(const std::vector<Writer*>& queued) const;
  uint64_t RecordBytes(const Writer& writer) const;
  // Probes, then Apply: one batch. REQUIRES: write_mutex_.
  Status ApplyAlone(Writer& writer);
  // The records of a group of host batches (group_size >= 2, all in the
  // active half) written back to back, published by one store, made durable
  // by one Sync, then each batch applied to the index in order; every
  // writer's status set (a failure fails each batch of the group).
  // REQUIRES: write_mutex_.
  void ApplyGroup(Writer* const* group, size_t group_size);
  // A mixed batch's probes answered from the index.
  Status Probe(const Writer& writer);
  // Makes puts then erases durable (log records, or the image when they do
  // not fit an empty half), applies them to the index. Every array lies in
  // `memory`. REQUIRES: write_mutex_.
  Status Apply(const Part& puts, const Part& erases, uint8_t* erased,
               BatchMemory memory = BatchMemory::kHost);
  // Copies a part's record arrays into the log at `offset` from host
  // memory; returns the header with its checksum (log::FinishRecord
  // completes it).
  log::RecordHeader WriteRecordArrays(const Part& part, uint64_t offset, uint64_t seq);
  // Apply's steps, timed: the checkpoint steps a batch starts, then its
  // record(s) (ApplyDeviceBatch for a batch in device memory) or, larger
  // than a half, the image it reaches the pool as.
  Status LogBatch(const Part& puts, const Part& erases, uint8_t* erased, BatchMemory memory,
                  uint64_t record_bytes);
  // Apply's log path for a batch in device memory (puts or erases, never
  // both): its record's copy queued, the index apply beside it with readers
  // held at the gate, then the record finished, published and synced before
  // the gate opens. A record not made durable breaks the table for reads and
  // writes. REQUIRES: write_mutex_, the record fits the active half.
  Status ApplyDeviceBatch(const Part& puts, const Part& erases, uint8_t* erased);
  // Apply's log path for a put batch in host memory when the index overlaps
  // puts (overlapped_put_): the index apply's kernels start with readers
  // held at the gate, the record is written, published and synced on this
  // thread meanwhile, and the gate opens once both are done. A record not
  // made durable breaks the table for reads and writes. REQUIRES:
  // write_mutex_, the record fits the active half.
  Status ApplyOverlappedPut(const Part& puts);
  Status ApplyToIndex(const Part& puts, const Part& erases, uint8_t* erased);
  // A failed write leaves the table refusing writes until it is reopened
  // (broken_), its message `status`'s with where the acknowledged batches
  // are (`kept`). RefuseReads: the index may show a batch the pool does not
  // surely hold, so reads are refused too (unreadable_; broken_ as well
  // unless it already names an earlier failure). REQUIRES: write_mutex_.
  void RefuseWrites(const Status& status, const char* kept);
  void RefuseReads(const Status& status, const char* kept);
  // Starts a checkpoint of the index as it stands (every batch up to
  // applied_seq): the scan and the image's extent reserved, then appends go
  // to the other log half in the next epoch (its word reset to that epoch
  // with 0 bytes unless `reset_other_half` is false: an open resuming a
  // checkpoint whose half holds records), and the image is written on the
  // worker thread. Nothing changes when it fails. REQUIRES: write_mutex_, no
  // checkpoint pending.
  Status StartCheckpoint(uint64_t applied_seq, bool reset_other_half = true);
  // Waits for the pending checkpoint's image, publishes the checkpoint,
  // frees the previous image. A failed image write leaves the table
  // refusing writes (every acknowledged batch is in the log's halves).
  // `timed`: a write batch's step, its wait and publish added to
  // write_phases_ (laps of phase_clock_). REQUIRES: write_mutex_, a
  // checkpoint pending.
  Status PublishCheckpoint(bool timed = false);
  // PublishCheckpoint's steps once the image is written (or failed).
  struct Pending;
  Status PublishPending(Pending& pending);
  // Adds the time since phase_clock_'s last lap to one checkpoint step of
  // write_phases_ (`step`) and to their sum. REQUIRES: write_mutex_.
  void LapCheckpoint(uint64_t LoggedStats::WritePhases::*step);
  // Whether a pending checkpoint's image is written (without waiting).
  bool ImageWritten() const;
  std::string Where() const;

  pm::Pool& pool_;
  const std::string table_name_;
  const uint64_t root_offset_;
  const int threads_;
  uint64_t table_id_ = 0;
  uint32_t key_size_ = 0;
  uint32_t value_size_ = 0;
  uint32_t log2_batch_ = 0;
  uint32_t log_batches_ = 0;
  uint64_t publish_batch_ = 2;  // PublishBatch(M)
  std::unique_ptr<Table> index_;
  // The index's overlapped put, on the CUDA backend (null on the CPU, whose
  // index put is host work itself).
  tables::OverlappedIndexPut* overlapped_put_ = nullptr;
  std::unique_ptr<DeviceRecordWriter> device_records_;
  std::unique_ptr<ImageWriter> image_writer_;

  // Readers take it shared; a device batch's writer holds it exclusively
  // from its index apply's start until its record is durable. Guards
  // unreadable_.
  std::shared_mutex read_gate_;
  // Set when a device batch's index apply got ahead of a record that did not
  // become durable: reads refused (broken_ is set too).
  Status unreadable_;

  std::mutex write_mutex_;  // serialises writers; guards the fields below
  Status broken_;           // set when the index got ahead of the pool: writes refused
  // The time of a write batch's steps (steady_clock, a few reads a batch).
  class PhaseClock {
   public:
    // Nanoseconds since the previous lap (or the start).
    uint64_t Lap();
    // Nanoseconds since the start.
    uint64_t Total() const;

   private:
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_ = start_;
  };
  PhaseClock phase_clock_;  // of the batch being written
  LoggedStats::WritePhases write_phases_;
  LoggedStats::OpenPhases open_phases_;
  // Where batches are appended: the published checkpoint's half and epoch,
  // or the other half and the next epoch while a checkpoint is pending.
  log::Appender log_;
  uint64_t next_seq_ = 1;
  uint64_t image_offset_ = 0;  // the published checkpoint's image
  uint64_t image_entries_ = 0;
  uint64_t checkpoints_ = 0;
  // A checkpoint started and not yet published.
  struct Pending {
    logged::Checkpoint next{};  // its slot (generation set at the publish)
    uint64_t batches = 0;       // batches of its half, the one that started it included
    std::thread worker;         // writes the image (not joinable: written inline)
    Status written;             // the image write's outcome, once `done`
    std::atomic<bool> done{false};
  };
  std::unique_ptr<Pending> pending_;
  std::vector<Writer*> group_;  // the leader's copy of the queue

  // The commit queue of host write batches, in arrival order: its first
  // writer is the leader until its group is done.
  std::mutex queue_mutex_;
  std::deque<Writer*> queue_;
};

}  // namespace gpkv::gphash::logged
