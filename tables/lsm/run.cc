#include "tables/lsm/run.h"

#include <algorithm>
#include <cstring>

#include "format/checksum.h"
#include "format/pool_layout.h"
#include "pm/extent_allocator.h"

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

uint64_t RunDataChecksum(uint64_t table_id, const RunView& run, const EntryShape& shape) {
  WordsChecksumState state = WordsChecksumBegin(table_id);
  WordsChecksumAdd(state, run.keys, run.count * shape.key_words);
  WordsChecksumAdd(state, run.meta, run.count);
  const uint64_t value_bytes = run.count * shape.value_size;
  const uint64_t whole_words = value_bytes / 8;
  if (reinterpret_cast<uintptr_t>(run.values) % 8 == 0) {
    WordsChecksumAdd(state, reinterpret_cast<const uint64_t*>(run.values), whole_words);
  } else {
    for (uint64_t i = 0; i < whole_words; ++i) {
      uint64_t word;
      std::memcpy(&word, run.values + i * 8, 8);
      WordsChecksumAdd(state, &word, 1);
    }
  }
  if (value_bytes % 8 != 0) {
    uint64_t tail = 0;
    std::memcpy(&tail, run.values + whole_words * 8, value_bytes % 8);
    WordsChecksumAdd(state, &tail, 1);
  }
  return WordsChecksumEnd(state);
}

Result<uint64_t> WriteRun(pm::Pool& pool, uint64_t table_id, const EntryShape& shape,
                          const RunView& run, int threads) {
  const uint32_t key_size = shape.key_size();
  const uint64_t bytes = RunBytes(run.count, key_size, shape.value_size);
  // Not zeroed first: every byte of the extent is written below (arrays,
  // header, padding) and persisted before a manifest can name the run.
  auto offset = pool.allocator().AllocateUninitialized(bytes, format::kExtentKindOther, table_id);
  if (!offset.ok()) return offset.status();
  uint8_t* base = pool.At<uint8_t>(*offset);
  const uint64_t extent_bytes = format::AlignUp(bytes, format::kExtentAlignment);
  const uint64_t values_end = RunValuesOffset(run.count, key_size) + run.count * shape.value_size;
  std::memset(base + values_end, 0, extent_bytes - values_end);
  uint8_t* keys = base + RunKeysOffset();
  uint8_t* meta = base + RunMetaOffset(run.count, key_size);
  uint8_t* values = base + RunValuesOffset(run.count, key_size);
  // The bulk copy, in slices per thread (the extent is fresh and unreferenced:
  // no reader sees these bytes until a manifest names the run).
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
  RunSummary summary = Summarize(run);
  RunHeader header{};
  header.magic = kRunMagic;
  header.table_id = table_id;
  header.entries = run.count;
  header.key_size = key_size;
  header.value_size = shape.value_size;
  header.max_seq = summary.max_seq;
  header.tombstones = summary.tombstones;
  header.data_checksum = RunDataChecksum(table_id, run, shape);
  header.checksum = format::Checksum64(&header, offsetof(RunHeader, checksum));
  std::memcpy(base, &header, sizeof(header));
  pool.Persist(base, extent_bytes);
  return *offset;
}

RunView PoolRunView(const pm::Pool& pool, uint64_t offset, uint64_t entries,
                    const EntryShape& shape) {
  const uint8_t* base = pool.At<uint8_t>(offset);
  RunView view;
  view.keys = reinterpret_cast<const uint64_t*>(base + RunKeysOffset());
  view.meta = reinterpret_cast<const uint64_t*>(base + RunMetaOffset(entries, shape.key_size()));
  view.values = base + RunValuesOffset(entries, shape.key_size());
  view.count = entries;
  return view;
}

}  // namespace gpkv::lsm
