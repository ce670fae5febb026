#include "tables/lsm/cpu/merge.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <parallel/algorithm>
#include <utility>

#include "tables/lsm/cpu/search.h"

namespace gpkv::lsm::cpu {
namespace {

// Below this many entries sorts and merges run on the calling thread.
constexpr uint64_t kParallelEntries = uint64_t{1} << 15;

// A key and its position in the batch, sorted together: comparing through
// an index array reached into the batch's keys at random, a cache miss per
// comparison on large batches.
template <uint32_t W>
struct SortItem {
  uint64_t key[W];
  uint64_t index;
};

template <uint32_t W>
RunData SortBatchW(const uint8_t* key_bytes, const uint8_t* values, size_t n, uint64_t meta,
                   const EntryShape& shape, int threads, std::vector<uint8_t>* first_index) {
  std::vector<SortItem<W>> items(n);
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(items[i].key, key_bytes + i * W * 8, W * 8);
    items[i].index = i;
  }
  auto less = [](const SortItem<W>& a, const SortItem<W>& b) {
    const int c = Compare<W>(a.key, b.key);
    return c < 0 || (c == 0 && a.index < b.index);  // ties in input order: stable
  };
  if (n >= kParallelEntries && threads > 1) {
    __gnu_parallel::sort(items.begin(), items.end(), less,
                         __gnu_parallel::multiway_mergesort_tag(threads));
  } else {
    std::sort(items.begin(), items.end(), less);
  }
  if (first_index != nullptr) first_index->assign(n, 0);
  RunData run(shape);
  run.Reserve(n);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && Compare<W>(items[i].key, items[j].key) == 0) ++j;
    if (first_index != nullptr) (*first_index)[items[i].index] = 1;
    const uint64_t last = items[j - 1].index;  // the last occurrence wins
    run.Append(items[j - 1].key, meta,
               values != nullptr ? values + last * shape.value_size : nullptr);
    i = j;
  }
  return run;
}

// Merges the parts [begin[s], end[s]) of each source into out.
template <uint32_t W>
void MergeRange(const std::vector<RunView>& runs, const std::vector<uint64_t>& begin,
                const std::vector<uint64_t>& end, bool drop_tombstones, RunData& out) {
  const size_t count = runs.size();
  std::vector<uint64_t> position = begin;
  if (count == 1) {
    for (uint64_t i = begin[0]; i < end[0]; ++i) {
      if (drop_tombstones && IsTombstone(runs[0].meta[i])) continue;
      out.Append(runs[0], i);
    }
    return;
  }
  for (;;) {
    int best = -1;
    const uint64_t* best_key = nullptr;
    for (size_t s = 0; s < count; ++s) {
      if (position[s] >= end[s]) continue;
      const uint64_t* key = runs[s].keys + position[s] * W;
      if (best < 0 || Compare<W>(key, best_key) < 0) {
        best = static_cast<int>(s);
        best_key = key;
      }
    }
    if (best < 0) return;
    const uint64_t index = position[best];
    for (size_t s = best + 1; s < count; ++s) {
      if (position[s] < end[s] && Compare<W>(runs[s].keys + position[s] * W, best_key) == 0) {
        ++position[s];
      }
    }
    ++position[best];
    if (drop_tombstones && IsTombstone(runs[best].meta[index])) continue;
    out.Append(runs[best], index);
  }
}

template <uint32_t W>
RunData MergeRunsW(const std::vector<RunView>& runs, const EntryShape& shape, bool drop_tombstones,
                   int threads) {
  uint64_t total = 0;
  size_t largest = 0;
  for (size_t s = 0; s < runs.size(); ++s) {
    total += runs[s].count;
    if (runs[s].count > runs[largest].count) largest = s;
  }
  RunData merged(shape);
  if (runs.empty()) return merged;
  // Parts split at keys of the largest run: all entries of one key fall into
  // the same part, so the parts merge independently.
  const int parts = (total >= kParallelEntries && threads > 1) ? threads * 4 : 1;
  std::vector<std::vector<uint64_t>> bounds(parts + 1, std::vector<uint64_t>(runs.size()));
  for (size_t s = 0; s < runs.size(); ++s) {
    bounds[0][s] = 0;
    bounds[parts][s] = runs[s].count;
  }
  for (int p = 1; p < parts; ++p) {
    const uint64_t* splitter = runs[largest].keys + (runs[largest].count * p / parts) * W;
    for (size_t s = 0; s < runs.size(); ++s) bounds[p][s] = LowerBound<W>(runs[s], splitter);
  }
  if (parts == 1) {
    merged.Reserve(total);
    MergeRange<W>(runs, bounds[0], bounds[1], drop_tombstones, merged);
    return merged;
  }
  std::vector<RunData> pieces(parts, RunData(shape));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int p = 0; p < parts; ++p) {
    uint64_t part_total = 0;
    for (size_t s = 0; s < runs.size(); ++s) part_total += bounds[p + 1][s] - bounds[p][s];
    pieces[p].Reserve(part_total);
    MergeRange<W>(runs, bounds[p], bounds[p + 1], drop_tombstones, pieces[p]);
  }
  merged.Reserve(total);
  for (RunData& piece : pieces) {
    merged.AppendAll(piece);
    piece.Clear();
  }
  return merged;
}

}  // namespace

RunData SortBatch(const uint8_t* keys, const uint8_t* values, size_t n, uint64_t meta,
                  const EntryShape& shape, int threads, std::vector<uint8_t>* first_index) {
  RunData out;
  DispatchKeyWords(shape.key_words, [&](auto words) {
    out = SortBatchW<decltype(words)::value>(keys, values, n, meta, shape, threads, first_index);
  });
  return out;
}

RunData MergeRuns(const std::vector<RunView>& newest_first, const EntryShape& shape,
                  bool drop_tombstones, int threads) {
  RunData out;
  DispatchKeyWords(shape.key_words, [&](auto words) {
    out = MergeRunsW<decltype(words)::value>(newest_first, shape, drop_tombstones, threads);
  });
  return out;
}

}  // namespace gpkv::lsm::cpu
