// Sorted runs in memory and in the pool: RunView (a run's arrays wherever
// they live), RunData (a run being built in memory: a sorted batch, the write
// buffer, a merge's output) and WriteRun, the one writer of a run's bytes in
// the pool (layout.h draws them).
//
// Who may call: tables/lsm/ (cpu/, gpu/, recovery code) and tests.
// Thread safety: RunView is a value over immutable bytes; RunData is not
// synchronised; WriteRun may run beside readers of other runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/lsm/layout.h"

namespace gpkv::lsm {

// A sorted run's arrays: keys ascending and unique, count entries.
struct RunView {
  const uint64_t* keys = nullptr;   // count * key_words
  const uint64_t* meta = nullptr;   // count
  const uint8_t* values = nullptr;  // count * value_size
  uint64_t count = 0;
  // Optional, in memory: every kFenceStride-th key (cpu/search.h), so a
  // search of a large run in the pool touches one block of it.
  const uint64_t* fences = nullptr;  // fence_count * key_words
  uint64_t fence_count = 0;
  // Optional: the run's key filter (layout.h; in the pool, or in GPU memory
  // for a GPU's run), so that a get skips a run that does not hold its key.
  const uint64_t* filter = nullptr;  // filter_words
  uint64_t filter_words = 0;
};

// The shape of a table's entries.
struct EntryShape {
  uint32_t key_words = 1;
  uint32_t value_size = 8;
  uint32_t key_size() const { return key_words * 8; }
};

// A run built in memory.
class RunData {
 public:
  RunData() = default;
  explicit RunData(const EntryShape& shape) : shape_(shape) {}

  const EntryShape& shape() const { return shape_; }
  uint64_t count() const { return meta_.size(); }
  bool empty() const { return meta_.empty(); }
  RunView View() const { return {keys_.data(), meta_.data(), values_.data(), count()}; }
  void Reserve(uint64_t entries);
  void Clear();
  // Appends entry `index` of `from` (same shape).
  void Append(const RunView& from, uint64_t index) {
    keys_.insert(keys_.end(), from.keys + index * shape_.key_words,
                 from.keys + (index + 1) * shape_.key_words);
    meta_.push_back(from.meta[index]);
    values_.insert(values_.end(), from.values + index * shape_.value_size,
                   from.values + (index + 1) * shape_.value_size);
  }
  // Appends one entry from raw parts (value may be null: zero bytes).
  void Append(const uint64_t* key, uint64_t meta, const uint8_t* value);
  // Appends all of `other` (same shape).
  void AppendAll(const RunData& other);
  void Swap(RunData& other);

