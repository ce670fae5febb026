#include "tables/gphash/logged/core.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "pm/extent_allocator.h"
#include "tables/gphash/logged/reader.h"
#include "tables/gphash/logged/root.h"
#include "tables/log/cpu/record_writer.h"
#include "tables/log/record.h"

namespace gpkv::gphash::logged {
namespace {

// Pairs put into the index per call while an image is read at open.
constexpr uint64_t kImageChunk = uint64_t{1} << 20;

// Where a table that refuses reads keeps its acknowledged batches, when its
// index ran ahead of a record.
constexpr const char* kReplayKeepsEveryBatch =
    "the reopen replays the log, which holds every acknowledged batch";

std::atomic<bool> write_images_inline{false};
std::atomic<int> failing_device_records{0};

// True when an injected failure of a device record is due (and takes it).
bool TakeInjectedDeviceRecordFailure() {
  int left = failing_device_records.load();
  while (left > 0 && !failing_device_records.compare_exchange_weak(left, left - 1)) {
  }
  return left > 0;
}

}  // namespace

void TEST_WriteImagesInline(bool inline_writes) { write_images_inline = inline_writes; }

void TEST_FailNextDeviceRecords(int count) { failing_device_records = count; }

uint64_t Core::PhaseClock::Lap() {
  const auto now = std::chrono::steady_clock::now();
  const auto lap = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count();
  last_ = now;
  return static_cast<uint64_t>(lap);
}

uint64_t Core::PhaseClock::Total() const {
  const auto now = std::chrono::steady_clock::now();
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_).count());
}

Core::Core(pm::Pool& pool, std::string table_name, uint64_t root_offset, int threads)
    : pool_(pool),
      table_name_(std::move(table_name)),
      root_offset_(root_offset),
      threads_(std::max(1, threads)) {}

Result<std::unique_ptr<Core>> Core::Open(pm::Pool& pool, const std::string& table_name,
                                         uint64_t root_offset, const IndexFactory& make_index,
                                         int threads, recovery::Report* report,
                                         std::unique_ptr<DeviceRecordWriter> device_records,
                                         const ImageWriterFactory& make_image_writer) {
  std::unique_ptr<Core> core(new Core(pool, table_name, root_offset, threads));
  core->device_records_ = std::move(device_records);
  GPKV_RETURN_IF_ERROR(core->Recover(make_index, make_image_writer, report));
  return core;
}

Core::~Core() {
  // Best effort: an error here leaves the checkpoint to the next open
  // (DB::Close reports it through Close).
  Close().IgnoreError();
}

Status Core::Close() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  if (pending_ == nullptr) return Status::OK();
  GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  return pool_.Sync();
}

std::string Core::Where() const { return pool_.path() + ": table '" + table_name_ + "'"; }

Status Core::Recover(const IndexFactory& make_index, const ImageWriterFactory& make_image_writer,
                     recovery::Report* report) {
  auto view = ReadLoggedRoot(pool_, table_name_, root_offset_, /*require_allocated=*/false);
  if (!view.ok()) return view.status();
  table_id_ = view->table_id;
  key_size_ = view->key_size;
  value_size_ = view->value_size;
  log2_batch_ = view->log2_batch;
  log_batches_ = view->log_batches;
  publish_batch_ = PublishBatch(log_batches_);
  image_writer_ = make_image_writer != nullptr
                      ? make_image_writer(table_id_, key_size_, value_size_, threads_)
                      : MakeHostImageWriter(pool_, table_id_, key_size_, value_size_, threads_);
  PhaseClock clock;
  GPKV_RETURN_IF_ERROR(CheckImage(pool_, *view, threads_));
  open_phases_.check_ns = clock.Lap();
  const ImageArrays image = ImageOf(pool_, *view);
  auto index = make_index(std::max(view->expected_keys, image.entries));
  if (!index.ok()) return index.status();
  index_ = std::move(*index);
  if (device_records_ != nullptr) {
    overlapped_put_ = dynamic_cast<tables::OverlappedIndexPut*>(index_.get());
  }
  open_phases_.index_ns = clock.Lap();
  for (uint64_t first = 0; first < image.entries; first += kImageChunk) {
    const uint64_t count = std::min(kImageChunk, image.entries - first);
    GPKV_RETURN_IF_ERROR(
        index_->Put(ConstBytes(image.keys + first * key_size_, count * key_size_),
                    ConstBytes(image.values + first * value_size_, count * value_size_)));
  }
  image_offset_ = view->checkpoint.image_offset;
  image_entries_ = image.entries;
  open_phases_.image_ns = clock.Lap();
  GPKV_RETURN_IF_ERROR(Replay(*view, report));
  open_phases_.replay_ns = clock.Lap();
  if (device_records_ != nullptr) device_records_->StartRegistration();
  return Status::OK();
}

