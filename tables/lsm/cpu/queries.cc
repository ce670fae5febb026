// The read side of lsm::cpu::CpuBackend: Get, Count, Range, Successor,
// Predecessor, Scan and the live count. Each query holds version_mutex_
// shared for its whole call, so the runs it reads stay allocated, and spreads
// its queries over the worker threads.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "tables/lsm/cpu/backend.h"

namespace gpkv::lsm::cpu {
namespace {

// Batches of at least this many queries run on the worker threads.
constexpr size_t kParallelQueries = 1024;

// Bytes appended to a buffer that grows by doubling (vector::insert of a few
// bytes per pair costs more than the search that found the pair). Grown
// without zeroing: every byte below size() was appended.
// Aligned to its own cache lines: the threads of one Range call append to
// neighbouring buffers, and sharing a line made every Append a cache-line
// transfer (Range ran at a fifth of Count's rate over the same walk; perf
// put 60% of it on loading `used_`).
class alignas(64) PairBuffer {
 public:
  // Reverses the order of the pairs of `pair_size` bytes from byte `from`
  // on.
  void ReversePairsFrom(size_t from, size_t pair_size) {
    for (size_t low = from, high = used_; high - low >= 2 * pair_size;
         low += pair_size, high -= pair_size) {
      std::swap_ranges(bytes_.get() + low, bytes_.get() + low + pair_size,
                       bytes_.get() + high - pair_size);
    }
  }
  void Append(const void* bytes, size_t size) {
    if (used_ + size > capacity_) Grow(used_ + size);
    std::memcpy(bytes_.get() + used_, bytes, size);
    used_ += size;
  }
  // Empties the buffer; keeps its memory unless it holds more than
  // `keep_bytes`.
  void Clear(size_t keep_bytes) {
    used_ = 0;
    if (capacity_ > keep_bytes) {
      bytes_.reset();
      capacity_ = 0;
    }
  }
  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return used_; }

 private:
  void Grow(size_t needed) {
    size_t capacity = std::max<size_t>(2 * capacity_, 4096);
    while (capacity < needed) capacity *= 2;
    std::unique_ptr<uint8_t[]> bytes(new uint8_t[capacity]);
    if (used_ != 0) std::memcpy(bytes.get(), bytes_.get(), used_);
    bytes_ = std::move(bytes);
    capacity_ = capacity;
  }

  std::unique_ptr<uint8_t[]> bytes_;
  size_t capacity_ = 0;
  size_t used_ = 0;
};

// The pair buffers of the Range calls a thread works on, kept from call to
// call: fresh buffers for each call were a few hundred allocations of a
// call on 16 threads, each zeroed, then freed by the calling thread into
// the arenas of the others. A buffer that grew past kKeptRangeBytes (a
// call with large ranges) is freed when its call ends. Each thread that
// runs a Range call has its own, so concurrent calls share none.
constexpr size_t kKeptRangeBytes = size_t{1} << 20;
struct RangeBuffers {
  PairBuffer keys;
  PairBuffer values;
};
thread_local RangeBuffers range_buffers;

template <uint32_t W>
void LoadKey(const uint8_t* bytes, size_t i, uint64_t (&key)[W]) {
  std::memcpy(key, bytes + i * W * 8, W * 8);
}

// Successor (kForward: the first live key >= each key) or Predecessor (the
// last live key <= it) of n keys: its key and value, or zeros and found 0.
template <bool kForward>
void FindNeighbours(const Sources& sources, const EntryShape& shape, int threads,
                    const uint8_t* keys, uint8_t* neighbour_keys, uint8_t* values, uint8_t* found,
                    size_t n) {
  const uint32_t value_size = shape.value_size;
  DispatchKeyWords(shape.key_words, [&](auto words) {
    constexpr uint32_t W = decltype(words)::value;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) if (n >= kParallelQueries)
    for (size_t i = 0; i < n; ++i) {
      uint64_t key[W];
      LoadKey<W>(keys, i, key);
      bool hit = false;
      auto take = [&](const RunView& run, uint64_t index) {
        std::memcpy(neighbour_keys + i * W * 8, run.keys + index * W, W * 8);
        std::memcpy(values + i * value_size, run.values + index * value_size, value_size);
        hit = true;
        return false;
      };
      if constexpr (kForward) {
        ForwardLive<W>(sources, key, nullptr, take);
      } else {
        BackwardLive<W>(sources, key, take);
      }
      if (!hit) {
        std::memset(neighbour_keys + i * W * 8, 0, W * 8);
        std::memset(values + i * value_size, 0, value_size);
      }
      if (found != nullptr) found[i] = hit ? 1 : 0;
    }
  });
}

}  // namespace

