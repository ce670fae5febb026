#include "tables/gphash/logged/core.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
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

// The index's pairs, sorted in key order (layout.h CompareKeys): what an
// image holds.
struct SortedPairs {
  std::vector<uint8_t> keys;
  std::vector<uint8_t> values;
  uint64_t entries = 0;
};

Result<SortedPairs> ScanSorted(Table& index, uint32_t key_size, uint32_t value_size) {
  std::vector<uint8_t> keys, values;
  GPKV_RETURN_IF_ERROR(index.Scan([&](const uint8_t* key, const uint8_t* value) {
    keys.insert(keys.end(), key, key + key_size);
    values.insert(values.end(), value, value + value_size);
    return true;
  }));
  const uint64_t entries = keys.size() / key_size;
  const uint32_t key_words = key_size / 8;
  auto key_at = [&](uint64_t i) {
    uint64_t word[4] = {};
    std::memcpy(word, keys.data() + i * key_size, key_size);
    return std::array<uint64_t, 4>{word[0], word[1], word[2], word[3]};
  };
  std::vector<uint64_t> order(entries);
  std::iota(order.begin(), order.end(), 0);
  if (key_words == 1) {
    std::vector<std::pair<uint64_t, uint64_t>> sorted(entries);
    for (uint64_t i = 0; i < entries; ++i) {
      uint64_t key;
      std::memcpy(&key, keys.data() + i * key_size, sizeof(key));
      sorted[i] = {key, i};
    }
    std::sort(sorted.begin(), sorted.end());
    for (uint64_t i = 0; i < entries; ++i) order[i] = sorted[i].second;
  } else {
    std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
      const auto key_a = key_at(a), key_b = key_at(b);
      return CompareKeys(key_a.data(), key_b.data(), key_words) < 0;
    });
  }
  SortedPairs out;
  out.entries = entries;
  out.keys.resize(keys.size());
  out.values.resize(values.size());
  for (uint64_t i = 0; i < entries; ++i) {
    std::memcpy(out.keys.data() + i * key_size, keys.data() + order[i] * key_size, key_size);
    std::memcpy(out.values.data() + i * value_size, values.data() + order[i] * value_size,
                value_size);
  }
  return out;
}

}  // namespace

Core::Core(pm::Pool& pool, std::string table_name, uint64_t root_offset, int threads)
    : pool_(pool),
      table_name_(std::move(table_name)),
      root_offset_(root_offset),
      threads_(std::max(1, threads)) {}

Result<std::unique_ptr<Core>> Core::Open(pm::Pool& pool, const std::string& table_name,
                                         uint64_t root_offset, const IndexFactory& make_index,
                                         int threads, recovery::Report* report,
                                         std::unique_ptr<DeviceRecordWriter> device_records) {
  std::unique_ptr<Core> core(new Core(pool, table_name, root_offset, threads));
  core->device_records_ = std::move(device_records);
  GPKV_RETURN_IF_ERROR(core->Recover(make_index, report));
  return core;
}

std::string Core::Where() const { return pool_.path() + ": table '" + table_name_ + "'"; }

Status Core::Recover(const IndexFactory& make_index, recovery::Report* report) {
  auto view = ReadLoggedRoot(pool_, table_name_, root_offset_, /*require_allocated=*/false);
  if (!view.ok()) return view.status();
  table_id_ = view->table_id;
  key_size_ = view->key_size;
  value_size_ = view->value_size;
  log2_batch_ = view->log2_batch;
  log_batches_ = view->log_batches;
  GPKV_RETURN_IF_ERROR(CheckImage(pool_, *view, threads_));
  const ImageArrays image = ImageOf(pool_, *view);
  auto index = make_index(std::max(view->expected_keys, image.entries));
  if (!index.ok()) return index.status();
  index_ = std::move(*index);
  for (uint64_t first = 0; first < image.entries; first += kImageChunk) {
    const uint64_t count = std::min(kImageChunk, image.entries - first);
    GPKV_RETURN_IF_ERROR(
        index_->Put(ConstBytes(image.keys + first * key_size_, count * key_size_),
                    ConstBytes(image.values + first * value_size_, count * value_size_)));
  }
  image_offset_ = view->checkpoint.image_offset;
  image_entries_ = image.entries;
  return Replay(*view, report);
}

Status Core::Replay(const LoggedView& view, recovery::Report* report) {
  // The log's records after the image, in order: puts as a put batch,
  // erases as an erase batch. Nothing is written: an open interrupted here
  // is simply run again.
  Status applied;
  uint64_t records = 0;
  uint64_t last_seq = view.checkpoint.applied_seq;
  GPKV_RETURN_IF_ERROR(log::ReadRecords(
      pool_, view.LogRegion(), view.log_segments, key_size_, value_size_, last_seq,
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
        last_seq = header.seq;
        ++records;
      },
      nullptr, threads_));
  GPKV_RETURN_IF_ERROR(applied);
  const log::Segment& segment = view.log_segments.segments[0];
  log_ = log::Appender(view.log_place);
  log_.Enter(0, segment.epoch, segment.bytes);
  next_seq_ = last_seq + 1;
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

Status Core::Put(const uint8_t* keys, const uint8_t* values, size_t n, BatchMemory memory) {
  if (memory == BatchMemory::kDevice && device_records_ == nullptr) {
    return Status::Unsupported(Where() + ": write batches in device memory need the CUDA backend");
  }
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  if (n == 0) return Status::OK();
  return Apply({keys, values, n}, {}, nullptr, memory);
}

