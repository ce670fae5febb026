#include "tables/lsm/cpu/write_buffer.h"

#include "tables/lsm/cpu/merge.h"

namespace gpkv::lsm::cpu {

WriteBuffer WriteBuffer::With(RunData batch, const EntryShape& shape, int threads) const {
  return With(std::make_shared<const RunData>(std::move(batch)), shape, threads);
}

WriteBuffer WriteBuffer::With(std::shared_ptr<const RunData> batch, const EntryShape& shape,
                              int threads) const {
  WriteBuffer next;
  next.runs_.reserve(runs_.size() + 1);
  std::shared_ptr<const RunData> newest = std::move(batch);
  size_t older = 0;  // runs_[older] is the next older run
  while (older < runs_.size() &&
         BufferCarries(newest->count(), runs_[older]->count(), runs_.size() - older)) {
    // Tombstones stay: older levels may hold their keys.
    RunData merged = MergeRuns({newest->View(), runs_[older]->View()}, shape,
                               /*drop_tombstones=*/false, threads);
    newest = std::make_shared<const RunData>(std::move(merged));
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

Status ReplayLog(const pm::Pool& pool, const LsmView& view, int threads, bool split,
                 ReplayedLog* out) {
  const EntryShape shape = view.shape();
  out->last_seq[0] = out->last_seq[1] = view.manifest.applied_seq;
  BadLogRecord bad_record;
  GPKV_RETURN_IF_ERROR(ReadDecodedLog(
      pool, view,
      [&](uint32_t segment, const log::RecordHeader& header, RunData&& record) {
        const uint32_t into = split ? segment : 0;
        out->buffers[into] = out->buffers[into].With(std::move(record), shape, threads);
        out->entries[into] += header.count;
        for (uint32_t s = segment; s < 2; ++s) out->last_seq[s] = header.seq;
        ++out->records;
      },
      &bad_record, nullptr, threads));
  return bad_record.status;
}

}  // namespace gpkv::lsm::cpu