Status Core::Replay(const LoggedView& view, recovery::Report* report) {
  // The log's records after the image, in order: puts as a put batch,
  // erases as an erase batch. Nothing is written unless a checkpoint was in
  // flight: an open interrupted here is simply run again.
  const log::Segments& segments = view.log_segments;
  uint64_t records = 0;
  uint64_t last_seq = view.checkpoint.applied_seq;
  log_ = log::Appender(view.log_place);
  GPKV_RETURN_IF_ERROR(ReplaySegment(view, 0, &last_seq, &records));
  const log::Segment& first = segments.segments[0];
  log_.Enter(first.half, first.epoch, first.bytes);
  next_seq_ = last_seq + 1;
  if (segments.count == 2) {
    const bool resume = !pool_.read_only();
    if (resume) {
      // The checkpoint in flight is done again from the first half, its
      // image written at once, then published before the second half's
      // records go into the index: they stay in their half.
      GPKV_RETURN_IF_ERROR(StartCheckpoint(last_seq, /*reset_other_half=*/false));
      GPKV_RETURN_IF_ERROR(PublishCheckpoint());
      GPKV_RETURN_IF_ERROR(pool_.Sync());
    }
    GPKV_RETURN_IF_ERROR(ReplaySegment(view, 1, &last_seq, &records));
    const log::Segment& second = segments.segments[1];
    log_.Enter(second.half, second.epoch, second.bytes);
    next_seq_ = last_seq + 1;
    if (report != nullptr && resume) {
      recovery::Finding finding;
      finding.severity = recovery::Finding::Severity::kInfo;
      finding.region = view.LogRegion();
      finding.offset = view.root_offset;
      finding.message = pool_.Where(view.TableRegion() + " root", view.root_offset) +
                        ": completed the checkpoint a crash interrupted (log records in both "
                        "halves)";
      report->findings.push_back(std::move(finding));
    }
  }
  if (report != nullptr && records != 0) {
    recovery::Finding finding;
    finding.severity = recovery::Finding::Severity::kInfo;
    finding.region = view.LogRegion();
    finding.offset = view.log_offset;
    finding.message = pool_.Where(view.LogRegion(), view.log_offset) + ": replayed " +
                      std::to_string(records) + " log records into the index";
    report->findings.push_back(std::move(finding));
  }
  return Status::OK();
}

Status Core::ReplaySegment(const LoggedView& view, uint32_t segment, uint64_t* last_seq,
                           uint64_t* records) {
  log::Segments one;
  one.segments[0] = view.log_segments.segments[segment];
  one.count = 1;
  Status applied;
  GPKV_RETURN_IF_ERROR(log::ReadRecords(
      pool_, view.LogRegion(), one, key_size_, value_size_, *last_seq,
      [&](uint32_t, const log::RecordHeader& header, uint64_t offset, const uint8_t* entries) {
        if (!applied.ok()) return;
        if (log::IsRowRecord(header.flags)) {
          applied = Status::Corruption(pool_.Where(view.LogRegion() + " record", offset) +
                                       ": a row record in a logged hash table's log");
          return;
        }
        const uint64_t key_bytes = uint64_t{header.count} * key_size_;
        if (log::HasTombstones(header.flags)) {
          applied = index_->Erase(ConstBytes(entries, key_bytes));
        } else {
          applied = index_->Put(ConstBytes(entries, key_bytes),
                                ConstBytes(entries + key_bytes, header.count * value_size_));
        }
        *last_seq = header.seq;
        ++*records;
      },
      nullptr, threads_));
  return applied;
}

