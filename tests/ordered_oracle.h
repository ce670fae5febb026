// The batch steps an ordered table's oracle test runs against a std::map of
// 8-byte keys and values: a put batch recorded in the oracle, and erase, get,
// count and range, successor and predecessor batches checked against it.
// Each step ASSERTs; call it under ASSERT_NO_FATAL_FAILURE. Used by the LSM
// family's oracle (lsm/lsm_oracle.h) and the B-tree family's
// (btree/btree_oracle_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "gpkv/table.h"

namespace gpkv::testutil {

using OrderedOracle = std::map<uint64_t, uint64_t>;
using Pairs = std::vector<std::pair<uint64_t, uint64_t>>;

// The pairs of [lo, hi] in `oracle`.
inline Pairs OracleRange(const OrderedOracle& oracle, uint64_t lo, uint64_t hi) {
  Pairs pairs;
  if (lo > hi) return pairs;
  for (auto it = oracle.lower_bound(lo); it != oracle.end() && it->first <= hi; ++it) {
    pairs.push_back(*it);
  }
  return pairs;
}

// Query i's pairs of a Range result over 8-byte keys and values.
inline Pairs RangePairs(const Table::RangeResults& results, size_t i) {
  Pairs pairs;
  for (uint64_t j = results.offsets[i]; j < results.offsets[i + 1]; ++j) {
    uint64_t key, value;
    std::memcpy(&key, &results.keys[j * 8], 8);
    std::memcpy(&value, &results.values[j * 8], 8);
    pairs.emplace_back(key, value);
  }
  return pairs;
}

// Puts `keys`, key i with the value (round << 20) | i, and records them.
inline void PutBatch(Table& table, const std::vector<uint64_t>& keys, uint64_t round,
                     OrderedOracle& oracle) {
  std::vector<uint64_t> values(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    values[i] = (round << 20) | i;
    oracle[keys[i]] = values[i];
  }
  ASSERT_TRUE(table.Put(keys, values).ok());
}

// Erases `keys`: each is reported erased when the oracle held it.
inline void EraseBatch(Table& table, const std::vector<uint64_t>& keys, uint64_t round,
                       OrderedOracle& oracle) {
  std::vector<uint8_t> erased(keys.size());
  ASSERT_TRUE(table.Erase(keys, erased).ok());
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(erased[i], oracle.erase(keys[i])) << "round " << round << " op " << i;
  }
}

// Gets `keys`: found as in the oracle, with its value (0 when not found).
inline void GetBatch(Table& table, const std::vector<uint64_t>& keys, uint64_t round,
                     const OrderedOracle& oracle) {
  std::vector<uint64_t> values(keys.size());
  std::vector<uint8_t> found(keys.size());
  ASSERT_TRUE(table.Get(keys, values, found).ok());
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = oracle.find(keys[i]);
    ASSERT_EQ(found[i], it != oracle.end()) << "round " << round << " key " << keys[i];
    ASSERT_EQ(values[i], found[i] ? it->second : 0);
  }
}

// Counts and ranges [lo[i], hi[i]]: the oracle's pairs of each.
inline void CountAndRangeBatch(Table& table, const std::vector<uint64_t>& lo,
                               const std::vector<uint64_t>& hi, uint64_t round,
                               const OrderedOracle& oracle) {
  const size_t n = lo.size();
  std::vector<uint64_t> counts(n);
  ASSERT_TRUE(table.Count(lo, hi, counts).ok());
  Table::RangeResults results;
  ASSERT_TRUE(table.Range(lo, hi, &results).ok());
  ASSERT_EQ(results.offsets.size(), n + 1);
  for (size_t i = 0; i < n; ++i) {
    const Pairs expected = OracleRange(oracle, lo[i], hi[i]);
    ASSERT_EQ(counts[i], expected.size()) << "round " << round << " count " << i;
    ASSERT_EQ(RangePairs(results, i), expected) << "round " << round << " range " << i;
  }
}

// The successor (or, unless `successor`, the predecessor) of each key: the
// oracle's. With zero_when_not_found, a key with none gets a zero key and
// value too.
inline void NeighbourBatch(Table& table, const std::vector<uint64_t>& keys, bool successor,
                           bool zero_when_not_found, const OrderedOracle& oracle) {
  const size_t n = keys.size();
  std::vector<uint64_t> next(n), values(n);
  std::vector<uint8_t> found(n);
  ASSERT_TRUE(successor ? table.Successor(keys, next, values, found).ok()
                        : table.Predecessor(keys, next, values, found).ok());
  for (size_t i = 0; i < n; ++i) {
    auto it = oracle.lower_bound(keys[i]);
    if (!successor) {
      it = oracle.upper_bound(keys[i]);
      it = it == oracle.begin() ? oracle.end() : std::prev(it);
    }
    ASSERT_EQ(found[i], it != oracle.end()) << (successor ? "successor" : "predecessor");
    if (found[i] || zero_when_not_found) {
      ASSERT_EQ(next[i], found[i] ? it->first : 0);
      ASSERT_EQ(values[i], found[i] ? it->second : 0);
    }
  }
}

}  // namespace gpkv::testutil
