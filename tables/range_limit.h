// tables::RangeLimit: which pairs of each range query a family's Range
// returns. Public Range calls ask for the smallest keys of each range
// (BatchOptions::range_limit); the ordered iterator (ordered_iterator.h)
// also asks for the largest, to page backwards. The pairs come back in
// ascending key order either way.
//
// Who may use: the ordered families' fronts, cores and backends.
#pragma once

#include <cstdint>
#include <limits>

namespace gpkv::tables {

struct RangeLimit {
  // At most this many pairs per query.
  uint64_t pairs = std::numeric_limits<uint64_t>::max();
  // false: the smallest keys of the range; true: the largest.
  bool largest = false;
};

}  // namespace gpkv::tables
