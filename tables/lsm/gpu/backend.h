// lsm::gpu::GpuBackend: the GPU backend of a persistent ordered table, the
// primitives lsm::Core runs its protocol with (backend.h), on one CUDA device.
// The bytes it writes to the pool go through the shared writers of run.h, so
// a pool written on either backend opens and answers the same on the other
// (tests/lsm/gpu/lsm_cross_backend_test.cc).
//
// GPU memory holds a copy of every run of the table (its keys, meta and
// values arrays laid out as in the pool, one allocation per run), read back
// from the pool at open and checked there against the run's data checksum
// (computed on the device), the key filter of every level's run but the
// oldest (built on the device from the run's keys, 1.25 bytes a key), and
// the write buffer as a few device runs (the log's records carried as a
// binary counter, newest first).
//
// Writes (write.cu, merge.cu): a batch is staged to the device and sorted by
// key with CUB's radix sort (stable LSD passes over the key's words, least
// significant first, with the input position as payload); of a key given
// twice the last occurrence is kept. A log record's checksum is summed on
// the device and its keys and values are copied from the device into the
// log on a stream of its own (log_stream_), beside the buffer's carry merges
// on the write stream (pool_writer.cu). Runs merge pairwise, newest first, in
// tiles of the merge path (ties keep the newer entry; tombstones are dropped
// when asked, the CPU's rule of cpu/merge.cc). A level's run is copied from
// the device into its extent by the shared run writer (pool_writer.cu); a
// checkpoint's run is copied behind the next batches (checkpoint_stream_, a
// thread of its own, slices of OrderedGpuOptions::checkpoint_chunk_mb).
// Open (open.cu): runs read into GPU memory and checked, log records checked
// on the host and uploaded as they are, a warm-up batch, and the pool
// mapping registered with CUDA on a thread (so runs reach the pool at the
// link's speed and neither the open nor a flush includes the pinning); runs
// written before it is done go through pageable memory.
// Queries (queries.cu) run one thread per query over the device runs,
// newest source first: Get skips a level's run whose filter rules its key
// out (OrderedGpuOptions::read_filters) and stops at the first hit or
// tombstone; Count, Range, Successor and Predecessor walk the sources'
// sorted runs as a k-way merge from each run's lower bound (Range counts
// first, places the queries' outputs by a prefix sum, then fills them).
//
// Buffers: keys, values and outputs may be host or device memory of the
// table's device (cudaPointerGetAttributes decides); Range's results are
// host vectors (Table::RangeResults), RangeOnDevice's stay in GPU memory
// (Table::DeviceRangeResults).
//
// Errors: no device memory for a batch gives OutOfDeviceMemory and writes
// nothing (device memory is taken before anything is persisted).
//
// Thread safety: as backend.h says. Queries run each on its host thread's
// CUDA stream and hold the version they started with; a replaced run's
// device copy is freed when the last query holding its version returns.
//
// Who may call: tables/lsm/ (the family constructs it) and tests. This
// header needs no CUDA headers (CUDA's stream and event handles are declared
// as cuda_runtime.h declares them).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "tables/lsm/backend.h"
#include "tables/lsm/run.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*
struct CUevent_st;   // cudaEvent_t is CUevent_st*

namespace gpkv::gpu {
class PoolRegistration;
class StreamScratch;  // gpu/stream_scratch.h
}  // namespace gpkv::gpu

namespace gpkv::lsm::gpu {

class DeviceRun;  // backend.cuh
// A call's stream-ordered scratch memory.
using Scratch = ::gpkv::gpu::StreamScratch;
using DeviceRunPtr = std::shared_ptr<DeviceRun>;

class GpuBackend final : public Backend {
 public:
  // OK when CUDA device `device` can run this backend; else Unsupported.
  static Status DeviceUsable(int device = 0);
  // The backend of table `table_name` of `pool` on device `device`
  // (Unsupported when the device cannot run it); `threads` host threads
  // check the log at open.
  static Result<std::unique_ptr<GpuBackend>> Create(pm::Pool& pool, const std::string& table_name,
                                                    int threads, const OrderedGpuOptions& options,
                                                    int device = 0);
  ~GpuBackend() override;
  GpuBackend(const GpuBackend&) = delete;
  GpuBackend& operator=(const GpuBackend&) = delete;

  // Open (open.cu).
  Status Attach(const LsmView& view) override;
  Result<RunPtr> ReadRun(const LsmView& view, uint32_t level) override;
  Status ReplayLog(const LsmView& view, bool split, ReplayedRecords* out) override;
  // Writable pools: the warm-up, then the pool registration starts.
  Status FinishOpen() override;
  BufferPtr EmptyBuffer() override;

