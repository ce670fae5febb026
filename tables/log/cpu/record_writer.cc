#include "tables/log/cpu/record_writer.h"

#include <algorithm>
#include <cstring>

#include "tables/log/checksum.h"
#include "tables/log/record.h"

namespace gpkv::log::cpu {

RecordHeader WriteRecordArrays(pm::Pool& pool, uint64_t record_offset, uint64_t epoch, uint64_t seq,
                               const RecordEntries& entries, uint32_t key_size, uint32_t value_size,
                               int threads) {
  threads = std::max(1, threads);
  const bool tombstones = entries.values == nullptr;
  RecordHeader header = ColumnarRecordHeader(seq, entries.count, tombstones);
  const uint64_t seed = RecordSeed(epoch, header);
  uint64_t words = entries.count * key_size / 8;
  uint64_t sum = SumTerms(seed, 0, entries.keys, words, threads);
  if (!tombstones) {
    sum += SumPaddedTerms(seed, &words, entries.values, entries.count * value_size, threads);
  }
  header.checksum = ChecksumFinish(seed, words, sum);
  const RecordArrays arrays = ColumnarRecordArrays(pool, record_offset, header, key_size);
  std::memcpy(arrays.keys, entries.keys, entries.count * key_size);
  if (arrays.values != nullptr) {
    std::memcpy(arrays.values, entries.values, entries.count * value_size);
  }
  return header;
}

}  // namespace gpkv::log::cpu
