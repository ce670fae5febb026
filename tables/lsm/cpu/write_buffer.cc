#include "tables/lsm/cpu/write_buffer.h"

#include <cstring>
#include <string>

#include "tables/lsm/cpu/merge.h"

namespace gpkv::lsm::cpu {
namespace {

// Runs up to this size always merge with the batch: copying them costs less
// than every query probing one more source (YCSB E, 5% inserts in batches
// of ~200 keys, lost 10% to the extra probes without this).
constexpr uint64_t kSmallRun = 16384;

}  // namespace

WriteBuffer WriteBuffer::With(RunData batch, const EntryShape& shape, int threads) const {
  WriteBuffer next;
  next.runs_.reserve(runs_.size() + 1);
  auto newest = std::make_shared<RunData>(std::move(batch));
  size_t older = 0;  // runs_[older] is the next older run
  while (older < runs_.size() &&
         (2 * newest->count() >= runs_[older]->count() || runs_[older]->count() <= kSmallRun ||
          runs_.size() - older >= kMaxBufferRuns)) {
    // Tombstones stay: older levels may hold their keys.
    RunData merged = MergeRuns({newest->View(), runs_[older]->View()}, shape,
                               /*drop_tombstones=*/false, threads);
    newest = std::make_shared<RunData>(std::move(merged));
    ++older;
  }
  next.runs_.push_back(std::move(newest));
  next.runs_.insert(next.runs_.end(), runs_.begin() + older, runs_.end());
  for (const auto& run : next.runs_) next.entries_ += run->count();
  return next;
}

Status ReplayLog(const pm::Pool& pool, const LsmView& view, int threads, WriteBuffer* buffer,
                 uint64_t* last_seq, uint64_t* records, uint64_t* logged_entries) {
  const EntryShape shape = view.shape();
  *last_seq = view.manifest.applied_seq;
  *records = 0;
  *logged_entries = 0;
  Status bad_record;
  const uint64_t entry_bytes = LogEntryBytes(shape.key_size(), shape.value_size);
  GPKV_RETURN_IF_ERROR(ReadLog(
      pool, view, [&](const LogRecordHeader& header, uint64_t offset, const uint8_t* entries) {
        if (!bad_record.ok()) return;
        RunData record(shape);
        record.Reserve(header.count);
        for (uint32_t i = 0; i < header.count; ++i) {
          const uint8_t* entry = entries + i * entry_bytes;
          uint64_t key[4];
          uint64_t meta;
          std::memcpy(key, entry, shape.key_size());
          std::memcpy(&meta, entry + shape.key_size(), 8);
          const bool ordered = i == 0 || CompareKeys(record.View().keys + (i - 1) * shape.key_words,
                                                     key, shape.key_words) < 0;
          if (!ordered || SeqOf(meta) != header.seq) {
            bad_record = Status::Corruption(pool.Where(view.TableRegion() + " log record", offset) +
                                            ": entry " + std::to_string(i) +
                                            " is out of order or has another sequence number");
            return;
          }
          record.Append(key, meta, entry + shape.key_size() + 8);
        }
        *buffer = buffer->With(std::move(record), shape, threads);
        *last_seq = header.seq;
        ++*records;
        *logged_entries += header.count;
      }));
  return bad_record;
}

}  // namespace gpkv::lsm::cpu