Status Core::Put(const uint8_t* keys, const uint8_t* values, size_t n, BatchMemory memory) {
  if (memory == BatchMemory::kDevice && device_records_ == nullptr) {
    return Status::Unsupported(Where() + ": write batches in device memory need the CUDA backend");
  }
  Writer writer;
  writer.puts = {keys, values, n};
  writer.memory = memory;
  return Commit(&writer);
}

Status Core::Erase(const uint8_t* keys, uint8_t* erased, size_t n, BatchMemory memory) {
  if (memory == BatchMemory::kDevice && device_records_ == nullptr) {
    return Status::Unsupported(Where() + ": write batches in device memory need the CUDA backend");
  }
  Writer writer;
  writer.erases = {keys, nullptr, n};
  writer.erased = erased;
  writer.memory = memory;
  return Commit(&writer);
}

Status Core::Write(const tables::ResolvedWrite& batch, uint8_t* probe_found) {
  Writer writer;
  writer.puts = {batch.put_keys.data(), batch.put_values.data(), batch.puts};
  writer.erases = {batch.erase_keys.data(), nullptr, batch.erases};
  writer.probe_keys = batch.probe_keys.data();
  writer.probe_found = probe_found;
  writer.probes = batch.probes;
  return Commit(&writer);
}

Status Core::Commit(Writer* writer) {
  if (writer->memory == BatchMemory::kDevice) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    return ApplyAlone(*writer);
  }
  std::unique_lock<std::mutex> queue_lock(queue_mutex_);
  queue_.push_back(writer);
  writer->wake.wait(queue_lock, [&] { return writer->done || queue_.front() == writer; });
  if (writer->done) return writer->status;
  // The leader: the batches queued behind it by the time the writer mutex
  // is its own join its group.
  queue_lock.unlock();
  size_t group_size = 1;
  {
    std::lock_guard<std::mutex> lock(write_mutex_);
    queue_lock.lock();
    group_.assign(queue_.begin(), queue_.end());
    queue_lock.unlock();
    group_size = GroupSize(group_);
    if (group_size == 1) {
      writer->status = ApplyAlone(*writer);
    } else {
      ApplyGroup(group_.data(), group_size);
    }
  }
  queue_lock.lock();
  for (size_t i = 0; i < group_size; ++i) {
    Writer* member = queue_.front();
    queue_.pop_front();
    if (member == writer) continue;
    member->done = true;
    member->wake.notify_one();  // under the lock: its writer outlives the call
  }
  if (!queue_.empty()) queue_.front()->wake.notify_one();  // the next leader
  return writer->status;
}

uint64_t Core::RecordBytes(const Writer& writer) const {
  uint64_t record_bytes = 0;
  for (const Part* part : {&writer.puts, &writer.erases}) {
    if (part->count == 0) continue;
    record_bytes += log::ColumnarRecordBytes(part->count, key_size_, value_size_,
                                             /*tombstones=*/part == &writer.erases);
  }
  return record_bytes;
}

size_t Core::GroupSize(const std::vector<Writer*>& queued) const {
  if (!broken_.ok()) return 1;
  uint64_t group_bytes = RecordBytes(*queued[0]);
  if (group_bytes == 0 || !log_.Fits(group_bytes)) return 1;
  size_t group_size = 1;
  while (group_size < queued.size()) {
    const uint64_t record_bytes = RecordBytes(*queued[group_size]);
    if (record_bytes == 0 || !log_.Fits(group_bytes + record_bytes)) break;
    group_bytes += record_bytes;
    ++group_size;
  }
  return group_size;
}

Status Core::Probe(const Writer& writer) {
  if (writer.probes == 0) return Status::OK();
  // The index holds every batch before this one (writers are serialised,
  // and a group applies its batches in order).
  std::vector<uint8_t> values(writer.probes * value_size_);
  return index_->Get(ConstBytes(writer.probe_keys, writer.probes * key_size_),
                     MutableBytes(values.data(), values.size()),
                     MutableBytes(writer.probe_found, writer.probes));
}

