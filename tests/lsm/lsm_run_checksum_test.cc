// The run data checksum (tables/log/layout.h: log::ChecksumTerm / log::ChecksumFinish): the
// formula of docs/FORMAT.md, the same on any number of threads, and
// sensitive to a changed word, to two swapped words and to the length.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"

namespace gpkv {
namespace {

// A run of n entries with K-byte keys and V-byte values in one buffer laid
// out as in the pool (after the header).
struct TestRun {
  std::vector<uint64_t> words;
  lsm::RunView view;
  lsm::EntryShape shape;

  TestRun(uint64_t n, uint32_t key_words, uint32_t value_size, uint64_t seed) {
    shape = {key_words, value_size};
    words.assign(lsm::RunDataWords(n, key_words * 8, value_size), 0);
    std::mt19937_64 random(seed);
    const uint64_t value_bytes = n * value_size;
    for (uint64_t i = 0; i < n * key_words + n; ++i) words[i] = random();
    auto* values = reinterpret_cast<uint8_t*>(words.data() + n * key_words + n);
    for (uint64_t b = 0; b < value_bytes; ++b) values[b] = static_cast<uint8_t>(random());
    view.keys = words.data();
    view.meta = words.data() + n * key_words;
    view.values = values;
    view.count = n;
  }
};

// The checksum straight from docs/FORMAT.md, one word at a time.
uint64_t Reference(uint64_t seed, const std::vector<uint64_t>& words) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < words.size(); ++i) {
    uint64_t h = words[i] ^ (seed + i * 0x9e3779b185ebca87ULL);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    sum += h;
  }
  uint64_t h = seed ^ words.size();
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h + sum;
}

TEST(LsmRunChecksum, IsTheDocumentedFormulaOnAnyNumberOfThreads) {
  for (uint32_t key_words : {1u, 2u, 4u}) {
    for (uint32_t value_size : {1u, 5u, 8u, 24u, 128u}) {
      for (uint64_t n : {uint64_t{1}, uint64_t{3}, uint64_t{70000}}) {
        TestRun run(n, key_words, value_size, n * 31 + value_size);
        const uint64_t expected = Reference(7, run.words);
        EXPECT_EQ(lsm::RunDataChecksum(7, run.view, run.shape, 1), expected)
            << key_words << " " << value_size << " " << n;
        EXPECT_EQ(lsm::RunDataChecksum(7, run.view, run.shape, 4), expected)
            << key_words << " " << value_size << " " << n;
      }
    }
  }
}

TEST(LsmRunChecksum, AChangedWordSwappedWordsAndTheSeedAllChangeIt) {
  TestRun run(1000, 2, 8, 3);
  const uint64_t original = lsm::RunDataChecksum(11, run.view, run.shape, 2);
  EXPECT_NE(lsm::RunDataChecksum(12, run.view, run.shape, 2), original);
  run.words[17] ^= 1;
  EXPECT_NE(lsm::RunDataChecksum(11, run.view, run.shape, 2), original);
  run.words[17] ^= 1;
  EXPECT_EQ(lsm::RunDataChecksum(11, run.view, run.shape, 2), original);
  std::swap(run.words[5], run.words[900]);
  EXPECT_NE(lsm::RunDataChecksum(11, run.view, run.shape, 2), original);
  std::swap(run.words[5], run.words[900]);
  // A byte of the last value word.
  run.words.back() ^= 0x80;
  EXPECT_NE(lsm::RunDataChecksum(11, run.view, run.shape, 2), original);
}

}  // namespace
}  // namespace gpkv