  // Writes (write.cu, merge.cu, pool_writer.cu).
  Status BindThread() override;
  void EndWrite() override;
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
  Result<uint64_t> StartRunWrite(const RunPtr& run, RunAge age) override;
  Status FinishRunWrite() override;
  void Install(std::shared_ptr<const Version> version) override;

  // Queries (queries.cu).
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
  void AddWriteProfile(const WriteCounters& counters, LsmStats* stats) override;

  // The table's name and pool, for messages.
  std::string Where() const { return pool_.path() + ": table '" + table_name_ + "'"; }
  int device() const { return device_; }
  const EntryShape& shape() const { return shape_; }

 private:
  friend class QueryCall;  // queries.cu: one query call's version, stream and copies
  // The scratch of the batch being written (SortPuts, SortErases), freed
  // by EndWrite.
  std::unique_ptr<Scratch> write_scratch_;

  // The version queries read (they keep it alive while they run).
  std::shared_ptr<const Version> CurrentVersion() {
    std::shared_lock<std::shared_mutex> lock(version_mutex_);
    return version_;
  }
  // Copies device or host input into device memory (staged when host or
  // unaligned).
  Status StageIn(Scratch& scratch, const uint8_t* host_or_device, size_t bytes,
                 const uint8_t** device_out, const char* what);
  // Copies between device scratch and a caller's array on `stream`
  // (gpu/staged_copy.h: pageable arrays through pinned chunks, any other by
  // one enqueued DMA); errors name the table.
  Status CopyIn(void* device, const void* host, size_t bytes, CUstream_st* stream,
                const char* what);
  Status CopyOut(void* host, const void* device, size_t bytes, CUstream_st* stream,
                 const char* what);

  GpuBackend(pm::Pool& pool, std::string table_name, int threads, const OrderedGpuOptions& options,
             int device);

  Status Neighbor(bool successor, const uint8_t* keys, uint8_t* out_keys, uint8_t* values,
                  uint8_t* found, size_t n);

  // A new device run of `count` entries (padding zeroed).
  Result<DeviceRunPtr> NewRun(uint64_t count, CUstream_st* stream);
  // A new device run as long as the sum of `counts` (n of them in device
  // memory: a 0/1 flag per entry kept, or a count per tile), on scratch's
  // stream (waits for the sum); *positions (the scratch's) gets where each
  // one's entries start in it: the exclusive prefix sum of the counts.
  Result<DeviceRunPtr> NewRunOfKept(const uint32_t* counts, uint64_t n, Scratch& scratch,
                                    uint64_t** positions);
  // The batch's keys (device memory) sorted stably, one entry per key (its
  // last occurrence). first_flags (n bytes, or null): 1 where an input is
  // its key's first occurrence; unique_of (n, or null): the entry of each
  // input's key.
  Result<DeviceRunPtr> SortBatch(const uint8_t* keys, const uint8_t* values, size_t n,
                                 uint64_t meta, uint8_t* first_flags, Scratch& scratch,
                                 uint32_t* unique_of);
  // newer and older (null: empty) merged, the newer entry of a key kept.
  Result<DeviceRunPtr> MergePair(const DeviceRunPtr& newer, const DeviceRunPtr& older,
                                 bool drop_tombstones);
  // The write buffer `runs` (newest first) with `batch` (newer than all of
  // them) carried in as DeviceBufferCarries says, the new run's fences built.
  Result<std::vector<DeviceRunPtr>> CarryInto(const std::vector<DeviceRunPtr>& runs,
                                              DeviceRunPtr batch);
  // The run's data checksum (into *checksum), tombstones and largest
  // sequence number (into the run), summed on the device.
  Status RunFacts(DeviceRun& run, uint64_t* checksum);
  // Enqueues on log_stream_ the sum of the checksum terms of the log record
  // in flight (record_) of `run` into *record_sum_.
  Status RecordChecksumTerms(const DeviceRun& run);
  // Builds run.fences (a level's run; queries search it often).
  Status BuildFences(DeviceRun& run);
  // Launches the build of run.filter (the run's key filter, as the pool
  // holds it) on the write stream; the caller waits for it before a version
  // names the run as a level's.
  Status BuildFilter(DeviceRun& run);
  // A run about to go to the pool as a level's: its filter built (unless
  // the run is the oldest), its header's facts (RunFacts) into *summary and
  // *checksum, its fences built; counts its arrays' bytes as copied.
  Status PrepareLevelRun(DeviceRun& run, RunAge age, RunSummary* summary, uint64_t* checksum);
  // The first batch after open would pay the device's one-time costs: each
  // kernel it launches is loaded at its first launch (CUDA's lazy module
  // loading) and the stream-ordered memory pool maps its memory. A batch of
  // min(b, kWarmUpEntries) keys sorted, merged and fenced in scratch here
  // pays them at open instead (writable tables). It also reserves
  // OrderedGpuOptions::reserve_buffers times the buffer's bytes in the
  // memory pool (H100, M = 64, 2^24 / 2^26 keys: no reserve 947-967 /
  // 871-905 M keys/s, 2 buffers 1120-1157 / 982-1018, 4 buffers 1140-1154 /
  // 1008-1099).
  static constexpr uint64_t kWarmUpEntries = uint64_t{1} << 20;
  Status WarmUp();
  void StartRegistration();
  // The registration when it is ready (waiting for it with
  // wait_for_registration); null: copy through pageable memory (not ready,
  // or the pool cannot be registered). REQUIRES: the writer's thread.
  gpkv::gpu::PoolRegistration* ReadyRegistration();

