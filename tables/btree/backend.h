// btree::Backend: the primitives a volatile ordered table's backend supplies
// to its core (btree::Core, core.h), which owns the protocol: the clock,
// the snapshots, the batch semantics and the locking. cpu::CpuBackend keeps
// the versions in Abseil's btree_map in RAM; gpu's backend keeps them in a
// B-link tree in GPU memory. Both follow the version rules of versions.h.
//
// The core hands every write batch over sorted and without duplicate keys,
// with its timestamp and the live snapshots; every read names the timestamp
// it reads at (kLatest: the current contents). Arrays are host memory; a
// backend on a GPU also takes the batch arrays and outputs of the table's
// calls in device memory (gpkv::Table's batches): the core passes them on
// without reading them, except a mixed Write's (host memory, as
// gpkv::Table::Write requires).
//
// Who may call: tables/btree/ (the core). Thread safety: Write, Reclaim and
// Stats run alone (the core's lock held exclusively); the reads may run
// beside each other (the lock held shared).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/btree/stats.h"
#include "tables/btree/versions.h"
#include "tables/range_limit.h"

namespace gpkv::btree {

// One write batch as the core hands it over: count operations on unique
// keys in ascending key order; operation i is keys[order[i]] (and its value
// values[order[i]]) of the caller's arrays. To a backend that sorts batches
// itself (Backend::SortsBatches) order is null and the batch is the caller's
// as it came: operation i is keys[i], keys may repeat (of a put the last
// occurrence counts, of an erase the first, which alone reports), and
// was_live[i] answers for the caller's operation i.
struct WriteBatch {
  const uint8_t* keys = nullptr;
  const uint8_t* values = nullptr;  // null: the operations are erases
  const size_t* order = nullptr;
  size_t count = 0;
  uint64_t timestamp = 0;  // newer than every version held and every snapshot
  LiveSnapshots live;
  // count bytes or null: live[i] = 1 where operation i's key was live before
  // the batch (what an erase reports). To a backend that sorts batches, the
  // caller's array (`erased` of gpkv::Table::Erase).
  uint8_t* was_live = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // ---- writes (alone) ----

  // Whether Write takes batches unsorted (WriteBatch says how), so that the
  // core leaves the sort to it (the GPU backend sorts on the device).
  virtual bool SortsBatches() const { return false; }

  // Applies the batch: each key's newest version replaced in place, or a new
  // one put in front (versions.h WriteInPlace), and its older versions that
  // no live snapshot sees dropped.
  virtual Status Write(const WriteBatch& batch) = 0;
  // Drops every version no live snapshot sees (versions.h SeenBySnapshot),
  // and the keys left with only a tombstone.
  virtual Status Reclaim(LiveSnapshots live) = 0;
  // Its counters (Stats' keys, versions, tombstones, bytes, reclaimed).
  virtual Result<btree::Stats> Stats() = 0;

  // ---- reads at read_timestamp (beside each other) ----

  // gpkv::Table's Get, Count, Range, Successor and Predecessor for n
  // queries, as of read_timestamp. Range replaces *results with the pairs
  // `limit` selects of each query, its walk stopping once it has them.
  virtual Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n,
                     uint64_t read_timestamp) = 0;
  virtual Status Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n,
                       uint64_t read_timestamp) = 0;
  virtual Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n,
                       tables::RangeLimit limit, uint64_t read_timestamp) = 0;
  // Range with its results in GPU memory; Unsupported where there is none.
  virtual Status RangeOnDevice(const uint8_t* lo, const uint8_t* hi,
                               Table::DeviceRangeResults* results, size_t n,
                               tables::RangeLimit limit, uint64_t read_timestamp) = 0;
  virtual Status Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                           size_t n, uint64_t read_timestamp) = 0;
  virtual Status Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values,
                             uint8_t* found, size_t n, uint64_t read_timestamp) = 0;
  // Up to `limit` pairs live at read_timestamp, in ascending key order,
  // from the first key after `after` (null: from the smallest key) appended
  // to *keys and *values (which the caller empties).
  virtual Status ScanChunk(const uint8_t* after, size_t limit, uint64_t read_timestamp,
                           std::vector<uint8_t>* keys, std::vector<uint8_t>* values) = 0;
};

}  // namespace gpkv::btree
