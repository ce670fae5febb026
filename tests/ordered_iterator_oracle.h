// The ordered reads at scale checked against a std::map: Table::NewIterator
// (Seek, SeekForPrev, SeekToFirst, SeekToLast, Next, Prev, bounds, page
// sizes down to one pair) and Range with BatchOptions::range_limit, on an
// ordered table of 8-, 16- or 32-byte keys through rounds of puts,
// overwrites and erases (for a persistent table across flushes into levels,
// compactions and reopens; for a volatile one, reads through snapshots too).
// Run on the CPU backend by tables/ordered_iterator_test.cc and on the GPU
// backend by lsm/gpu/lsm_gpu_iterator_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/db.h"
#include "test_util.h"

namespace gpkv::itertest {

using Key = std::vector<uint8_t>;

// Keys as the tables order them: unsigned little-endian integers (the last
// byte the most significant).
struct KeyLess {
  bool operator()(const Key& a, const Key& b) const {
    for (size_t i = a.size(); i-- > 0;) {
      if (a[i] != b[i]) return a[i] < b[i];
    }
    return false;
  }
};

using Oracle = std::map<Key, uint64_t, KeyLess>;
using Pairs = std::vector<std::pair<Key, uint64_t>>;

// Key number k of a table of key_size bytes. Its order is k's, decided by
// the most significant word (k / 7) and then by the least (k % 7): the
// table compares across words. Words between them are a constant.
inline Key KeyOf(uint64_t k, uint32_t key_size) {
  Key key(key_size, 0x55);
  const uint64_t high = key_size == 8 ? k : k / 7;
  std::memcpy(&key[key_size - 8], &high, 8);
  if (key_size > 8) {
    const uint64_t low = (k % 7) * 0x1111111111111111ull;
    std::memcpy(&key[0], &low, 8);
  }
  return key;
}

inline uint64_t ValueOf(ConstBytes value) {
  uint64_t v = 0;
  std::memcpy(&v, value.data(), 8);
  return v;
}

// The oracle's pairs in [lower, upper) (unbounded on an empty side), in key
// order.
inline Pairs Within(const Oracle& oracle, const Key& lower, const Key& upper) {
  Pairs pairs;
  auto it = lower.empty() ? oracle.begin() : oracle.lower_bound(lower);
  for (; it != oracle.end() && (upper.empty() || KeyLess()(it->first, upper)); ++it) {
    pairs.push_back(*it);
  }
  return pairs;
}

// Checks that `it` is at pairs[index] (index == pairs.size() or -1: not
// Valid, status OK).
inline void ExpectAt(const Iterator& it, const Pairs& pairs, int64_t index, const char* step) {
  ASSERT_TRUE(it.status().ok()) << step << ": " << it.status().ToString();
  if (index < 0 || index >= static_cast<int64_t>(pairs.size())) {
    ASSERT_FALSE(it.Valid()) << step << ": expected the end";
    return;
  }
  ASSERT_TRUE(it.Valid()) << step << ": expected pair " << index << " of " << pairs.size();
  const Key key(it.key().bytes(), it.key().bytes() + it.key().size());
  ASSERT_EQ(key, pairs[index].first) << step << " at " << index;
  ASSERT_EQ(ValueOf(it.value()), pairs[index].second) << step << " at " << index;
}

// The index of the first pair >= key (pairs.size() when none).
inline int64_t FirstAtOrAfter(const Pairs& pairs, const Key& key) {
  int64_t index = 0;
  while (index < static_cast<int64_t>(pairs.size()) && KeyLess()(pairs[index].first, key)) ++index;
  return index;
}

// The index of the last pair <= key (-1 when none).
inline int64_t LastAtOrBefore(const Pairs& pairs, const Key& key) {
  int64_t index = static_cast<int64_t>(pairs.size()) - 1;
  while (index >= 0 && KeyLess()(key, pairs[index].first)) --index;
  return index;
}

// Every move of an iterator over `table` (through `snapshot` when not null)
// against `oracle`: whole walks both ways, seeks to random keys followed by
// random steps, with random bounds and page sizes.
inline void CheckIterators(Table& table, const Oracle& oracle, uint32_t key_size,
                           uint64_t key_space, std::mt19937_64& random,
                           const Snapshot* snapshot = nullptr) {
  auto random_key = [&]() -> Key {
    switch (random() % 8) {
      case 0:
        return Key(key_size, 0x00);  // before every key
      case 1:
        return Key(key_size, 0xff);  // after every key
      default:
        return KeyOf(random() % (key_space + 2), key_size);
    }
  };
  {  // The whole table by one unlimited Range: the oracle's pairs.
    const Key lowest(key_size, 0x00), highest(key_size, 0xff);
    Table::RangeResults all;
    BatchOptions batch;
    batch.snapshot = snapshot;
    ASSERT_TRUE(table.Range(lowest, highest, &all, batch).ok());
    Pairs got;
    for (uint64_t j = 0; j < all.offsets[1]; ++j) {
      got.emplace_back(Key(&all.keys[j * key_size], &all.keys[(j + 1) * key_size]),
                       ValueOf(ConstBytes(&all.values[j * 8], 8)));
    }
    ASSERT_EQ(got, Pairs(oracle.begin(), oracle.end())) << "an unlimited Range";
  }
  for (int trial = 0; trial < 12; ++trial) {
    IteratorOptions options;
    options.snapshot = snapshot;
    const size_t page_sizes[] = {1, 2, 3, 7, 64, 1024};
    options.page_size = page_sizes[random() % 6];
    if (trial >= 2) {  // the first two trials: no bounds
      if (random() % 3 != 0) options.lower_bound = random_key();
      if (random() % 3 != 0) options.upper_bound = random_key();
    }
    const Pairs pairs = Within(oracle, options.lower_bound, options.upper_bound);
    auto made = table.NewIterator(options);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Iterator& it = **made;
    ASSERT_FALSE(it.Valid());

    // Whole walks: forward, then backward from the last pair.
    it.SeekToFirst();
    for (int64_t i = 0; i <= static_cast<int64_t>(pairs.size()); ++i) {
      ASSERT_NO_FATAL_FAILURE(ExpectAt(it, pairs, i, "SeekToFirst/Next"));
      if (it.Valid()) it.Next();
    }
    it.SeekToLast();
    for (int64_t i = static_cast<int64_t>(pairs.size()) - 1; i >= -1; --i) {
      ASSERT_NO_FATAL_FAILURE(ExpectAt(it, pairs, i, "SeekToLast/Prev"));
      if (it.Valid()) it.Prev();
    }

    // Seeks, each followed by a random walk of Next and Prev.
    for (int seek = 0; seek < 20; ++seek) {
      const Key target = random_key();
      int64_t index;
      if (random() % 2 == 0) {
        it.Seek(target);
        index = FirstAtOrAfter(pairs, target);
        ASSERT_NO_FATAL_FAILURE(ExpectAt(it, pairs, index, "Seek"));
      } else {
        it.SeekForPrev(target);
        index = LastAtOrBefore(pairs, target);
        ASSERT_NO_FATAL_FAILURE(ExpectAt(it, pairs, index, "SeekForPrev"));
      }
      const int steps = static_cast<int>(random() % 40);
      for (int step = 0; step < steps && it.Valid(); ++step) {
        if (random() % 3 == 0) {
          it.Prev();
          --index;
          ASSERT_NO_FATAL_FAILURE(ExpectAt(it, pairs, index, "Prev"));
        } else {
          it.Next();
          ++index;
          ASSERT_NO_FATAL_FAILURE(ExpectAt(it, pairs, index, "Next"));
        }
      }
    }
  }
}

// Range with BatchOptions::range_limit: of each query the smallest `limit`
// keys of its range.
inline void CheckLimitedRanges(Table& table, const Oracle& oracle, uint32_t key_size,
                               uint64_t key_space, std::mt19937_64& random,
                               const Snapshot* snapshot = nullptr) {
  const uint64_t limits[] = {0, 1, 2, 5, 100, ~uint64_t{0}};
  for (uint64_t limit : limits) {
    const size_t n = 1 + random() % 40;
    std::vector<uint8_t> lo, hi;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t low = random() % (key_space + 2);
      // One query in eight has lo > hi: no pairs.
      const uint64_t high = random() % 8 == 0 ? low - 1 : low + random() % (key_space / 4 + 1);
      const Key lo_key = KeyOf(low, key_size), hi_key = KeyOf(high, key_size);
      lo.insert(lo.end(), lo_key.begin(), lo_key.end());
      hi.insert(hi.end(), hi_key.begin(), hi_key.end());
    }
    BatchOptions options;
    options.range_limit = limit;
    options.snapshot = snapshot;
    Table::RangeResults results;
    Status status = table.Range(lo, hi, &results, options);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_EQ(results.offsets.size(), n + 1);
    for (size_t i = 0; i < n; ++i) {
      const Key lo_key(lo.begin() + i * key_size, lo.begin() + (i + 1) * key_size);
      const Key hi_key(hi.begin() + i * key_size, hi.begin() + (i + 1) * key_size);
      Pairs expected;
      if (!KeyLess()(hi_key, lo_key)) {
        for (auto it = oracle.lower_bound(lo_key);
             it != oracle.end() && !KeyLess()(hi_key, it->first) && expected.size() < limit; ++it) {
          expected.push_back(*it);
        }
      }
      Pairs got;
      for (uint64_t j = results.offsets[i]; j < results.offsets[i + 1]; ++j) {
        got.emplace_back(Key(&results.keys[j * key_size], &results.keys[(j + 1) * key_size]),
                         ValueOf(ConstBytes(&results.values[j * 8], 8)));
      }
      ASSERT_EQ(got, expected) << "limit " << limit << " query " << i;
    }
  }
}

