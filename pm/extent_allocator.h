// pm::ExtentAllocator: crash-consistent allocation of heap extents (table
// roots, bucket levels, value chunks, catalogs) from the extent table.
//
// Allocate writes the entry (offset, length, kind, owner), zeroes and persists
// the extent, then publishes the entry's state word: after return the extent
// is durably allocated but not yet reachable. The caller links it (publishes
// an offset to it). A crash between the two leaves an allocated, unreachable
// extent, which recovery frees (FreeUnreachable) at open.
//
// Thread safety: all methods serialise on an internal mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/status.h"

namespace gpkv::pm {

class Pool;

class ExtentAllocator {
 public:
  // Builds the in-memory free map from the extent table; Corruption if an
  // allocated entry is out of the heap, misaligned or overlaps another.
  // With `salvage` (repair only) such entries are set aside instead: they are
  // neither allocated nor handed out until ClearBadEntries(), and
  // load_problems() describes them.
  static Result<std::unique_ptr<ExtentAllocator>> Load(Pool& pool, bool salvage = false);

  // First fit. PoolFull ("<file>: pool full: no free extent of N bytes
  // (heap H bytes, U used)") when no free range or no free entry is left.
  // The extent is zeroed. length is rounded up to kExtentAlignment.
  Result<uint64_t> Allocate(uint64_t length, format::ExtentKind kind, uint64_t owner_table_id);
  // As Allocate, without zeroing: the extent holds whatever bytes an earlier
  // owner left. For an extent the caller fills whole and persists before it
  // links it (an LSM run: written once, checksummed, then published), where
  // zeroing would write every byte twice. A crash before the link leaves an
  // unreachable extent that recovery frees, as with Allocate.
  // REQUIRES: the caller writes every byte of the rounded-up length that any
  // reader (recovery and verify included) may read, before it links the
  // extent.
  Result<uint64_t> AllocateUninitialized(uint64_t length, format::ExtentKind kind,
                                         uint64_t owner_table_id);
  // Publishes the entry of the extent at `offset` free. InvalidArgument if
  // no allocated extent starts there.
  Status Free(uint64_t offset);
  // Frees every allocated extent whose offset is not in `reachable`; returns
  // how many were freed. Recovery calls this once at open.
  Result<uint64_t> FreeUnreachable(const std::vector<uint64_t>& reachable);

  // Repair: records an extent that reachable data lives in but the extent
  // table lost (no zeroing). Corruption if it leaves the heap or overlaps an
  // allocated extent; PoolFull if no entry is free.
  Status Adopt(uint64_t offset, uint64_t length, format::ExtentKind kind, uint64_t owner_table_id);
  // Repair: publishes every entry set aside by a salvage load as free.
  Status ClearBadEntries();
  const std::vector<std::string>& load_problems() const { return load_problems_; }

  // True if an allocated extent starts at offset and is `length` bytes
  // (rounded up to kExtentAlignment) long.
  bool IsAllocated(uint64_t offset, uint64_t length) const;
  std::vector<format::ExtentEntry> AllocatedExtents() const;
  uint64_t used_bytes() const;
  uint64_t heap_bytes() const;

 private:
  explicit ExtentAllocator(Pool& pool) : pool_(pool) {}
  Result<uint64_t> AllocateExtent(uint64_t length, format::ExtentKind kind, uint64_t owner_table_id,
                                  bool zero);

  Pool& pool_;
  mutable std::mutex mutex_;
  // index of each allocated entry in the extent table, ordered by offset
  std::vector<uint32_t> allocated_;
  std::vector<uint32_t> free_entries_;
  std::vector<uint32_t> bad_entries_;
  std::vector<std::string> load_problems_;
  uint64_t used_bytes_ = 0;
};

}  // namespace gpkv::pm