Status Core::ApplyAlone(Writer& writer) {
  GPKV_RETURN_IF_ERROR(broken_);
  GPKV_RETURN_IF_ERROR(Probe(writer));
  return Apply(writer.puts, writer.erases, writer.erased, writer.memory);
}

void Core::ApplyGroup(Writer* const* group, size_t group_size) {
  // Timed as Apply times one batch, the group counted as its batches.
  phase_clock_ = PhaseClock();
  LoggedStats::WritePhases& phases = write_phases_;
  auto finish = [&](const Status& status) {
    for (size_t i = 0; i < group_size; ++i) group[i]->status = status;
    phases.batches += group_size;
    phases.total_ns += phase_clock_.Total();
  };
  // As Apply for one batch, with the group counted as its batches: the
  // pending checkpoint is published before a group that holds a batch from
  // PublishBatch on, once its image is written. Every batch fits the half.
  if (pending_ != nullptr && pending_->batches + group_size >= publish_batch_ && ImageWritten()) {
    const Status published = PublishCheckpoint(/*timed=*/true);
    if (!published.ok()) return finish(published);
  }
  // The records of the batches, in arrival order, each batch's puts then its
  // erases: the records the batches would have written one at a time, then
  // one store publishes them all.
  uint64_t written = 0, seq = next_seq_;
  for (size_t i = 0; i < group_size; ++i) {
    for (const Part* part : {&group[i]->puts, &group[i]->erases}) {
      if (part->count == 0) continue;
      const uint64_t offset = log_.RecordOffset() + written;
      const log::RecordHeader header = WriteRecordArrays(*part, offset, seq++);
      written += log::FinishRecord(pool_, offset, header, key_size_, value_size_);
    }
  }
  phases.record_ns += phase_clock_.Lap();
  log_.Publish(pool_, written);
  next_seq_ = seq;
  if (pending_ != nullptr) pending_->batches += group_size;
  phases.publish_ns += phase_clock_.Lap();
  // Durable before the index shows it, as for one batch.
  Status status = pool_.Sync();
  phases.sync_ns += phase_clock_.Lap();
  for (size_t i = 0; i < group_size && status.ok(); ++i) {
    status = Probe(*group[i]);
    if (status.ok()) status = ApplyToIndex(group[i]->puts, group[i]->erases, group[i]->erased);
  }
  phases.index_ns += phase_clock_.Lap();
  if (!status.ok()) RefuseWrites(status, "the batches of its group are in its log");
  finish(status);
}

Status Core::Apply(const Part& puts, const Part& erases, uint8_t* erased, BatchMemory memory) {
  uint64_t record_bytes = 0;
  for (const Part* part : {&puts, &erases}) {
    if (part->count == 0) continue;
    record_bytes += log::ColumnarRecordBytes(part->count, key_size_, value_size_,
                                             /*tombstones=*/part == &erases);
  }
  if (record_bytes == 0) return Status::OK();
  phase_clock_ = PhaseClock();
  const Status status = LogBatch(puts, erases, erased, memory, record_bytes);
  ++write_phases_.batches;
  write_phases_.total_ns += phase_clock_.Total();
  return status;
}