  pm::Pool& pool_;
  const std::string table_name_;
  const int threads_;
  const int device_;
  const OrderedGpuOptions options_;
  uint64_t table_id_ = 0;
  EntryShape shape_;
  uint32_t log2_batch_ = 0;
  uint64_t buffer_entries_ = 0;  // M * b
  // The pool mapping registered with CUDA, so that runs reach the pool at
  // the link's speed (null: copies through pageable memory). Registering a
  // large pool takes seconds (cudaHostRegister pins every page), so the
  // open starts it on registration_thread_ once the runs are read.
  // registration_ and registration_status_ are written by the thread before
  // it sets registration_done_ (release), read after it (acquire).
  std::unique_ptr<gpkv::gpu::PoolRegistration> registration_;
  Status registration_status_;
  std::atomic<bool> registration_done_{false};
  std::thread registration_thread_;

  // Where a write batch's time goes in this backend's primitives (host
  // clock, seconds; the phases wait for the device). Written by the writer;
  // read by AddWriteProfile (under the core's writer mutex).
  struct WriteTimes {
    double sort = 0;               // staging the batch in, radix sort, dedup, gather
    double log = 0;                // log record: checksum, copy to the pool, header
    double buffer = 0;             // the buffer's carry merges and their fences
    double merge = 0;              // cascade merges (Merge)
    double facts = 0;              // data checksum, tombstones, max seq
    double fences = 0;             // fence arrays of new runs
    double copy = 0;               // device -> pool copy of run arrays
    double persist = 0;            // extent allocation, padding, header, Persist
    double registration_wait = 0;  // waiting for the pool registration
    double checkpoint_copy = 0;    // a checkpoint's run copied and persisted (its own thread)
    double checkpoint_wait = 0;    // the writer waiting for that (FinishRunWrite)
    uint64_t pageable_copies = 0;  // runs copied before the registration
    uint64_t copied_bytes = 0;
  };
  WriteTimes times_;

  CUstream_st* write_stream_ = nullptr;
  // A log record's checksum and copy into the pool run here, beside the
  // buffer's merges on write_stream_ (the link and HBM at once).
  CUstream_st* log_stream_ = nullptr;
  CUevent_st* batch_ready_ = nullptr;         // a batch sorted on write_stream_
  unsigned long long* record_sum_ = nullptr;  // pinned: RecordChecksumTerms' result
  // A checkpoint's run is copied to the pool here, behind the batches.
  CUstream_st* checkpoint_stream_ = nullptr;
  uint64_t* pinned_ = nullptr;  // 4 words of pinned host memory for the writer's results
  // The log record in flight between StartLogRecord and FinishLogRecord.
  struct Record {
    log::RecordHeader header{};
    uint64_t offset = 0;
    uint64_t epoch = 0;
    bool tombstones = false;
    uint64_t count = 0;
  };
  Record record_;
  // The run write in flight between StartRunWrite and FinishRunWrite.
  struct RunWrite {
    DeviceRunPtr run;
    RunExtent extent;
    std::future<Status> copied;  // the copy and FinishRun, on a thread
    double copy_seconds = 0;     // written by that thread
  };
  std::unique_ptr<RunWrite> run_write_;

  std::shared_mutex version_mutex_;  // guards version_ (the pointer)
  std::shared_ptr<const Version> version_;
};

}  // namespace gpkv::lsm::gpu
