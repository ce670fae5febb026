// The sources of a query on the CPU backend (the write buffer's runs, then
// the runs of the occupied levels, newest first) and the dispatch on the
// key's words. The searches and walks over them are the GPU backend's too:
// tables/lsm/search.h.
//
// Who may call: tables/lsm/cpu/.
// Thread safety: pure functions over immutable runs.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"
#include "tables/lsm/search.h"

namespace gpkv::lsm::cpu {

// Runs of the write buffer (write_buffer.h) at most.
constexpr uint32_t kMaxBufferRuns = 8;
constexpr uint32_t kMaxSources = kMaxBufferRuns + kMaxLevels;

// The sources of one query: the buffer's runs and the levels' runs.
struct Sources {
  RunView runs[kMaxSources];
  uint32_t count = 0;
};

// Every kFenceStride-th key of a run (RunView::fences).
inline std::vector<uint64_t> FenceKeys(const RunView& run, uint32_t key_words) {
  std::vector<uint64_t> fences;
  fences.reserve((run.count + kFenceStride - 1) / kFenceStride * key_words);
  for (uint64_t i = 0; i < run.count; i += kFenceStride) {
    fences.insert(fences.end(), run.keys + i * key_words, run.keys + (i + 1) * key_words);
  }
  return fences;
}

// Keys a get looks up together (FindNewestGroup).
constexpr uint32_t kGetGroup = 16;

// The newest entries of `count` <= kGetGroup keys (count * W words), as
// FindNewest finds them one by one: hits[i] is key i's. The keys go through
// each run together, and what a step reads is prefetched for every key of
// the group first (the filter words, then the blocks the fences name), so
// that the cache misses of the group's keys overlap: a get of one key
// waits for each of its misses in turn.
template <uint32_t W>
void FindNewestGroup(const Sources& sources, const uint64_t* keys, uint32_t count, Hit* hits) {
  uint64_t hashes[kGetGroup];
  Block blocks[kGetGroup];
  uint32_t pending[kGetGroup];  // keys not found yet
  uint32_t candidates[kGetGroup];
  uint32_t pending_count = count;
  for (uint32_t i = 0; i < count; ++i) {
    hits[i] = {};
    pending[i] = i;
    hashes[i] = FilterHash(keys + i * W, W);
  }
  for (uint32_t s = 0; s < sources.count && pending_count > 0; ++s) {
    const RunView& run = sources.runs[s];
    // As FindNewest: every run's filter but the last's.
    uint32_t candidate_count = 0;
    if (run.filter != nullptr && s + 1 < sources.count) {
      for (uint32_t j = 0; j < pending_count; ++j) {
        __builtin_prefetch(run.filter + FilterWordOf(hashes[pending[j]], run.filter_words));
      }
      for (uint32_t j = 0; j < pending_count; ++j) {
        if (FilterMayContain(run.filter, run.filter_words, hashes[pending[j]])) {
          candidates[candidate_count++] = pending[j];
        }
      }
    } else {
      for (uint32_t j = 0; j < pending_count; ++j) candidates[candidate_count++] = pending[j];
    }
    for (uint32_t j = 0; j < candidate_count; ++j) {
      const uint32_t i = candidates[j];
      blocks[i] = FenceBlock<W, false>(run, keys + i * W);
      if (run.fences == nullptr) continue;  // a small run in memory
      const auto* begin = reinterpret_cast<const char*>(run.keys + blocks[i].begin * W);
      const auto* end = reinterpret_cast<const char*>(run.keys + blocks[i].end * W);
      for (const char* line = begin; line < end; line += 64) __builtin_prefetch(line);
    }
    for (uint32_t j = 0; j < candidate_count; ++j) {
      const uint32_t i = candidates[j];
      const uint64_t index = BoundIn<W, false>(run.keys, blocks[i].begin,
                                               blocks[i].end - blocks[i].begin, keys + i * W);
      if (index < run.count && Compare<W>(run.keys + index * W, keys + i * W) == 0) {
        hits[i] = {static_cast<int>(s), index};
      }
    }
    uint32_t still = 0;
    for (uint32_t j = 0; j < pending_count; ++j) {
      if (hits[pending[j]].source < 0) pending[still++] = pending[j];
    }
    pending_count = still;
  }
}

// The lower bounds of `count` <= kGetGroup keys in every source
// (positions[i][s], as LowerBound finds them), the blocks the fences name
// prefetched for the whole group first, then the first meta word and value
// of each bound (`value_size` bytes each), so that the walk that follows
// (ForwardLiveFrom) finds them in cache.
template <uint32_t W>
void LowerBoundsGroup(const Sources& sources, const uint64_t* keys, uint32_t count,
                      uint32_t value_size, uint64_t (*positions)[kMaxSources]) {
  Block blocks[kGetGroup];
  for (uint32_t s = 0; s < sources.count; ++s) {
    const RunView& run = sources.runs[s];
    for (uint32_t i = 0; i < count; ++i) {
      blocks[i] = FenceBlock<W, false>(run, keys + i * W);
      if (run.fences == nullptr) continue;  // a small run in memory
      const auto* begin = reinterpret_cast<const char*>(run.keys + blocks[i].begin * W);
      const auto* end = reinterpret_cast<const char*>(run.keys + blocks[i].end * W);
      for (const char* line = begin; line < end; line += 64) __builtin_prefetch(line);
    }
    for (uint32_t i = 0; i < count; ++i) {
      positions[i][s] = BoundIn<W, false>(run.keys, blocks[i].begin,
                                          blocks[i].end - blocks[i].begin, keys + i * W);
      __builtin_prefetch(run.meta + positions[i][s]);
      __builtin_prefetch(run.values + positions[i][s] * value_size);
    }
  }
}

// Calls f.template operator()<W>() for the table's key words.
template <typename F>
inline void DispatchKeyWords(uint32_t key_words, F&& f) {
  switch (key_words) {
    case 1:
      f(std::integral_constant<uint32_t, 1>());
      break;
    case 2:
      f(std::integral_constant<uint32_t, 2>());
      break;
    default:
      f(std::integral_constant<uint32_t, 4>());
      break;
  }
}

}  // namespace gpkv::lsm::cpu