Status Core::LogBatch(const Part& puts, const Part& erases, uint8_t* erased, BatchMemory memory,
                      uint64_t record_bytes) {
  LoggedStats::WritePhases& phases = write_phases_;
  const bool fits = log_.Fits(record_bytes);
  if (pending_ != nullptr &&
      (!fits || (pending_->batches + 1 >= publish_batch_ && ImageWritten()))) {
    // Its image is written (or this batch needs the half it frees: wait).
    GPKV_RETURN_IF_ERROR(PublishCheckpoint(/*timed=*/true));
  }
  const bool fits_a_half = log::RecordFits(0, record_bytes, log_.place().half_capacity);
  if (!fits && fits_a_half) {
    // The half is full: its batches go into an image behind the next
    // batches, and this one opens the other half.
    const Status started = StartCheckpoint(next_seq_ - 1);
    LapCheckpoint(&LoggedStats::WritePhases::checkpoint_scan_ns);
    GPKV_RETURN_IF_ERROR(started);
  }
  if (!fits_a_half) {
    // Larger than a half: the batch reaches the pool as the image of the
    // index it is applied to, published by one store. The index shows it
    // before it is durable, so readers wait at the gate until the Sync.
    std::unique_lock<std::shared_mutex> gate(read_gate_);
    Status status = ApplyToIndex(puts, erases, erased);
    phases.index_ns += phase_clock_.Lap();
    if (status.ok()) {
      status = StartCheckpoint(next_seq_ - 1);
      LapCheckpoint(&LoggedStats::WritePhases::checkpoint_scan_ns);
    }
    if (status.ok()) status = PublishCheckpoint(/*timed=*/true);
    if (status.ok()) {
      status = pool_.Sync();
      phases.sync_ns += phase_clock_.Lap();
    }
    if (!status.ok()) RefuseReads(status, "every acknowledged batch is in the pool");
    return status;
  }
  if (memory == BatchMemory::kDevice) return ApplyDeviceBatch(puts, erases, erased);
  if (overlapped_put_ != nullptr && erases.count == 0) return ApplyOverlappedPut(puts);
  // Each record past the published bytes (nothing reads them until the log
  // word moves), then one store publishes the batch.
  uint64_t written = 0, seq = next_seq_;
  for (const Part* part : {&puts, &erases}) {
    if (part->count == 0) continue;
    const uint64_t offset = log_.RecordOffset() + written;
    const log::RecordHeader header = WriteRecordArrays(*part, offset, seq++);
    phases.record_ns += phase_clock_.Lap();
    written += log::FinishRecord(pool_, offset, header, key_size_, value_size_);
    phases.publish_ns += phase_clock_.Lap();
  }
  log_.Publish(pool_, written);
  next_seq_ = seq;
  if (pending_ != nullptr) ++pending_->batches;
  phases.publish_ns += phase_clock_.Lap();
  // Durable before the index shows it: a reader never sees a write that a
  // crash could still take back (on a page-granular mapping the Sync is
  // what makes the record durable).
  Status status = pool_.Sync();
  phases.sync_ns += phase_clock_.Lap();
  if (status.ok()) {
    status = ApplyToIndex(puts, erases, erased);
    phases.index_ns += phase_clock_.Lap();
  }
  if (!status.ok()) RefuseWrites(status, "the batch is in its log");
  return status;
}

Status Core::ApplyDeviceBatch(const Part& puts, const Part& erases, uint8_t* erased) {
  LoggedStats::WritePhases& phases = write_phases_;
  // Mixed batches come from host memory: a device batch is one part.
  const Part& part = puts.count != 0 ? puts : erases;
  const uint64_t offset = log_.RecordOffset();
  const uint64_t seq = next_seq_;
  const Status started = device_records_->StartRecordArrays(
      pool_, offset, log_.epoch(), seq, part.keys, part.values, part.count, key_size_, value_size_);
  phases.record_ns += phase_clock_.Lap();
  if (!started.ok()) {
    // Nothing of it is queued, and nothing reads past the published bytes:
    // log and index are as they were.
    return Status(started.code(), Where() + ": " + started.message());
  }
  // The index apply runs on the GPU beside the record's copy, so the index
  // shows the batch before it is durable: readers wait at the gate until the
  // Sync has returned.
  std::unique_lock<std::shared_mutex> gate(read_gate_);
  Status status = ApplyToIndex(puts, erases, erased);
  phases.index_ns += phase_clock_.Lap();
  // Waited for even when the index apply failed: no copy is left in flight.
  auto header = device_records_->WaitRecordArrays();
  if (header.ok() && TakeInjectedDeviceRecordFailure()) {
    header = Status::IOError(pool_.path() +
                             ": copy of a log record: failure injected by "
                             "TEST_FailNextDeviceRecords");
  }
  phases.record_ns += phase_clock_.Lap();
  if (status.ok() && !header.ok()) {
    status = Status(header.status().code(), Where() + ": " + header.status().message());
  }
  if (status.ok()) {
    const uint64_t written = log::FinishRecord(pool_, offset, *header, key_size_, value_size_);
    log_.Publish(pool_, written);
    next_seq_ = seq + 1;
    if (pending_ != nullptr) ++pending_->batches;
    phases.publish_ns += phase_clock_.Lap();
    status = pool_.Sync();
    phases.sync_ns += phase_clock_.Lap();
  }
  // The index is ahead of what the pool surely holds; the log is the truth.
  if (!status.ok()) RefuseReads(status, kReplayKeepsEveryBatch);
  return status;
}