Status CpuBackend::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n) {
  std::shared_lock<std::shared_mutex> lock(version_mutex_);
  const Sources sources = SourcesOf(*version_);
  const uint32_t value_size = shape_.value_size;
  const size_t groups = (n + kGetGroup - 1) / kGetGroup;
  DispatchKeyWords(shape_.key_words, [&](auto words) {
    constexpr uint32_t W = decltype(words)::value;
#pragma omp parallel for num_threads(threads_) schedule(static) if (n >= kParallelQueries)
    for (size_t group = 0; group < groups; ++group) {
      const size_t first = group * kGetGroup;
      const uint32_t count = static_cast<uint32_t>(std::min<size_t>(kGetGroup, n - first));
      uint64_t group_keys[kGetGroup * W];
      std::memcpy(group_keys, keys + first * W * 8, count * W * 8);
      Hit hits[kGetGroup];
      FindNewestGroup<W>(sources, group_keys, count, hits);
      // The meta words and values of the hits, prefetched for the group.
      for (uint32_t j = 0; j < count; ++j) {
        if (hits[j].source < 0) continue;
        const RunView& run = sources.runs[hits[j].source];
        __builtin_prefetch(run.meta + hits[j].index);
        __builtin_prefetch(run.values + hits[j].index * value_size);
      }
      for (uint32_t j = 0; j < count; ++j) {
        const size_t i = first + j;
        const Hit& hit = hits[j];
        const bool live = hit.source >= 0 && !IsTombstone(sources.runs[hit.source].meta[hit.index]);
        if (live) {
          std::memcpy(values + i * value_size,
                      sources.runs[hit.source].values + hit.index * value_size, value_size);
        } else {
          std::memset(values + i * value_size, 0, value_size);
        }
        if (found != nullptr) found[i] = live ? 1 : 0;
      }
    }
  });
  return Status::OK();
}

Status CpuBackend::Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n) {
  std::shared_lock<std::shared_mutex> lock(version_mutex_);
  const Sources sources = SourcesOf(*version_);
  const size_t groups = (n + kGetGroup - 1) / kGetGroup;
  const uint32_t value_size = shape_.value_size;
  DispatchKeyWords(shape_.key_words, [&](auto words) {
    constexpr uint32_t W = decltype(words)::value;
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 4) if (n >= kParallelQueries)
    for (size_t group = 0; group < groups; ++group) {
      const size_t first = group * kGetGroup;
      const uint32_t size = static_cast<uint32_t>(std::min<size_t>(kGetGroup, n - first));
      uint64_t lows[kGetGroup * W];
      std::memcpy(lows, lo + first * W * 8, size * W * 8);
      uint64_t positions[kGetGroup][kMaxSources];
      LowerBoundsGroup<W>(sources, lows, size, value_size, positions);
      for (uint32_t j = 0; j < size; ++j) {
        uint64_t high[W];
        LoadKey<W>(hi, first + j, high);
        uint64_t count = 0;
        ForwardLiveFrom<W>(sources, positions[j], high, [&](const RunView&, uint64_t) {
          ++count;
          return true;
        });
        std::memcpy(counts + first + j, &count, sizeof(count));
      }
    }
  });
  return Status::OK();
}

