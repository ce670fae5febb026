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
