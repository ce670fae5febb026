// The CPU backend's sort and merge: a write batch becomes a sorted run, and
// runs merge into one (the cascade and compaction), on worker threads.
//
// Who may call: tables/lsm/cpu/.
// Thread safety: pure functions; the inputs are not changed.
#pragma once

#include <cstdint>
#include <vector>

#include "tables/lsm/run.h"

namespace gpkv::lsm::cpu {

// The n pairs of a batch (keys as the caller passed them; values null for an
// erase) as a sorted run of unique keys, every entry with meta `meta`: a
// stable sort, so of a key given twice the last occurrence wins. With
// first_index not null, (*first_index)[i] is 1 where input i is the first
// occurrence of its key (the erase flags need it).
RunData SortBatch(const uint8_t* keys, const uint8_t* values, size_t n, uint64_t meta,
                  const EntryShape& shape, int threads, std::vector<uint8_t>* first_index);

// Merges runs given newest first into one: of a key in several runs the
// newest entry is kept; tombstones are dropped too when drop_tombstones (no
// older run remains for them to hide anything in).
RunData MergeRuns(const std::vector<RunView>& newest_first, const EntryShape& shape,
                  bool drop_tombstones, int threads);

}  // namespace gpkv::lsm::cpu
