#include "tables/log/checksum.h"

#include <algorithm>
#include <cstring>

#include "tables/log/layout.h"

namespace gpkv::log {

uint64_t SumTerms(uint64_t seed, uint64_t first, const void* words, uint64_t count, int threads) {
  const auto* bytes = static_cast<const uint8_t*>(words);
  uint64_t sum = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : sum) if (count >= (uint64_t{1} << 16) && threads > 1)
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t word;
    std::memcpy(&word, bytes + i * 8, 8);
    sum += ChecksumTerm(seed, first + i, word);
  }
  return sum;
}

uint64_t SumPaddedTerms(uint64_t seed, uint64_t* words, const uint8_t* data, uint64_t bytes,
                        int threads) {
  uint64_t sum = SumTerms(seed, *words, data, bytes / 8, threads);
  *words += bytes / 8;
  if (bytes % 8 != 0) {
    uint64_t tail = 0;
    std::memcpy(&tail, data + bytes / 8 * 8, bytes % 8);
    sum += ChecksumTerm(seed, (*words)++, tail);
  }
  return sum;
}

uint64_t PositionChecksum(uint64_t seed, const void* words, uint64_t count, int threads) {
  return ChecksumFinish(seed, count, SumTerms(seed, 0, words, count, std::max(1, threads)));
}

}  // namespace gpkv::log