Status Core::ApplyOverlappedPut(const Part& puts) {
  LoggedStats::WritePhases& phases = write_phases_;
  // The index shows the batch before its record is durable: readers wait at
  // the gate until the Sync has returned.
  std::unique_lock<std::shared_mutex> gate(read_gate_);
  Status durable;
  const Status applied = overlapped_put_->PutWhile(
      ConstBytes(puts.keys, puts.count * key_size_),
      ConstBytes(puts.values, puts.count * value_size_), [&] {
        const uint64_t offset = log_.RecordOffset();
        const log::RecordHeader header = WriteRecordArrays(puts, offset, next_seq_);
        phases.record_ns += phase_clock_.Lap();
        log_.Publish(pool_, log::FinishRecord(pool_, offset, header, key_size_, value_size_));
        ++next_seq_;
        if (pending_ != nullptr) ++pending_->batches;
        phases.publish_ns += phase_clock_.Lap();
        durable = pool_.Sync();
        phases.sync_ns += phase_clock_.Lap();
      });
  phases.index_ns += phase_clock_.Lap();
  if (!durable.ok()) {
    // The index may show a batch the pool does not surely hold.
    RefuseReads(durable, kReplayKeepsEveryBatch);
    return durable;
  }
  if (!applied.ok()) RefuseWrites(applied, "the batch is in its log");
  return applied;
}

void Core::RefuseWrites(const Status& status, const char* kept) {
  broken_ =
      Status(status.code(), Where() + ": " + status.message() +
                                " (the table refuses writes until it is reopened; " + kept + ")");
}

void Core::RefuseReads(const Status& status, const char* kept) {
  unreadable_ = Status(status.code(), Where() + ": " + status.message() +
                                          " (the table refuses reads and writes until it is "
                                          "reopened: its index may show a batch that is not "
                                          "durable; " +
                                          kept + ")");
  if (broken_.ok()) broken_ = unreadable_;
}

Status Core::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                 const BatchOptions& options) {
  std::shared_lock<std::shared_mutex> gate(read_gate_);
  GPKV_RETURN_IF_ERROR(unreadable_);
  return index_->Get(keys, values, found, options);
}

Status Core::Scan(const Table::ScanVisitor& visit) {
  std::shared_lock<std::shared_mutex> gate(read_gate_);
  GPKV_RETURN_IF_ERROR(unreadable_);
  return index_->Scan(visit);
}

log::RecordHeader Core::WriteRecordArrays(const Part& part, uint64_t offset, uint64_t seq) {
  log::cpu::RecordEntries entries;
  entries.keys = reinterpret_cast<const uint64_t*>(part.keys);
  entries.values = part.values;
  entries.count = part.count;
  return log::cpu::WriteRecordArrays(pool_, offset, log_.epoch(), seq, entries, key_size_,
                                     value_size_, threads_);
}

Status Core::ApplyToIndex(const Part& puts, const Part& erases, uint8_t* erased) {
  if (puts.count != 0) {
    GPKV_RETURN_IF_ERROR(index_->Put(ConstBytes(puts.keys, puts.count * key_size_),
                                     ConstBytes(puts.values, puts.count * value_size_)));
  }
  if (erases.count != 0) {
    MutableBytes erased_bytes;
    if (erased != nullptr) erased_bytes = MutableBytes(erased, erases.count);
    GPKV_RETURN_IF_ERROR(
        index_->Erase(ConstBytes(erases.keys, erases.count * key_size_), erased_bytes));
  }
  return Status::OK();
}

