#include "tables/lsm/cpu/write_buffer.h"

#include "tables/lsm/cpu/merge.h"

namespace gpkv::lsm::cpu {

WriteBuffer WriteBuffer::With(RunData batch, const EntryShape& shape, int threads) const {
  WriteBuffer next;
  next.runs_.reserve(runs_.size() + 1);
  auto newest = std::make_shared<RunData>(std::move(batch));
  size_t older = 0;  // runs_[older] is the next older run
  while (older < runs_.size() &&
         BufferCarries(newest->count(), runs_[older]->count(), runs_.size() - older)) {
    // Tombstones stay: older levels may hold their keys.
    RunData merged = MergeRuns({newest->View(), runs_[older]->View()}, shape,
                               /*drop_tombstones=*/false, threads);
    newest = std::make_shared<RunData>(std::move(merged));
    ++older;
  }
  next.fences_.push_back(newest->count() > kSmallRun
                             ? std::make_shared<const std::vector<uint64_t>>(
                                   FenceKeys(newest->View(), shape.key_words))
                             : nullptr);
  next.fences_.insert(next.fences_.end(), fences_.begin() + older, fences_.end());
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
  GPKV_RETURN_IF_ERROR(ReadLog(
      pool, view,
      [&](const LogRecordHeader& header, uint64_t offset, const uint8_t* entries) {
        if (!bad_record.ok()) return;
        RunData record(shape);
        bad_record = DecodeLogRecord(pool, view, header, offset, entries, &record);
        if (!bad_record.ok()) return;
        *buffer = buffer->With(std::move(record), shape, threads);
        *last_seq = header.seq;
        ++*records;
        *logged_entries += header.count;
      },
      nullptr, threads));
  return bad_record;
}

}  // namespace gpkv::lsm::cpu
