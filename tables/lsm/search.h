// Searches and ordered iteration over the sources of an LSM table, for both
// backends: the CPU's over runs in the pool and in memory (cpu/), the GPU's
// kernels over runs in device memory (gpu/). The sources are the write
// buffer's runs and the runs of the occupied levels, newest first. Of the
// entries of one key in several sources the newest wins (the first source
// holding it); a winning tombstone hides the key. Templated on the key's
// 8-byte words (1, 2 or 4) so the comparisons unroll, and on the sources
// (any struct with `RunView runs[N]` and `uint32_t count`: the CPU's
// cpu::Sources, the GPU's gpu::DeviceSources).
//
// Who may call: tables/lsm/ (host and device code).
// Thread safety: pure functions over immutable runs.
#pragma once

#include <cstdint>
#include <type_traits>

#include "format/hd.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"

namespace gpkv::lsm {

template <uint32_t W>
GPKV_HD int Compare(const uint64_t* a, const uint64_t* b) {
  for (int i = static_cast<int>(W) - 1; i >= 0; --i) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

// Fence pointers: a run carries every kFenceStride-th key (RunView::fences;
// in memory beside a run in the pool, in device memory beside a device run).
// A search finds the block among the fences (a small array that stays in
// cache) and then searches the block: about 3 cache lines of the run instead
// of one per halving below the cached top of a binary search over the whole
// run (a CPU get on 2^20 keys: 2.8 Mops/s at 2^20 vs 7.2 at 2^16 before
// fences, docs/bench/lsm.md).
constexpr uint64_t kFenceStride = 64;

// First index in [low, low + count) of keys whose key is >= key (or > key
// with kUpper); low + count when none.
template <uint32_t W, bool kUpper>
GPKV_HD uint64_t BoundIn(const uint64_t* keys, uint64_t low, uint64_t count, const uint64_t* key) {
  while (count > 0) {
    const uint64_t half = count / 2;
    const int c = Compare<W>(keys + (low + half) * W, key);
    if (kUpper ? c <= 0 : c < 0) {
      low += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return low;
}

// The indexes [begin, end) of a run among which the first key >= key (> key
// with kUpper) lies, or end when none: the block the fences name, or the
// whole run when it has none.
struct Block {
  uint64_t begin;
  uint64_t end;
};
template <uint32_t W, bool kUpper>
GPKV_HD Block FenceBlock(const RunView& run, const uint64_t* key) {
  if (run.fences == nullptr) return {0, run.count};
  // f fences are before the answer: it lies after key (f - 1) * stride and
  // at or before key f * stride (the end of the run when f is the last).
  const uint64_t f = BoundIn<W, kUpper>(run.fences, 0, run.fence_count, key);
  return {f == 0 ? 0 : (f - 1) * kFenceStride + 1,
          f < run.fence_count ? f * kFenceStride : run.count};
}

// First index in [0, run.count) whose key is >= key (> key with kUpper):
// among the fences first when the run has them.
template <uint32_t W, bool kUpper>
GPKV_HD uint64_t Bound(const RunView& run, const uint64_t* key) {
  const Block block = FenceBlock<W, kUpper>(run, key);
  return BoundIn<W, kUpper>(run.keys, block.begin, block.end - block.begin, key);
}

// First index whose key is >= key (count when none).
template <uint32_t W>
GPKV_HD uint64_t LowerBound(const RunView& run, const uint64_t* key) {
  return Bound<W, false>(run, key);
}

// First index whose key is > key (count when none).
template <uint32_t W>
GPKV_HD uint64_t UpperBound(const RunView& run, const uint64_t* key) {
  return Bound<W, true>(run, key);
}

// The newest entry of `key`: (source, index), or source == -1. A run with a
// filter (RunView::filter) is searched only when its filter may hold the
// key: most gets then search one run instead of every one. The last (the
// oldest) run's filter is not read: the largest run holds most keys, and a
// get of a key it holds would read the filter's cache line for nothing.
struct Hit {
  int source = -1;
  uint64_t index = 0;
};
template <uint32_t W, typename Sources>
GPKV_HD Hit FindNewest(const Sources& sources, const uint64_t* key) {
  uint64_t hash = 0;
  bool hashed = false;
  for (uint32_t s = 0; s < sources.count; ++s) {
    const RunView& run = sources.runs[s];
    if (run.filter != nullptr && s + 1 < sources.count) {
      if (!hashed) {
        hash = FilterHash(key, W);
        hashed = true;
      }
      if (!FilterMayContain(run.filter, run.filter_words, hash)) continue;
    }
    const uint64_t index = LowerBound<W>(run, key);
    if (index < run.count && Compare<W>(run.keys + index * W, key) == 0) {
      return {static_cast<int>(s), index};
    }
  }
  return {};
}

// Sources a Sources type holds at most.
template <typename Sources>
constexpr uint32_t kSourcesOf = std::extent_v<decltype(Sources::runs)>;

// ForwardLive from position[s] in each source s (a lower bound of the
// start key there, which the caller found); advances position.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <uint32_t W, typename Sources, typename Visit>
GPKV_HD void ForwardLiveFrom(const Sources& sources, uint64_t* position, const uint64_t* end,
                             Visit&& visit) {
  for (;;) {
    int best = -1;
    const uint64_t* best_key = nullptr;
    for (uint32_t s = 0; s < sources.count; ++s) {
      if (position[s] >= sources.runs[s].count) continue;
      const uint64_t* key = sources.runs[s].keys + position[s] * W;
      if (best < 0 || Compare<W>(key, best_key) < 0) {
        best = static_cast<int>(s);
        best_key = key;
      }
    }
    if (best < 0) return;
    if (end != nullptr && Compare<W>(best_key, end) > 0) return;
    const RunView& winner = sources.runs[best];
    const uint64_t index = position[best];
    for (uint32_t s = best + 1; s < sources.count; ++s) {
      if (position[s] < sources.runs[s].count &&
          Compare<W>(sources.runs[s].keys + position[s] * W, best_key) == 0) {
        ++position[s];
      }
    }
    ++position[best];
    if (!IsTombstone(winner.meta[index]) && !visit(winner, index)) return;
  }
}

// Visits the live entries with keys >= *start (every key when start is null)
// and <= *end (when end is not null) in ascending order, a k-way walk over
// the sources: visit(run, index) returns false to stop.
// The visitor is a host or a device callable: no check that an HD function
// calls only HD functions (the instantiation that runs decides).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <uint32_t W, typename Sources, typename Visit>
GPKV_HD void ForwardLive(const Sources& sources, const uint64_t* start, const uint64_t* end,
                         Visit&& visit) {
  uint64_t position[kSourcesOf<Sources>];
  for (uint32_t s = 0; s < sources.count; ++s) {
    position[s] = start != nullptr ? LowerBound<W>(sources.runs[s], start) : 0;
  }
  ForwardLiveFrom<W>(sources, position, end, visit);
}

// Visits the live entries with keys <= *start in descending order.
// The visitor is a host or a device callable: no check that an HD function
// calls only HD functions (the instantiation that runs decides).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <uint32_t W, typename Sources, typename Visit>
GPKV_HD void BackwardLive(const Sources& sources, const uint64_t* start, Visit&& visit) {
  uint64_t position[kSourcesOf<Sources>];  // one past the next entry to visit
  for (uint32_t s = 0; s < sources.count; ++s) {
    position[s] = UpperBound<W>(sources.runs[s], start);
  }
  for (;;) {
    int best = -1;
    const uint64_t* best_key = nullptr;
    for (uint32_t s = 0; s < sources.count; ++s) {
      if (position[s] == 0) continue;
      const uint64_t* key = sources.runs[s].keys + (position[s] - 1) * W;
      if (best < 0 || Compare<W>(key, best_key) > 0) {
        best = static_cast<int>(s);
        best_key = key;
      }
    }
    if (best < 0) return;
    const RunView& winner = sources.runs[best];
    const uint64_t index = position[best] - 1;
    for (uint32_t s = best + 1; s < sources.count; ++s) {
      if (position[s] > 0 &&
          Compare<W>(sources.runs[s].keys + (position[s] - 1) * W, best_key) == 0) {
        --position[s];
      }
    }
    --position[best];
    if (!IsTombstone(winner.meta[index]) && !visit(winner, index)) return;
  }
}

// The live entries with keys >= *low (every key when low is null) and
// <= *high (when high is not null), counted up to `limit` (the walk stops
// there).
template <uint32_t W, typename Sources>
GPKV_HD uint64_t CountLiveIn(const Sources& sources, const uint64_t* low, const uint64_t* high,
                             uint64_t limit = ~uint64_t{0}) {
  uint64_t count = 0;
  if (limit == 0) return 0;
  ForwardLive<W>(sources, low, high, [&](const RunView&, uint64_t) { return ++count < limit; });
  return count;
}

// Visits the live entries with keys in [*low, *high] in ascending order
// (largest == false) or descending (largest == true), at most `limit` of
// them: the smallest keys of the range, or the largest. visit(run, index).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <uint32_t W, typename Sources, typename Visit>
GPKV_HD void LimitedLiveIn(const Sources& sources, const uint64_t* low, const uint64_t* high,
                           uint64_t limit, bool largest, Visit&& visit) {
  if (limit == 0) return;
  uint64_t visited = 0;
  if (!largest) {
    ForwardLive<W>(sources, low, high, [&](const RunView& run, uint64_t index) {
      visit(run, index);
      return ++visited < limit;
    });
    return;
  }
  BackwardLive<W>(sources, high, [&](const RunView& run, uint64_t index) {
    if (Compare<W>(run.keys + index * W, low) < 0) return false;
    visit(run, index);
    return ++visited < limit;
  });
}

}  // namespace gpkv::lsm