Status Core::StartCheckpoint(uint64_t applied_seq, bool reset_other_half) {
  auto place = image_writer_->Scan(*index_, NextGeneration(pool_, root_offset_));
  if (!place.ok()) {
    return Status(place.status().code(),
                  Where() + ": a log half is full and its checkpoint cannot start: " +
                      place.status().message());
  }
  auto pending = std::make_unique<Pending>();
  logged::Checkpoint& next = pending->next;
  next.image_offset = place->offset;
  next.image_entries = place->entries;
  next.applied_seq = applied_seq;
  next.log_epoch = log::NextEpoch(log_.epoch());
  next.log_half = 1 - log_.half();
  const auto half = static_cast<uint32_t>(next.log_half);
  if (reset_other_half) {
    // The other half holds a finished cycle's records (epoch e - 1): its
    // word of the next epoch with 0 bytes opens it, empty, before anything
    // is appended there.
    log::PublishWord(pool_, log_.place().word_offsets[half], next.log_epoch, 0);
  }
  log_.Enter(half, next.log_epoch, 0);
  if (write_images_inline) {
    pending->written = image_writer_->Write();
    pending->done = true;
  } else {
    Pending* job = pending.get();
    ImageWriter* writer = image_writer_.get();
    job->worker = std::thread([job, writer] {
      job->written = writer->Write();
      job->done.store(true, std::memory_order_release);
    });
  }
  pending_ = std::move(pending);
  return Status::OK();
}

bool Core::ImageWritten() const {
  return pending_ != nullptr && pending_->done.load(std::memory_order_acquire);
}

void Core::LapCheckpoint(uint64_t LoggedStats::WritePhases::*step) {
  const uint64_t lap = phase_clock_.Lap();
  write_phases_.*step += lap;
  write_phases_.checkpoint_ns += lap;
}

Status Core::PublishCheckpoint(bool timed) {
  std::unique_ptr<Pending> pending = std::move(pending_);
  if (pending->worker.joinable()) pending->worker.join();
  if (timed) LapCheckpoint(&LoggedStats::WritePhases::checkpoint_wait_ns);
  Status published = PublishPending(*pending);
  if (timed) LapCheckpoint(&LoggedStats::WritePhases::checkpoint_publish_ns);
  return published;
}

Status Core::PublishPending(Pending& pending) {
  if (!pending.written.ok()) {
    // The pool still names the previous checkpoint, whose half and this
    // one's hold every acknowledged batch; the index is ahead of what an
    // image could carry, so writes stop until a reopen does this again.
    if (pending.next.image_offset != 0) {
      pool_.allocator().Free(pending.next.image_offset).IgnoreError();
    }
    broken_ =
        Status(pending.written.code(),
               Where() + ": writing a checkpoint's image failed: " + pending.written.message() +
                   " (the table refuses writes until it is reopened; every acknowledged "
                   "batch is in its log)");
    return broken_;
  }
  logged::PublishCheckpoint(pool_, root_offset_, &pending.next);
  const uint64_t previous = image_offset_;
  image_offset_ = pending.next.image_offset;
  image_entries_ = pending.next.image_entries;
  ++checkpoints_;
  // The previous image is no longer named; nothing reads it (gets go to the
  // index).
  if (previous != 0) GPKV_RETURN_IF_ERROR(pool_.allocator().Free(previous));
  return Status::OK();
}

Result<LoggedStats> Core::Stats() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  auto index_stats = index_->Stats();
  if (!index_stats.ok()) return index_stats.status();
  LoggedStats stats;
  stats.keys = index_stats->keys;
  stats.batch_entries = uint64_t{1} << log2_batch_;
  stats.log_batches = log_batches_;
  stats.log_bytes = log_.bytes();
  stats.log_capacity = log_.place().half_capacity;
  stats.checkpoints = checkpoints_;
  stats.checkpoint_pending = pending_ != nullptr;
  stats.image_entries = image_entries_;
  stats.image_bytes = image_offset_ == 0 ? 0 : ImageBytes(image_entries_, key_size_, value_size_);
  stats.applied_seq = next_seq_ - 1;
  stats.write_phases = write_phases_;
  stats.open_phases = open_phases_;
  if (device_records_ != nullptr) {
    const DeviceRecordWriter::Counters counters = device_records_->counters();
    stats.registration_ns = counters.registration_ns;
    stats.pageable_records = counters.pageable_records;
  }
  return stats;
}

}  // namespace gpkv::gphash::logged