// Rounds of put, overwrite and erase batches on an ordered table of
// `durability` and key_size-byte keys in a fresh pool on `backend`, each
// round followed by the iterator and limited-range checks; a persistent
// table is compacted and reopened now and then, a volatile one is also read
// through a snapshot taken a round earlier.
inline void RunIteratorOracle(Backend backend, Durability durability, uint32_t key_size) {
  testutil::TempPool temp("iter-oracle-" + std::to_string(static_cast<int>(backend)) + "-" +
                          std::to_string(static_cast<int>(durability)) + "-" +
                          std::to_string(key_size));
  const Options db_options = testutil::DbOptions(uint64_t{64} << 20, 2, backend);
  auto db = DB::Open(temp.path(), db_options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions table_options;
  table_options.kind = TableKind::kOrdered;
  table_options.durability = durability;
  table_options.key_size = key_size;
  table_options.value_size = 8;
  if (durability == Durability::kPersistent) {
    table_options.ordered.batch_entries = 64;  // small: batches flush into levels
  }
  auto created = (*db)->CreateTable("o", table_options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Table* table = *created;

  std::mt19937_64 random(77 + key_size);
  constexpr uint64_t kKeySpace = 3000;
  Oracle oracle;
  // An empty table: every seek finds nothing, every range is empty.
  ASSERT_NO_FATAL_FAILURE(CheckIterators(*table, oracle, key_size, kKeySpace, random));
  ASSERT_NO_FATAL_FAILURE(CheckLimitedRanges(*table, oracle, key_size, kKeySpace, random));

  std::unique_ptr<Snapshot> snapshot;
  Oracle snapshot_oracle;
  for (uint64_t round = 1; round <= 24; ++round) {
    const size_t n = 1 + random() % 400;
    std::vector<uint8_t> keys;
    std::vector<Key> batch;
    for (size_t i = 0; i < n; ++i) {
      batch.push_back(KeyOf(random() % kKeySpace, key_size));
      keys.insert(keys.end(), batch.back().begin(), batch.back().end());
    }
    if (round % 4 == 3) {
      ASSERT_TRUE(table->Erase(keys).ok());
      for (const Key& key : batch) oracle.erase(key);
    } else {
      std::vector<uint64_t> values(n);
      for (size_t i = 0; i < n; ++i) {
        values[i] = (round << 20) | i;
        oracle[batch[i]] = values[i];  // the last occurrence wins
      }
      ASSERT_TRUE(table->Put(keys, values).ok());
    }
    if (durability == Durability::kPersistent && round % 8 == 5) {
      ASSERT_TRUE(table->Compact().ok());
    }
    if (durability == Durability::kPersistent && round % 6 == 0) {
      db->reset();
      auto reopened = DB::Open(temp.path(), db_options);
      ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
      *db = std::move(*reopened);
      auto opened = (*db)->OpenTable("o");
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      table = *opened;
    }
    ASSERT_NO_FATAL_FAILURE(CheckIterators(*table, oracle, key_size, kKeySpace, random));
    ASSERT_NO_FATAL_FAILURE(CheckLimitedRanges(*table, oracle, key_size, kKeySpace, random));
    if (durability == Durability::kVolatile) {
      if (snapshot != nullptr) {
        ASSERT_NO_FATAL_FAILURE(
            CheckIterators(*table, snapshot_oracle, key_size, kKeySpace, random, snapshot.get()));
        ASSERT_NO_FATAL_FAILURE(CheckLimitedRanges(*table, snapshot_oracle, key_size, kKeySpace,
                                                   random, snapshot.get()));
      }
      auto taken = table->TakeSnapshot();
      ASSERT_TRUE(taken.ok()) << taken.status().ToString();
      snapshot = std::move(*taken);
      snapshot_oracle = oracle;
    }
  }
  if (durability == Durability::kPersistent) {
    auto stats = table->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_GE(*stats->Property("lsm.levels"), 2.0);  // the pages crossed levels
  }
}

}  // namespace gpkv::itertest
