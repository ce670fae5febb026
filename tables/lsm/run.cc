#include "tables/lsm/run.h"

#include <algorithm>
#include <cstring>

#include "format/checksum.h"
#include "format/pool_layout.h"
#include "pm/extent_allocator.h"
#include "tables/log/checksum.h"

namespace gpkv::lsm {

void RunData::Reserve(uint64_t entries) {
  keys_.reserve(entries * shape_.key_words);
  meta_.reserve(entries);
  values_.reserve(entries * shape_.value_size);
}

void RunData::Clear() {
  keys_.clear();
  meta_.clear();
  values_.clear();
}

void RunData::Append(const uint64_t* key, uint64_t meta, const uint8_t* value) {
  keys_.insert(keys_.end(), key, key + shape_.key_words);
  meta_.push_back(meta);
  if (value != nullptr) {
    values_.insert(values_.end(), value, value + shape_.value_size);
  } else {
    values_.resize(values_.size() + shape_.value_size, 0);
  }
}

void RunData::AppendAll(const RunData& other) {
  keys_.insert(keys_.end(), other.keys_.begin(), other.keys_.end());
  meta_.insert(meta_.end(), other.meta_.begin(), other.meta_.end());
  values_.insert(values_.end(), other.values_.begin(), other.values_.end());
}

void RunData::Swap(RunData& other) {
  std::swap(shape_, other.shape_);
  keys_.swap(other.keys_);
  meta_.swap(other.meta_);
  values_.swap(other.values_);
}

RunSummary Summarize(const RunView& run) {
  RunSummary summary;
  summary.entries = run.count;
  for (uint64_t i = 0; i < run.count; ++i) {
    summary.tombstones += IsTombstone(run.meta[i]) ? 1 : 0;
    summary.max_seq = std::max(summary.max_seq, SeqOf(run.meta[i]));
  }
  return summary;
}

uint64_t RunDataChecksum(uint64_t table_id, const RunView& run, const EntryShape& shape,
                         int threads) {
  threads = std::max(1, threads);
  const uint64_t key_words = run.count * shape.key_words;
  uint64_t sum = log::SumTerms(table_id, 0, run.keys, key_words, threads);
  sum += log::SumTerms(table_id, key_words, run.meta, run.count, threads);
  uint64_t words = key_words + run.count;
  sum += log::SumPaddedTerms(table_id, &words, run.values, run.count * shape.value_size, threads);
  return log::ChecksumFinish(table_id, words, sum);
}

Result<RunExtent> AllocateRun(pm::Pool& pool, uint64_t table_id, const EntryShape& shape,
                              uint64_t count) {
  const uint32_t key_size = shape.key_size();
  const uint64_t bytes = RunExtentBytes(count, key_size, shape.value_size);
  // Not zeroed first: every byte of the extent is written (arrays, header,
  // padding, filter) and persisted before a manifest can name the run.
  auto offset = pool.allocator().AllocateUninitialized(bytes, format::kExtentKindOther, table_id);
  if (!offset.ok()) return offset.status();
  uint8_t* base = pool.At<uint8_t>(*offset);
  const uint64_t extent_bytes = format::AlignUp(bytes, format::kExtentAlignment);
  const uint64_t values_end = RunValuesOffset(count, key_size) + count * shape.value_size;
  std::memset(base + values_end, 0, extent_bytes - values_end);
  RunExtent extent;
  extent.offset = *offset;
  extent.count = count;
  extent.keys = base + RunKeysOffset();
  extent.meta = base + RunMetaOffset(count, key_size);
  extent.values = base + RunValuesOffset(count, key_size);
  extent.filter = base + RunFilterOffset(count, key_size, shape.value_size);
  return extent;
}

namespace {

template <bool kAtomic>
inline void SetFilterBits(uint64_t* filter, uint64_t word, uint64_t mask) {
  if (kAtomic) {
    __atomic_fetch_or(filter + word, mask, __ATOMIC_RELAXED);
  } else {
    filter[word] |= mask;
  }
}

template <bool kAtomic>
void AddKeysOneByOne(const uint64_t* keys, uint64_t count, uint32_t key_words, uint64_t* filter,
                     uint64_t words) {
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t hash = FilterHash(keys + i * key_words, key_words);
    SetFilterBits<kAtomic>(filter, FilterWordOf(hash, words), FilterMaskOf(hash));
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// 8-byte keys, eight at a time: FilterHash, FilterWordOf and FilterMaskOf
// (layout.h) over vector lanes, the same functions as one key at a time,
// then the eight words set one by one. With AVX-512 the hash's multiplies
// are one instruction for eight keys (0.7-0.8 ns a key on one core of the
// development machine against 2.3 one key at a time, the filter in cache);
// with AVX2 they take a few (1.3-1.4 ns); without AVX2 the lanes were
// slower than one key at a time (3.2 ns), so they are not used there. The
// words of a step are prefetched kStepsAhead steps before they are set: a
// filter larger than the core's cache (runs of 2^19 keys and more) then
// costs about what one in cache does (0.8 against 1.3 ns a key at 2^19
// keys). The functions built for AVX-512 and AVX2 are flattened: layout.h's
// functions are inlined into them and compiled for their instructions (the
// build passes -Wno-psabi for this file: no call passes a vector).
constexpr uint32_t kLanes = 8;
constexpr uint32_t kStepsAhead = 4;
using Lanes = uint64_t __attribute__((vector_size(kLanes * 8)));

[[gnu::always_inline]] inline void HashInLanes(const uint64_t* keys, uint64_t words, Lanes* word,
                                               Lanes* mask) {
  Lanes key;  // lane i: key i's one word
  std::memcpy(&key, keys, sizeof(key));
  const Lanes hash = FilterHash(&key, 1);
  *word = FilterWordOf(hash, words);
  *mask = FilterMaskOf(hash);
}

// Returns how many keys it added (a multiple of eight).
template <bool kAtomic>
[[gnu::always_inline]] inline uint64_t AddWordKeysInLanes(const uint64_t* keys, uint64_t count,
                                                          uint64_t* filter, uint64_t words) {
  Lanes word[kStepsAhead], mask[kStepsAhead];
  const uint64_t steps = count / kLanes;
  for (uint64_t step = 0; step < steps + kStepsAhead; ++step) {
    const uint32_t slot = step % kStepsAhead;
    if (step >= kStepsAhead) {
      for (uint32_t lane = 0; lane < kLanes; ++lane) {
        SetFilterBits<kAtomic>(filter, word[slot][lane], mask[slot][lane]);
      }
    }
    if (step < steps) {
      HashInLanes(keys + step * kLanes, words, &word[slot], &mask[slot]);
      for (uint32_t lane = 0; lane < kLanes; ++lane) {
        __builtin_prefetch(filter + word[slot][lane], /*rw=*/1);
      }
    }
  }
  return steps * kLanes;
}

template <bool kAtomic>
__attribute__((target("avx512f,avx512dq"), flatten)) uint64_t AddWordKeysAvx512(
    const uint64_t* keys, uint64_t count, uint64_t* filter, uint64_t words) {
  return AddWordKeysInLanes<kAtomic>(keys, count, filter, words);
}

template <bool kAtomic>
__attribute__((target("avx2"), flatten)) uint64_t AddWordKeysAvx2(const uint64_t* keys,
                                                                  uint64_t count, uint64_t* filter,
                                                                  uint64_t words) {
  return AddWordKeysInLanes<kAtomic>(keys, count, filter, words);
}

#endif

// The widest lanes the host has.
FilterLanes HostLanes() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const FilterLanes lanes =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") ? FilterLanes::kAvx512
      : __builtin_cpu_supports("avx2")                                        ? FilterLanes::kAvx2
                                       : FilterLanes::kOneByOne;
  return lanes;
#else
  return FilterLanes::kOneByOne;
#endif
}

// The keys' bits, in `lanes` for 8-byte keys.
template <bool kAtomic>
void AddKeys(FilterLanes lanes, const uint64_t* keys, uint64_t count, uint32_t key_words,
             uint64_t* filter, uint64_t words) {
  uint64_t done = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if (key_words == 1) {
    switch (lanes) {
      case FilterLanes::kAvx512:
        done = AddWordKeysAvx512<kAtomic>(keys, count, filter, words);
        break;
      case FilterLanes::kAvx2:
        done = AddWordKeysAvx2<kAtomic>(keys, count, filter, words);
        break;
      case FilterLanes::kOneByOne:
        break;
    }
  }
#endif
  AddKeysOneByOne<kAtomic>(keys + done * key_words, count - done, key_words, filter, words);
}

}  // namespace

void AddToFilter(const uint64_t* keys, uint64_t count, uint32_t key_words, uint64_t* filter,
                 uint64_t words, int threads) {
  // One key at a time, a key costs its hash more than its word (2.3-4.5 ns
  // a key on one core of the development machine, whether the filter is in
  // cache or not; 0.7-1.6 ns in vector lanes, AddKeys), so only a split of
  // the keys scales: threads take slices of the keys and OR into shared
  // words atomically, which gives the same words in any order. An atomic OR
  // costs about 5 ns a key on one thread, lanes or not, so the split pays
  // in time from a few free cores on, at several times the CPU time (on 2
  // shared cores it was slower): large runs on a host of 4 threads or more.
  // (The GPU backend builds its runs' filters on the device.)
  constexpr uint64_t kParallelKeys = uint64_t{1} << 20;
  constexpr int kParallelThreads = 4;
  if (threads < kParallelThreads || count < kParallelKeys) {
    AddKeys<false>(HostLanes(), keys, count, key_words, filter, words);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int slice = 0; slice < threads; ++slice) {
    const uint64_t begin = count * slice / threads;
    const uint64_t end = count * (slice + 1) / threads;
    AddKeys<true>(HostLanes(), keys + begin * key_words, end - begin, key_words, filter, words);
  }
}

bool TEST_HostHasFilterLanes(FilterLanes lanes) {
  return static_cast<int>(lanes) <= static_cast<int>(HostLanes());
}

void TEST_AddToFilterWith(FilterLanes lanes, const uint64_t* keys, uint64_t count,
                          uint32_t key_words, uint64_t* filter, uint64_t words) {
  AddKeys<false>(lanes, keys, count, key_words, filter, words);
}

uint64_t RunFilterChecksum(uint64_t table_id, const uint64_t* filter, uint64_t words, int threads) {
  return log::PositionChecksum(table_id, filter, words, threads);
}

namespace {

// The filter of a run whose keys are in the pool, its bytes zero before
// (with kCopied, its words set by the caller: only the checksum; with
// kAllSet, every bit).
void BuildFilter(pm::Pool& pool, uint64_t table_id, uint64_t offset, uint64_t entries,
                 const EntryShape& shape, int threads, RunFilterSource source) {
  uint8_t* base = pool.At<uint8_t>(offset);
  const auto* keys = reinterpret_cast<const uint64_t*>(base + RunKeysOffset());
  auto* filter = reinterpret_cast<uint64_t*>(
      base + RunFilterOffset(entries, shape.key_size(), shape.value_size));
  const uint64_t words = RunFilterWords(entries);
  if (source == RunFilterSource::kFromKeys) {
    AddToFilter(keys, entries, shape.key_words, filter, words, threads);
  } else if (source == RunFilterSource::kAllSet) {
    std::memset(filter, 0xff, words * 8);
  }
  // The filter is small (1.25 bytes a key): its checksum on one thread.
  const uint64_t checksum = RunFilterChecksum(table_id, filter, words);
  std::memcpy(filter + words, &checksum, sizeof(checksum));
}

}  // namespace

void WriteRunFilter(pm::Pool& pool, uint64_t table_id, uint64_t offset, uint64_t entries,
                    const EntryShape& shape, int threads) {
  const uint64_t filter_offset = RunFilterOffset(entries, shape.key_size(), shape.value_size);
  const uint64_t filter_bytes = RunFilterWords(entries) * 8 + 8;
  std::memset(pool.At<uint8_t>(offset + filter_offset), 0, filter_bytes);
  BuildFilter(pool, table_id, offset, entries, shape, threads, RunFilterSource::kFromKeys);
  pool.Persist(pool.At<uint8_t>(offset + filter_offset), filter_bytes);
}

void FinishRun(pm::Pool& pool, uint64_t table_id, const EntryShape& shape, const RunExtent& extent,
               const RunSummary& summary, uint64_t data_checksum, int threads,
               RunFilterSource filter) {
  // AllocateRun zeroed the filter.
  BuildFilter(pool, table_id, extent.offset, extent.count, shape, threads, filter);
  RunHeader header{};
  header.magic = kRunMagic;
  header.table_id = table_id;
  header.entries = extent.count;
  header.key_size = shape.key_size();
  header.value_size = shape.value_size;
  header.max_seq = summary.max_seq;
  header.tombstones = summary.tombstones;
  header.data_checksum = data_checksum;
  header.checksum = format::Checksum64(&header, offsetof(RunHeader, checksum));
  uint8_t* base = pool.At<uint8_t>(extent.offset);
  std::memcpy(base, &header, sizeof(header));
  pool.Persist(base,
               format::AlignUp(RunExtentBytes(extent.count, shape.key_size(), shape.value_size),
                               format::kExtentAlignment));
}

Result<uint64_t> WriteRunWith(pm::Pool& pool, uint64_t table_id, const EntryShape& shape,
                              uint64_t count, const RunSummary& summary, uint64_t data_checksum,
                              const CopyRunArrays& copy_arrays, int threads,
                              RunFilterSource filter) {
  auto extent = AllocateRun(pool, table_id, shape, count);
  if (!extent.ok()) return extent.status();
  // The extent is fresh and unreferenced: no reader sees these bytes until a
  // manifest names the run.
  Status copied = copy_arrays(extent->keys, extent->meta, extent->values, extent->filter);
  if (!copied.ok()) {
    pool.allocator().Free(extent->offset).IgnoreError();
    return copied;
  }
  FinishRun(pool, table_id, shape, *extent, summary, data_checksum, threads, filter);
  return extent->offset;
}

Result<uint64_t> WriteRun(pm::Pool& pool, uint64_t table_id, const EntryShape& shape,
                          const RunView& run, int threads, RunFilterSource filter) {
  const uint32_t key_size = shape.key_size();
  auto copy = [&](uint8_t* keys, uint8_t* meta, uint8_t* values, uint8_t*) {
    // The bulk copy, in slices per thread.
    struct Part {
      uint8_t* to;
      const void* from;
      uint64_t bytes;
    };
    const Part parts[3] = {{keys, run.keys, run.count * key_size},
                           {meta, run.meta, run.count * 8},
                           {values, run.values, run.count * shape.value_size}};
    constexpr uint64_t kSlice = uint64_t{1} << 20;
    for (const Part& part : parts) {
      const uint64_t slices = (part.bytes + kSlice - 1) / kSlice;
#pragma omp parallel for num_threads(threads) schedule(static) if (slices > 4)
      for (uint64_t slice = 0; slice < slices; ++slice) {
        const uint64_t begin = slice * kSlice;
        const uint64_t length = std::min(kSlice, part.bytes - begin);
        std::memcpy(part.to + begin, static_cast<const uint8_t*>(part.from) + begin, length);
      }
    }
    return Status::OK();
  };
  return WriteRunWith(pool, table_id, shape, run.count, Summarize(run),
                      RunDataChecksum(table_id, run, shape, threads), copy, threads, filter);
}

Status FreeRuns(pm::Pool& pool, const std::vector<uint64_t>& offsets) {
  Status first;
  for (uint64_t offset : offsets) {
    Status freed = pool.allocator().Free(offset);
    if (first.ok() && !freed.ok()) first = freed;
  }
  return first;
}

RunView PoolRunView(const pm::Pool& pool, uint64_t offset, uint64_t entries,
                    const EntryShape& shape) {
  const uint8_t* base = pool.At<uint8_t>(offset);
  RunView view;
  view.keys = reinterpret_cast<const uint64_t*>(base + RunKeysOffset());
  view.meta = reinterpret_cast<const uint64_t*>(base + RunMetaOffset(entries, shape.key_size()));
  view.values = base + RunValuesOffset(entries, shape.key_size());
  view.count = entries;
  view.filter = reinterpret_cast<const uint64_t*>(
      base + RunFilterOffset(entries, shape.key_size(), shape.value_size));
  view.filter_words = RunFilterWords(entries);
  return view;
}

}  // namespace gpkv::lsm
