// tables::OrderedFamilyTable<Queries, kSnapshots, Writer>: an ordered
// family's front (tables/<family>/table.h) over the family's core. The writes
// (Put, Erase, Write, Compact) go to the core (Writer: its Put, Erase, Write
// of a resolved batch, Compact); the ordered reads to the object that
// answers them (the LSM's backend, the B-tree's core): Get, Count, Range,
// RangeOnDevice, Successor and Predecessor go to its call of the same name
// with the batch's pointers and count (and Range's a tables::RangeLimit
// after the count), plus, when kSnapshots, the batch's snapshot
// (BatchOptions::snapshot) as the last argument. NewIterator makes the one
// ordered iterator (ordered_iterator.h) over the same Range call. A front
// derives from it, returns those objects from writer() and queries(), and
// adds Stats and Scan.
//
// Who may derive: the ordered families' fronts.
// Thread safety: as gpkv::Table promises; the queries object handles
// concurrent batches.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "gpkv/batch.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "tables/family_table.h"
#include "tables/ordered_iterator.h"
#include "tables/range_limit.h"

namespace gpkv::tables {

template <typename Queries, bool kSnapshots, typename Writer>
class OrderedFamilyTable : public FamilyTable {
 public:
  // Whole-batch atomic (the family's core says how).
  Status Put(ConstBytes keys, ConstBytes values, const BatchOptions&) final {
    return writer().Put(keys.bytes(), values.bytes(), CountOf(keys));
  }
  Status Erase(ConstBytes keys, MutableBytes erased, const BatchOptions&) final {
    return writer().Erase(keys.bytes(), OrNull(erased), CountOf(keys));
  }
  Status Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
               const BatchOptions&) final {
    return ResolveAndWrite(keys, values, ops, erased,
                           [&](const ResolvedWrite& batch, uint8_t* probe_found) {
                             return writer().Write(batch, probe_found);
                           });
  }
  Status Compact() final { return writer().Compact(); }

  Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
             const BatchOptions& options) final {
    uint8_t* found_bytes = OrNull(found);
    return Query(options, [&](auto... snapshot) {
      return queries().Get(keys.bytes(), values.bytes(), found_bytes, CountOf(keys), snapshot...);
    });
  }
  Status Count(ConstBytes lo, ConstBytes hi, MutableBytes counts,
               const BatchOptions& options) final {
    auto* out = static_cast<uint64_t*>(counts.data());
    return Query(options, [&](auto... snapshot) {
      return queries().Count(lo.bytes(), hi.bytes(), out, CountOf(lo), snapshot...);
    });
  }
  Status Range(ConstBytes lo, ConstBytes hi, RangeResults* results,
               const BatchOptions& options) final {
    const RangeLimit limit{options.range_limit, /*largest=*/false};
    return Query(options, [&](auto... snapshot) {
      return queries().Range(lo.bytes(), hi.bytes(), results, CountOf(lo), limit, snapshot...);
    });
  }
  // Unsupported with the table's own message where the queries object keeps
  // no results in GPU memory (a CPU backend).
  Status RangeOnDevice(ConstBytes lo, ConstBytes hi, DeviceRangeResults* results,
                       const BatchOptions& options) final {
    const RangeLimit limit{options.range_limit, /*largest=*/false};
    const Status status = Query(options, [&](auto... snapshot) {
      return queries().RangeOnDevice(lo.bytes(), hi.bytes(), results, CountOf(lo), limit,
                                     snapshot...);
    });
    if (status.IsUnsupported()) return Table::RangeOnDevice(lo, hi, results, options);
    return status;
  }
  Status Successor(ConstBytes keys, MutableBytes next_keys, MutableBytes values, MutableBytes found,
                   const BatchOptions& options) final {
    uint8_t* found_bytes = OrNull(found);
    return Query(options, [&](auto... snapshot) {
      return queries().Successor(keys.bytes(), next_keys.bytes(), values.bytes(), found_bytes,
                                 CountOf(keys), snapshot...);
    });
  }
  Status Predecessor(ConstBytes keys, MutableBytes previous_keys, MutableBytes values,
                     MutableBytes found, const BatchOptions& options) final {
    uint8_t* found_bytes = OrNull(found);
    return Query(options, [&](auto... snapshot) {
      return queries().Predecessor(keys.bytes(), previous_keys.bytes(), values.bytes(), found_bytes,
                                   CountOf(keys), snapshot...);
    });
  }
  // Each page one Range query through the iterator's snapshot.
  Result<std::unique_ptr<Iterator>> NewIterator(const IteratorOptions& options) final {
    BatchOptions batch;
    batch.snapshot = options.snapshot;
    ReadPage read_page = [this, batch](const uint8_t* lo, const uint8_t* hi, RangeLimit limit,
                                       RangeResults* page) {
      return Query(batch, [&](auto... snapshot) {
        return queries().Range(lo, hi, page, 1, limit, snapshot...);
      });
    };
    return NewOrderedIterator(this->options().key_size, this->options().value_size, options,
                              std::move(read_page));
  }

 protected:
  OrderedFamilyTable(std::string name, const TableOptions& options)
      : FamilyTable(std::move(name), options) {}

  // The object that takes the writes.
  virtual Writer& writer() = 0;
  // The object that answers the reads.
  virtual Queries& queries() = 0;

  // The bytes of an optional output span: null when it is empty.
  static uint8_t* OrNull(MutableBytes bytes) { return bytes.empty() ? nullptr : bytes.bytes(); }

 private:
  // call(snapshot) when kSnapshots, else call().
  template <typename Call>
  static Status Query(const BatchOptions& options, const Call& call) {
    if constexpr (kSnapshots) {
      return call(options.snapshot);
    } else {
      (void)options;
      return call();
    }
  }
};

}  // namespace gpkv::tables