Status Core::Erase(const uint8_t* keys, uint8_t* erased, size_t n, BatchMemory memory) {
  if (memory == BatchMemory::kDevice && device_records_ == nullptr) {
    return Status::Unsupported(Where() + ": write batches in device memory need the CUDA backend");
  }
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  if (n == 0) return Status::OK();
  return Apply({}, {keys, nullptr, n}, erased, memory);
}

Status Core::Write(const tables::ResolvedWrite& batch, uint8_t* probe_found) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  if (batch.probes != 0) {
    // Writers are serialised: the index holds every batch before this one.
    std::vector<uint8_t> values(batch.probes * value_size_);
    GPKV_RETURN_IF_ERROR(index_->Get(ConstBytes(batch.probe_keys.data(), batch.probes * key_size_),
                                     MutableBytes(values.data(), values.size()),
                                     MutableBytes(probe_found, batch.probes)));
  }
  return Apply({batch.put_keys.data(), batch.put_values.data(), batch.puts},
               {batch.erase_keys.data(), nullptr, batch.erases}, nullptr);
}

Status Core::Apply(const Part& puts, const Part& erases, uint8_t* erased, BatchMemory memory) {
  uint64_t record_bytes = 0;
  for (const Part* part : {&puts, &erases}) {
    if (part->count == 0) continue;
    record_bytes += log::ColumnarRecordBytes(part->count, key_size_, value_size_,
                                             /*tombstones=*/part == &erases);
  }
  if (record_bytes == 0) return Status::OK();
  if (!log_.Fits(record_bytes) && log_.bytes() != 0) {
    // The log is full: its batches go into an image first.
    GPKV_RETURN_IF_ERROR(Checkpoint());
  }
  if (!log_.Fits(record_bytes)) {
    // Larger than the whole log: the batch reaches the pool as the image of
    // the index it is applied to, published by one store.
    Status status = ApplyToIndex(puts, erases, erased);
    if (status.ok()) status = Checkpoint();
    if (!status.ok()) {
      broken_ = Status(status.code(), Where() + ": " + status.message() +
                                          " (the table refuses writes until it is reopened; "
                                          "every acknowledged batch is in the pool)");
    }
    return status;
  }
  // Each record past the published bytes (nothing reads them until the log
  // word moves), then one store publishes the batch.
  uint64_t written = 0, seq = next_seq_;
  for (const Part* part : {&puts, &erases}) {
    if (part->count == 0) continue;
    const uint64_t offset = log_.RecordOffset() + written;
    auto header = WriteRecordArrays(*part, offset, seq++, memory);
    if (!header.ok()) return header.status();
    written += log::FinishRecord(pool_, offset, *header, key_size_, value_size_);
  }
  log_.Publish(pool_, written);
  next_seq_ = seq;
  Status status = ApplyToIndex(puts, erases, erased);
  if (!status.ok()) {
    broken_ = Status(status.code(), Where() + ": " + status.message() +
                                        " (the table refuses writes until it is reopened; the "
                                        "batch is in its log)");
    return status;
  }
  return pool_.Sync();
}

Result<log::RecordHeader> Core::WriteRecordArrays(const Part& part, uint64_t offset, uint64_t seq,
                                                  BatchMemory memory) {
  if (memory == BatchMemory::kDevice) {
    // Nothing reads past the published bytes: a failed copy leaves the log
    // as it was.
    auto header =
        device_records_->WriteRecordArrays(pool_, offset, log_.epoch(), seq, part.keys, part.values,
                                           part.count, key_size_, value_size_);
    if (!header.ok()) {
      return Status(header.status().code(), Where() + ": " + header.status().message());
    }
    return *header;
  }
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

Status Core::Checkpoint() {
  auto pairs = ScanSorted(*index_, key_size_, value_size_);
  if (!pairs.ok()) return pairs.status();
  const uint64_t generation = NextGeneration(pool_, root_offset_);
  auto image = WriteImage(pool_, table_id_, key_size_, value_size_, generation,
                          {pairs->keys.data(), pairs->values.data(), pairs->entries}, threads_);
  if (!image.ok()) return Status(image.status().code(), Where() + ": " + image.status().message());
  logged::Checkpoint next{};
  next.image_offset = *image;
  next.image_entries = pairs->entries;
  next.applied_seq = next_seq_ - 1;
  next.log_epoch = log::NextEpoch(log_.epoch());
  PublishCheckpoint(pool_, root_offset_, &next);
  // The log is empty in the new epoch; a crash before this store leaves the
  // word one epoch behind, which readers take as an empty log.
  log::PublishWord(pool_, log_.place().word_offsets[0], next.log_epoch, 0);
  log_.Enter(0, next.log_epoch, 0);
  const uint64_t previous = image_offset_;
  image_offset_ = *image;
  image_entries_ = pairs->entries;
  ++checkpoints_;
  if (previous != 0) GPKV_RETURN_IF_ERROR(pool_.allocator().Free(previous));
  return pool_.Sync();
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
  stats.image_entries = image_entries_;
  stats.image_bytes = image_offset_ == 0 ? 0 : ImageBytes(image_entries_, key_size_, value_size_);
  stats.applied_seq = next_seq_ - 1;
  return stats;
}

}  // namespace gpkv::gphash::logged