 private:
  EntryShape shape_;
  std::vector<uint64_t> keys_;
  std::vector<uint64_t> meta_;
  std::vector<uint8_t> values_;
};

// Facts of a run that its header records.
struct RunSummary {
  uint64_t entries = 0;
  uint64_t tombstones = 0;
  uint64_t max_seq = 0;
};
RunSummary Summarize(const RunView& run);

// The run's data checksum (layout.h: log::ChecksumTerm / log::ChecksumFinish)
// over arrays laid out as in the pool, summed on `threads` threads.
uint64_t RunDataChecksum(uint64_t table_id, const RunView& run, const EntryShape& shape,
                         int threads = 1);

// Who sets a run's filter words: FinishRun, from the run's keys in the pool;
// the caller, with the arrays (a GPU builds the filter where the keys are,
// the same bits); or FinishRun, every bit set, for a run written as the
// table's oldest (layout.h: gets do not read its filter). FinishRun sums
// the filter's checksum in every case.
enum class RunFilterSource { kFromKeys, kCopied, kAllSet };

// Allocates a run extent, writes header and arrays (one sequential copy) and
// persists them, the filter as `filter` says (kFromKeys or kAllSet): after
// return the run is durable but unreferenced until a manifest names it (an
// unreferenced run is freed at the next open).
// REQUIRES: run.count >= 1, keys ascending and unique.
// PoolFull when no extent is free.
Result<uint64_t> WriteRun(pm::Pool& pool, uint64_t table_id, const EntryShape& shape,
                          const RunView& run, int threads,
                          RunFilterSource filter = RunFilterSource::kFromKeys);

// Copies a run's three arrays into the extent at keys, meta and values (as
// layout.h places them), and with RunFilterSource::kCopied the filter's
// words at filter; an error leaves the run unwritten.
using CopyRunArrays =
    std::function<Status(uint8_t* keys, uint8_t* meta, uint8_t* values, uint8_t* filter)>;

// A run's extent, allocated, its arrays not yet written (AllocateRun), and
// where they go in it.
struct RunExtent {
  uint64_t offset = 0;
  uint64_t count = 0;
  uint8_t* keys = nullptr;
  uint8_t* meta = nullptr;
  uint8_t* values = nullptr;
  uint8_t* filter = nullptr;  // RunFilterWords(count) words, zeroed
};
// Allocates the extent of a run of `count` entries and zeroes what follows
// its values (padding, the filter, the extent's tail); every other byte is
// written by the caller (the arrays) and FinishRun (the header, the filter).
// PoolFull when no extent is free.
Result<RunExtent> AllocateRun(pm::Pool& pool, uint64_t table_id, const EntryShape& shape,
                              uint64_t count);
// Writes the header and the filter (from the keys, unless `filter` is
// kCopied) of the run whose arrays the caller has written into `extent`, on
// `threads` threads, and persists the extent: after return the run is
// durable but unreferenced until a manifest names it. May run on another
// thread than the extent's allocation (it writes only the extent's bytes).
void FinishRun(pm::Pool& pool, uint64_t table_id, const EntryShape& shape, const RunExtent& extent,
               const RunSummary& summary, uint64_t data_checksum, int threads = 1,
               RunFilterSource filter = RunFilterSource::kFromKeys);

// Sets the bits of `count` keys in a zeroed filter of `words` words
// (layout.h), on `threads` threads (the bits are the same in any order).
void AddToFilter(const uint64_t* keys, uint64_t count, uint32_t key_words, uint64_t* filter,
                 uint64_t words, int threads);
// How AddToFilter computes the keys' bits (the same bits every way): one
// key at a time, or 8-byte keys eight at a time in AVX2 or AVX-512 vector
// lanes, the widest the host has (listed narrowest first).
enum class FilterLanes { kOneByOne, kAvx2, kAvx512 };
// Tests: whether the host can run `lanes`, and AddToFilter on one thread
// with them. REQUIRES (TEST_AddToFilterWith): TEST_HostHasFilterLanes(lanes).
bool TEST_HostHasFilterLanes(FilterLanes lanes);
void TEST_AddToFilterWith(FilterLanes lanes, const uint64_t* keys, uint64_t count,
                          uint32_t key_words, uint64_t* filter, uint64_t words);
// The run filter checksum (layout.h) of a filter of `words` words.
uint64_t RunFilterChecksum(uint64_t table_id, const uint64_t* filter, uint64_t words,
                           int threads = 1);
// Writes the filter of the run at `offset` (its keys in the pool) and its
// checksum, and persists them: FinishRun's filter, and repair's rebuild of a
// damaged one.
void WriteRunFilter(pm::Pool& pool, uint64_t table_id, uint64_t offset, uint64_t entries,
                    const EntryShape& shape, int threads);

// WriteRun for a run whose arrays are elsewhere (GPU memory): the caller
// gives the header's facts (summary, data checksum computed over the same
// arrays) and copies the arrays in (and the filter's words, with `filter`
// kCopied); this writes the header, padding and filter and persists the
// extent (AllocateRun, the copy, FinishRun). WriteRun calls it.
Result<uint64_t> WriteRunWith(pm::Pool& pool, uint64_t table_id, const EntryShape& shape,
                              uint64_t count, const RunSummary& summary, uint64_t data_checksum,
                              const CopyRunArrays& copy_arrays, int threads = 1,
                              RunFilterSource filter = RunFilterSource::kFromKeys);

// Frees the extents of replaced runs (after the manifest that drops them is
// published); the first error, after trying all.
Status FreeRuns(pm::Pool& pool, const std::vector<uint64_t>& offsets);

// A run of the pool as a view, its filter included (offsets as validated by
// the reader).
RunView PoolRunView(const pm::Pool& pool, uint64_t offset, uint64_t entries,
                    const EntryShape& shape);

}  // namespace gpkv::lsm
