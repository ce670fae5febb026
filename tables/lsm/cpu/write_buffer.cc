#include "tables/lsm/cpu/write_buffer.h"

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

}  // namespace gpkv::lsm::cpu
