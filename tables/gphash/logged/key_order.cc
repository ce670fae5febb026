#include "tables/gphash/logged/key_order.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace gpkv::gphash::logged {
namespace {

// One key word and the index of its key: what each radix pass moves.
struct Item {
  uint64_t word;
  uint64_t index;
};

constexpr int kDigitBits = 8;
constexpr uint64_t kDigits = uint64_t{1} << kDigitBits;
// Below this many keys one thread sorts: a team costs more than it saves.
constexpr uint64_t kParallelEntries = uint64_t{1} << 16;

// One stable pass over the digit at `shift`, from `in` to `out`: each thread
// counts its own contiguous share of the items, then places them after the
// items of smaller digits and of the shares before its own (which keeps the
// pass stable). `positions` holds kDigits counters a thread; `starts`
// (kDigits + 1) receives where each digit's items begin in `out`.
void ParallelPass(const Item* in, Item* out, uint64_t count, int shift, int threads,
                  std::vector<uint64_t>& positions, uint64_t* starts) {
  std::fill(positions.begin(), positions.end(), 0);
#pragma omp parallel num_threads(threads)
  {
    const auto thread = static_cast<uint64_t>(omp_get_thread_num());
    const auto team = static_cast<uint64_t>(omp_get_num_threads());
    const uint64_t begin = count * thread / team, end = count * (thread + 1) / team;
    uint64_t* mine = positions.data() + thread * kDigits;
    for (uint64_t i = begin; i < end; ++i) ++mine[(in[i].word >> shift) & (kDigits - 1)];
#pragma omp barrier
#pragma omp single
    {
      // Counts become first positions, digit by digit, share by share.
      uint64_t next = 0;
      for (uint64_t digit = 0; digit < kDigits; ++digit) {
        starts[digit] = next;
        for (uint64_t other = 0; other < team; ++other) {
          const uint64_t here = positions[other * kDigits + digit];
          positions[other * kDigits + digit] = next;
          next += here;
        }
      }
      starts[kDigits] = next;
    }  // the single's barrier: every thread sees the positions
    for (uint64_t i = begin; i < end; ++i) {
      out[mine[(in[i].word >> shift) & (kDigits - 1)]++] = in[i];
    }
  }
}

// One stable pass over the digit at `shift` on this thread.
void Pass(const Item* in, Item* out, uint64_t count, int shift) {
  uint64_t positions[kDigits] = {};
  for (uint64_t i = 0; i < count; ++i) ++positions[(in[i].word >> shift) & (kDigits - 1)];
  uint64_t next = 0;
  for (uint64_t& position : positions) {
    const uint64_t here = position;
    position = next;
    next += here;
  }
  for (uint64_t i = 0; i < count; ++i)
    out[positions[(in[i].word >> shift) & (kDigits - 1)]++] = in[i];
}

// Sorts `items` by their words, stably (`scratch` as large), taking only
// the digits in which the words differ: the most significant of them
// splits the items on the team (MSD), then each part, small enough to stay
// in the cache, is sorted by the lower digits (LSD) on one thread.
void SortByWord(Item* items, Item* scratch, int64_t count, int threads,
                std::vector<uint64_t>& positions) {
  uint64_t all_ones = ~uint64_t{0}, any_ones = 0;
#pragma omp parallel for num_threads(threads) schedule(static) \
    reduction(& : all_ones) reduction(| : any_ones)
  for (int64_t i = 0; i < count; ++i) {
    all_ones &= items[i].word;
    any_ones |= items[i].word;
  }
  const uint64_t varying = all_ones ^ any_ones;
  int shifts[64 / kDigitBits], lower = 0;
  for (int shift = 0; shift < 64; shift += kDigitBits) {
    if (((varying >> shift) & (kDigits - 1)) != 0) shifts[lower++] = shift;
  }
  if (lower == 0) return;  // every word the same: in order
  const int top_shift = shifts[--lower];
  uint64_t starts[kDigits + 1];
  ParallelPass(items, scratch, static_cast<uint64_t>(count), top_shift, threads, positions, starts);
  // Each part from scratch back into items, through as many passes.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t digit = 0; digit < static_cast<int64_t>(kDigits); ++digit) {
    const uint64_t begin = starts[digit], part = starts[digit + 1] - begin;
    Item* from = scratch + begin;
    Item* to = items + begin;
    for (int pass = 0; pass < lower && part > 1; ++pass) {
      Pass(from, to, part, shifts[pass]);
      std::swap(from, to);
    }
    if (from != items + begin) std::copy(from, from + part, items + begin);
  }
}

}  // namespace

std::unique_ptr<uint64_t[]> KeyOrder(const uint8_t* keys, uint64_t entries, uint32_t key_size,
                                     int threads) {
  const uint32_t key_words = key_size / 8;
  threads = entries >= kParallelEntries ? std::max(1, threads) : 1;
  // Left uninitialised: each page is first touched by the thread that
  // fills it.
  std::unique_ptr<Item[]> items(new Item[entries]), scratch(new Item[entries]);
  std::vector<uint64_t> positions(static_cast<uint64_t>(threads) * kDigits);
  // Least significant word first: each word's stable sort keeps the order
  // the less significant words gave to keys equal in it.
  for (uint32_t word = 0; word < key_words; ++word) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (uint64_t i = 0; i < entries; ++i) {
      const uint64_t index = word == 0 ? i : items[i].index;
      std::memcpy(&items[i].word, keys + index * key_size + word * 8, sizeof(uint64_t));
      items[i].index = index;
    }
    SortByWord(items.get(), scratch.get(), static_cast<int64_t>(entries), threads, positions);
  }
  std::unique_ptr<uint64_t[]> order(new uint64_t[entries]);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (uint64_t i = 0; i < entries; ++i) order[i] = items[i].index;
  return order;
}

}  // namespace gpkv::gphash::logged