Status CpuBackend::Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results,
                         size_t n, tables::RangeLimit limit) {
  std::shared_lock<std::shared_mutex> lock(version_mutex_);
  const Sources sources = SourcesOf(*version_);
  const uint32_t key_size = shape_.key_size();
  const uint32_t value_size = shape_.value_size;
  results->offsets.assign(n + 1, 0);
  // One pass: each thread collects the pairs of the chunks of queries it
  // takes in its own buffers (the GPU LSM counts first and copies second,
  // which searches every run twice); a prefix sum places the chunks, and
  // they are copied into place, all in one parallel region.
  const size_t chunks = n >= kParallelQueries ? std::min<size_t>(n, 8 * threads_) : 1;
  // Where each chunk's pairs are: the thread's buffers and the byte offsets
  // in them.
  struct ChunkPlace {
    RangeBuffers* buffers;
    size_t keys_from;
    size_t values_from;
  };
  std::vector<ChunkPlace> places(chunks);
  DispatchKeyWords(shape_.key_words, [&](auto words) {
    constexpr uint32_t W = decltype(words)::value;
    // Sizes local to this lambda: clang (the ASan + UBSan build) cannot reach the
    // enclosing function's locals from a lambda inside the parallel region.
    const uint32_t pair_key_size = key_size;
    const uint32_t pair_value_size = value_size;
    const tables::RangeLimit query_limit = limit;
#pragma omp parallel num_threads(threads_) if (chunks > 1)
    {
      RangeBuffers& buffers = range_buffers;
      PairBuffer& keys = buffers.keys;
      PairBuffer& values = buffers.values;
      keys.Clear(kKeptRangeBytes);
      values.Clear(kKeptRangeBytes);
#pragma omp for schedule(dynamic, 1)
      for (size_t chunk = 0; chunk < chunks; ++chunk) {
        places[chunk] = {&buffers, keys.size(), values.size()};
        const size_t chunk_begin = n * chunk / chunks;
        const size_t chunk_end = n * (chunk + 1) / chunks;
        uint64_t positions[kGetGroup][kMaxSources];
        for (size_t i = chunk_begin; i < chunk_end; ++i) {
          // The smallest keys of a range start at lower bounds of its low
          // key, found for a group of ranges at a time.
          const size_t in_group = (i - chunk_begin) % kGetGroup;
          if (!query_limit.largest && in_group == 0) {
            const uint32_t size = static_cast<uint32_t>(std::min<size_t>(kGetGroup, chunk_end - i));
            uint64_t lows[kGetGroup * W];
            std::memcpy(lows, lo + i * W * 8, size * W * 8);
            LowerBoundsGroup<W>(sources, lows, size, pair_value_size, positions);
          }
          uint64_t low[W], high[W];
          LoadKey<W>(lo, i, low);
          LoadKey<W>(hi, i, high);
          uint64_t count = 0;
          const size_t keys_from = keys.size();
          const size_t values_from = values.size();
          auto append = [&](const RunView& run, uint64_t index) {
            keys.Append(run.keys + index * W, W * sizeof(uint64_t));
            values.Append(run.values + index * pair_value_size, pair_value_size);
            ++count;
          };
          if (query_limit.largest) {
            LimitedLiveIn<W>(sources, low, high, query_limit.pairs, true, append);
          } else if (query_limit.pairs != 0) {
            // LimitedLiveIn's walk for the smallest keys, from the bounds.
            ForwardLiveFrom<W>(sources, positions[in_group], high,
                               [&](const RunView& run, uint64_t index) {
                                 append(run, index);
                                 return count < query_limit.pairs;
                               });
          }
          if (query_limit.largest) {  // walked in descending order
            keys.ReversePairsFrom(keys_from, pair_key_size);
            values.ReversePairsFrom(values_from, pair_value_size);
          }
          results->offsets[i + 1] = count;
        }
      }
#pragma omp single
      {
        for (size_t i = 0; i < n; ++i) results->offsets[i + 1] += results->offsets[i];
        results->keys.resize(results->offsets[n] * pair_key_size);
        results->values.resize(results->offsets[n] * pair_value_size);
      }
#pragma omp for schedule(static)
      for (size_t chunk = 0; chunk < chunks; ++chunk) {
        const ChunkPlace& place = places[chunk];
        const uint64_t first = results->offsets[n * chunk / chunks];
        const uint64_t pairs = results->offsets[n * (chunk + 1) / chunks] - first;
        if (pairs != 0) {
          std::memcpy(&results->keys[first * pair_key_size],
                      place.buffers->keys.data() + place.keys_from, pairs * pair_key_size);
          std::memcpy(&results->values[first * pair_value_size],
                      place.buffers->values.data() + place.values_from, pairs * pair_value_size);
        }
      }
      // After the loop's barrier no thread reads another's buffers.
      keys.Clear(kKeptRangeBytes);
      values.Clear(kKeptRangeBytes);
    }
  });
  return Status::OK();
}

Status CpuBackend::Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values,
                             uint8_t* found, size_t n) {
  std::shared_lock<std::shared_mutex> lock(version_mutex_);
  FindNeighbours</*kForward=*/true>(SourcesOf(*version_), shape_, threads_, keys, next_keys, values,
                                    found, n);
  return Status::OK();
}

Status CpuBackend::Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values,
                               uint8_t* found, size_t n) {
  std::shared_lock<std::shared_mutex> lock(version_mutex_);
  FindNeighbours</*kForward=*/false>(SourcesOf(*version_), shape_, threads_, keys, previous_keys,
                                     values, found, n);
  return Status::OK();
}

Status CpuBackend::Scan(const Table::ScanVisitor& visit) {
  std::shared_lock<std::shared_mutex> lock(version_mutex_);
  const Sources sources = SourcesOf(*version_);
  const uint32_t value_size = shape_.value_size;
  DispatchKeyWords(shape_.key_words, [&](auto words) {
    constexpr uint32_t W = decltype(words)::value;
    ForwardLive<W>(sources, nullptr, nullptr, [&](const RunView& run, uint64_t index) {
      return visit(reinterpret_cast<const uint8_t*>(run.keys + index * W),
                   run.values + index * value_size);
    });
  });
  return Status::OK();
}

Status CpuBackend::RangeOnDevice(const uint8_t*, const uint8_t*, Table::DeviceRangeResults*, size_t,
                                 tables::RangeLimit) {
  return Status::Unsupported("the CPU backend of an ordered table keeps no results in GPU memory");
}

Result<uint64_t> CpuBackend::CountLive(const Version& version) {
  const Sources sources = SourcesOf(version);
  uint64_t live = 0;
  DispatchKeyWords(shape_.key_words, [&](auto words) {
    live = CountLiveIn<decltype(words)::value>(sources, nullptr, nullptr);
  });
  return live;
}

}  // namespace gpkv::lsm::cpu
