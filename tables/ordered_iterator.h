// tables::NewOrderedIterator: the one gpkv::Iterator of every ordered
// family and backend. It holds a page of pairs (one Range call of at most
// IteratorOptions::page_size pairs) and moves within it; stepping off
// either end reads the neighbouring page: the smallest keys after the
// page's last key, or the largest before its first (tables::RangeLimit).
// The family's front supplies the page reads (OrderedFamilyTable).
//
// Who may call: the ordered families' fronts.
// Thread safety: as gpkv::Iterator (one thread at a time); the page reads
// run beside the table's other calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "gpkv/iterator.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/range_limit.h"

namespace gpkv::tables {

// Reads one page: the live pairs of [lo, hi] (key_size bytes each,
// lo <= hi) that `limit` selects, into *page as one Range query's results.
using ReadPage = std::function<Status(const uint8_t* lo, const uint8_t* hi, RangeLimit limit,
                                      Table::RangeResults* page)>;

// An iterator over a table of key_size and value_size bytes.
// REQUIRES: the bounds of `options` are empty or key_size bytes;
//           options.page_size >= 1 (the engine checks both).
std::unique_ptr<Iterator> NewOrderedIterator(uint32_t key_size, uint32_t value_size,
                                             const IteratorOptions& options, ReadPage read_page);

}  // namespace gpkv::tables
