// btree::Core: the protocol of a volatile ordered table, written once for
// every backend (backend.h supplies the B-tree). It owns:
//   - the clock: each write batch gets the next timestamp;
//   - the snapshots: TakeSnapshot registers the clock's value, the handle's
//     destruction releases it, and the versions no remaining snapshot sees
//     are reclaimed at the next write, Stats or Compact (versions.h);
//   - the batch semantics of gpkv::Table: within a put batch the last
//     occurrence of a key wins; within an erase batch the first occurrence
//     of a key reports whether it was live; a mixed batch is one timestamp;
//   - the lock: writes (Put, Erase, Compact, Stats) hold it exclusively,
//     reads hold it shared, so that a read sees the table before or after
//     each write batch, and a read through a snapshot sees exactly the
//     batches up to the snapshot's timestamp; a waiting writer holds new
//     readers back, so reads cannot starve writes.
//
// Who may call: tables/btree/ (the front, BtreeTable) and tests.
// Thread safety: any number of concurrent calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/btree/backend.h"
#include "tables/btree/stats.h"
#include "tables/range_limit.h"
#include "tables/write_batch.h"

namespace gpkv::btree {

class SnapshotRegistry;  // core.cc

class Core {
 public:
  // A core over `backend` for keys of key_size and values of value_size
  // bytes. Errors start with
  // `where` ("pool.gpkv: table 'index'"); snapshots name `owner` (the
  // front, gpkv::Snapshot::TakenBy).
  Core(std::string where, const Table* owner, uint32_t key_size, uint32_t value_size,
       std::unique_ptr<Backend> backend);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  // ---- writes ----

  Status Put(const uint8_t* keys, const uint8_t* values, size_t n);
  // erased: n bytes or null.
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t n);
  // A mixed batch, resolved (tables::ResolvedWrite): its puts and its erases
  // at one timestamp under one hold of the lock, so that readers and
  // snapshots see all of it or none. probe_found receives batch.probes
  // bytes: 1 where a probe key was live before the batch.
  Status Write(const tables::ResolvedWrite& batch, uint8_t* probe_found);
  // Reclaims every version no live snapshot sees.
  Status Compact();
  Result<btree::Stats> Stats();

  // ---- snapshots ----

  Result<std::unique_ptr<Snapshot>> TakeSnapshot();

  // ---- reads: the current contents (snapshot null) or a snapshot's ----

  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n,
             const Snapshot* snapshot);
  Status Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n,
               const Snapshot* snapshot);
  Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n,
               tables::RangeLimit limit, const Snapshot* snapshot);
  Status RangeOnDevice(const uint8_t* lo, const uint8_t* hi, Table::DeviceRangeResults* results,
                       size_t n, tables::RangeLimit limit, const Snapshot* snapshot);
  Status Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                   size_t n, const Snapshot* snapshot);
  Status Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values, uint8_t* found,
                     size_t n, const Snapshot* snapshot);
  // The pairs of the current contents in ascending key order, as of the
  // scan's start (a snapshot of its own); `visit` may write to the table.
  Status Scan(const Table::ScanVisitor& visit);

 private:
  // The read timestamp of `snapshot` (kLatest when null); InvalidArgument
  // when it is not one of this table's.
  Result<uint64_t> ReadTimestamp(const Snapshot* snapshot) const;
  // Applies a write batch (puts, or erases when values is null) at
  // `timestamp`, which becomes the clock's. REQUIRES: mutex_ held
  // exclusively; timestamp newer than every batch before.
  Status WriteLocked(const uint8_t* keys, const uint8_t* values, uint8_t* erased, size_t n,
                     uint64_t timestamp);
  // Reclaims what released snapshots left, if any were released since the
  // last time. REQUIRES: mutex_ held exclusively.
  Status ReclaimIfReleased();
  Status Named(Status status) const;
  // The lock for a write (exclusive) or a read (shared). A writer waits for
  // the readers inside while holding the turnstile, which new readers pass
  // through first: a stream of overlapping reads cannot starve the writers
  // (a shared_mutex alone may prefer readers).
  std::unique_lock<std::shared_mutex> WriteLock();
  std::shared_lock<std::shared_mutex> ReadLock();

  const std::string where_;
  const Table* const owner_;
  const uint32_t key_words_;
  const uint32_t value_size_;
  const std::unique_ptr<Backend> backend_;
  const std::shared_ptr<SnapshotRegistry> snapshots_;
  std::mutex turnstile_;     // see WriteLock
  std::shared_mutex mutex_;  // writes exclusive, reads shared
  uint64_t clock_ = 0;       // guarded by mutex_: the last write batch's timestamp
};

}  // namespace gpkv::btree
