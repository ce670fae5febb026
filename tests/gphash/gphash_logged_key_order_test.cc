// The key order of a logged table's checkpoint image (key_order.h): the
// radix sort's order matches a comparison sort by layout.h CompareKeys, and
// equal keys keep their order, for 8, 16 and 32-byte keys, random, dense
// and skewed, on one thread and on several.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "tables/gphash/logged/key_order.h"
#include "tables/gphash/logged/layout.h"

namespace gpkv::gphash::logged {
namespace {

// The order a stable comparison sort by CompareKeys gives.
std::vector<uint64_t> ComparisonOrder(const std::vector<uint64_t>& words, uint32_t key_words) {
  std::vector<uint64_t> order(words.size() / key_words);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
    return CompareKeys(&words[a * key_words], &words[b * key_words], key_words) < 0;
  });
  return order;
}

enum class Keys { kRandom, kDense, kFewValues };

std::vector<uint64_t> MakeKeys(Keys kind, uint64_t entries, uint32_t key_words, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<uint64_t> words(entries * key_words);
  for (uint64_t i = 0; i < entries; ++i) {
    for (uint32_t word = 0; word < key_words; ++word) {
      uint64_t& out = words[i * key_words + word];
      switch (kind) {
        case Keys::kRandom:
          out = random();
          break;
        case Keys::kDense:  // a shuffled range: most digits the same
          out = word == 0 ? i : 7;
          break;
        case Keys::kFewValues:  // many equal keys: stability shows
          out = (random() % 5) << (8 * (word % 8));
          break;
      }
    }
  }
  if (kind == Keys::kDense) {
    std::vector<uint64_t> shuffled(entries);
    std::iota(shuffled.begin(), shuffled.end(), 0);
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    std::vector<uint64_t> out(words.size());
    for (uint64_t i = 0; i < entries; ++i) {
      std::memcpy(&out[i * key_words], &words[shuffled[i] * key_words], key_words * 8);
    }
    words = std::move(out);
  }
  return words;
}

TEST(GphashLoggedKeyOrder, MatchesAStableComparisonSort) {
  for (uint32_t key_size : {8u, 16u, 32u}) {
    for (Keys kind : {Keys::kRandom, Keys::kDense, Keys::kFewValues}) {
      // Below and above the size from which the sort runs on a team.
      for (uint64_t entries : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{100000}}) {
        for (int threads : {1, 3}) {
          const uint32_t key_words = key_size / 8;
          const std::vector<uint64_t> words =
              MakeKeys(kind, entries, key_words, entries + key_size);
          const std::unique_ptr<uint64_t[]> order =
              KeyOrder(reinterpret_cast<const uint8_t*>(words.data()), entries, key_size, threads);
          ASSERT_EQ(std::vector<uint64_t>(order.get(), order.get() + entries),
                    ComparisonOrder(words, key_words))
              << "key size " << key_size << ", kind " << static_cast<int>(kind) << ", " << entries
              << " keys, " << threads << " threads";
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpkv::gphash::logged
