// lsm::cpu::WriteBuffer: the write buffer of a table on the CPU, the sorted
// batches of the log in memory, as a few sorted runs newest first.
//
// A batch becomes the buffer's newest run; while that run is at least half
// the size of the next older one (or the older one is small, or the buffer
// holds more than kMaxBufferRuns runs) the two merge, newest winning, as the digits of a
// binary counter carry. Each entry is merged about log2(b / batch) times
// before the buffer flushes, where one merged run costs a copy of the whole
// buffer per batch: batches much smaller than b (2^10 of b = 2^16) spent
// most of their time there. Queries read the runs as sources newer than
// every level.
//
// Who may call: tables/lsm/cpu/. Thread safety: a value; With() returns a
// new buffer and leaves this one as it was (they share the unchanged runs),
// so a version's buffer stays readable while the writer builds the next.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/lsm/cpu/search.h"
#include "tables/lsm/reader.h"
#include "tables/lsm/run.h"

namespace gpkv::lsm::cpu {

// Runs up to this size always merge with the batch: copying them costs less
// than every query probing one more source (YCSB E, 5% inserts in batches
// of ~200 keys, lost 10% to the extra probes without this).
constexpr uint64_t kSmallRun = 16384;

// The carry rule of a write buffer (this one and the GPU backend's): the
// newest run (`newest` entries) merges with the next older run (`older`
// entries; `runs_from_older` runs from it to the oldest) while this holds.
inline bool BufferCarries(uint64_t newest, uint64_t older, size_t runs_from_older) {
  return 2 * newest >= older || older <= kSmallRun || runs_from_older >= kMaxBufferRuns;
}

class WriteBuffer {
 public:
  uint64_t entries() const { return entries_; }
  bool empty() const { return entries_ == 0; }
  // Newest first; at most kMaxBufferRuns.
  const std::vector<std::shared_ptr<const RunData>>& runs() const { return runs_; }
  // Run i as queries search it: with fences when it is larger than
  // kSmallRun (a buffer of M * b entries, M > 1, holds runs as large as
  // levels; 2^19 keys in the buffer, 2 cores: gets 7.7 -> 11.2 M/s, ranges
  // 3.9 -> 4.6, as fast as from levels).
  RunView View(size_t i) const {
    RunView view = runs_[i]->View();
    if (fences_[i] != nullptr) {
      view.fences = fences_[i]->data();
      view.fence_count = fences_[i]->size() / runs_[i]->shape().key_words;
    }
    return view;
  }

  // This buffer with `batch` (sorted, unique keys, newer than every entry
  // here) added.
  WriteBuffer With(RunData batch, const EntryShape& shape, int threads) const;
  WriteBuffer With(std::shared_ptr<const RunData> batch, const EntryShape& shape,
                   int threads) const;

 private:
  std::vector<std::shared_ptr<const RunData>> runs_;
  std::vector<std::shared_ptr<const std::vector<uint64_t>>> fences_;  // per run, or null
  uint64_t entries_ = 0;
};

// The published log records of a table, replayed (ReplayLog).
struct ReplayedLog {
  WriteBuffer buffers[2];     // the records of each log segment (LsmView)
  uint64_t entries[2] = {};   // their entries (a key counted once per record)
  uint64_t last_seq[2] = {};  // the last sequence number up to each segment's end
  uint64_t records = 0;
};

// Replays the published log records of the table `view` describes, oldest
// first, into out->buffers[segment] (into buffers[0] alone unless `split`),
// each record checked: keys ascending, every entry of the record's sequence
// number; Corruption naming the record's offset. last_seq starts at the
// manifest's applied_seq. Both backends' open calls this.
Status ReplayLog(const pm::Pool& pool, const LsmView& view, int threads, bool split,
                 ReplayedLog* out);

}  // namespace gpkv::lsm::cpu
