// logged::Core: the protocol of a persistent hash table in logged mode
// (layout.h), written once for every backend: the index is a volatile hash
// table (tables/hash_index.h) that the core reaches only through
// gpkv::Table's batches. It owns:
//   - the open: root and checkpoint validated, the image checked and put
//     into the index, the log's records replayed into it (nothing written);
//   - the write path: each batch one log record (a mixed batch two, published
//     by one store), durable before it is applied to the index and before the
//     call returns;
//   - the checkpoint (synchronous: when the log cannot take a batch): the
//     index's pairs sorted into an image, published with the next log epoch
//     by one store of the root's active_checkpoint word;
//   - the writer mutex and the stats.
//
// Durability: a write batch is durable when it returns OK, and atomic as a
// whole across a crash (one published 8-byte word makes it part of the
// table). Thread safety: any number of concurrent calls. Writers (Put, Erase,
// Write, Stats) run one at a time; gets and scans go straight to the index
// and run beside them, seeing each operation of a batch applied or not.
//
// Write batches come from host memory, or, on the CUDA backend (a
// DeviceRecordWriter given at open), from device memory: the record is then
// checksummed on the device and copied from there to the pool in bulk, and
// the batch is applied to the index from device memory.
//
// Who may call: tables/gphash/ (the front, LoggedTable) and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/logged/layout.h"
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
  uint64_t checkpoints = 0;  // written since open
  uint64_t image_entries = 0;
  uint64_t image_bytes = 0;
  uint64_t applied_seq = 0;
};

// Where a write batch's arrays lie.
enum class BatchMemory { kHost, kDevice };

// The CUDA backend's writer of a log record whose arrays are in device
// memory (gpu/device_records.h makes it; the core names no CUDA).
class DeviceRecordWriter {
 public:
  virtual ~DeviceRecordWriter() = default;
  // Copies the arrays of the columnar record of `count` keys (and values,
  // unless `values` is null: a tombstone record), sequence number `seq`, from
  // device memory to record_offset in the pool, and returns its header with
  // the checksum of log `epoch`: what log::FinishRecord then completes (the
  // same bytes as log::cpu::WriteRecordArrays from host memory). Returns once
  // the record's arrays are in the pool. REQUIRES: count >= 1; the record
  // fits its half.
  virtual Result<log::RecordHeader> WriteRecordArrays(pm::Pool& pool, uint64_t record_offset,
                                                      uint64_t epoch, uint64_t seq,
                                                      const uint8_t* keys, const uint8_t* values,
                                                      uint64_t count, uint32_t key_size,
                                                      uint32_t value_size) = 0;
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
  static Result<std::unique_ptr<Core>> Open(
      pm::Pool& pool, const std::string& table_name, uint64_t root_offset,
      const IndexFactory& make_index, int threads, recovery::Report* report,
      std::unique_ptr<DeviceRecordWriter> device_records = nullptr);

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

  // The index, for gets and scans.
  Table& index() { return *index_; }

 private:
  Core(pm::Pool& pool, std::string table_name, uint64_t root_offset, int threads);

  Status Recover(const IndexFactory& make_index, recovery::Report* report);
  // Applies the log's records after the checkpoint of `view` to the index and
  // sets where the next record goes.
  Status Replay(const LoggedView& view, recovery::Report* report);
  // A part of a batch: `count` keys and their values (null: erases).
  struct Part {
    const uint8_t* keys = nullptr;
    const uint8_t* values = nullptr;
    size_t count = 0;
  };
  // Makes puts then erases durable (log records, or the image when they do
  // not fit an empty log), applies them to the index. Every array lies in
  // `memory`. REQUIRES: write_mutex_.
  Status Apply(const Part& puts, const Part& erases, uint8_t* erased,
               BatchMemory memory = BatchMemory::kHost);
  // Copies a part's record arrays into the log at `offset` from `memory`;
  // returns the header with its checksum (log::FinishRecord completes it).
  Result<log::RecordHeader> WriteRecordArrays(const Part& part, uint64_t offset, uint64_t seq,
                                              BatchMemory memory);
  Status ApplyToIndex(const Part& puts, const Part& erases, uint8_t* erased);
  // Writes the index's image and publishes it with the next log epoch, then
  // frees the previous image and syncs the pool. REQUIRES: write_mutex_.
  Status Checkpoint();
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
  std::unique_ptr<Table> index_;
  std::unique_ptr<DeviceRecordWriter> device_records_;

  std::mutex write_mutex_;  // serialises writers; guards the fields below
  Status broken_;           // set when the index got ahead of the pool: writes refused
  log::Appender log_;
  uint64_t next_seq_ = 1;
  uint64_t image_offset_ = 0;
  uint64_t image_entries_ = 0;
  uint64_t checkpoints_ = 0;
};

}  // namespace gpkv::gphash::logged
