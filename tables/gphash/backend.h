// gphash::Backend: what the persistent hash table's front (table.h,
// GphashTable) asks of a backend. Two implementations, both reading and
// writing the same bytes (layout.h): cpu::CpuBackend, CPU threads on the pool
// mapping (cpu/backend.h), and gpu::GpuBackend, CUDA kernels (gpu/backend.h,
// in a CUDA build). A pool written by either opens, verifies and answers the
// same on the other. Each backend's static Open runs open-time recovery
// before it returns the backend.
//
// Batches (tables::HashBackend: Put, Get, Erase, with or without a stream)
// follow gpkv::Table's contract: per-operation atomicity; a write batch is
// durable on return. PoolFull when growing the table cannot get pool space.
//
// Who may call: tables/gphash/ (the front and the family), tests and the
// benchmark. Thread safety: batches, Scan and Stats may be called from
// several threads at once (see each backend for how they run).
//
// gphash::GrowthBackend: the primitives of a resize that the table's core
// (gphash::Core, core.h) asks of a backend; the core decides what is
// published and when, and makes every pool write of the protocol itself.
// Both backends implement it (cpu::CpuBackend::Impl, gpu::GpuBackend::Impl).
// Called by the core only, with the table held exclusively (no batch in
// flight) or at open.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/gphash/layout.h"
#include "tables/gphash/stats.h"
#include "tables/hash_backend.h"

namespace gpkv::gphash {

class Backend : public tables::HashBackend {
 public:
  // Visits every live pair (gpkv::Table::Scan's contract) by reading the
  // pool on the host; single-threaded.
  virtual Status Scan(const Table::ScanVisitor& visit) const = 0;

  virtual gphash::Stats Stats() const = 0;
  // Where the backend probes the index (gpkv::TableStats::mode): the GPU's
  // index mode, "direct", "mirror" or "staged"; empty on the CPU.
  virtual const char* mode() const { return ""; }
  virtual uint32_t key_size() const = 0;
  virtual uint32_t value_size() const = 0;
};

class GrowthBackend {
 public:
  virtual ~GrowthBackend() = default;
  // A new top level of `buckets` buckets, zeroed, was allocated at pool
  // offset `offset`; the LevelSet with it on top is published next. Gets
  // ready what the backend keeps beside the pool for it (the GPU's mirror
  // level). An error ends the resize before anything is published; the core
  // frees the extent.
  virtual Status PrepareTopLevel(uint64_t offset, uint64_t buckets) = 0;
  // `set` was published, selected by `active_word`: run on it from now on.
  virtual void ApplyLevelSet(const gphash::LevelSet& set, uint64_t active_word) = 0;
  // Moves every VALID slot of the bottom level of the applied LevelSet into
  // the levels above it, each by insert-then-erase, persisted; a copy that
  // loses to another copy of its key is erased instead. Returns how many
  // keys found no room and stayed.
  virtual Result<uint64_t> MoveBottomLevel() = 0;
  // The LevelSet just applied no longer holds the former bottom level (the
  // last level of the one before it): let go of what the backend kept for it.
  virtual void DropBottomLevel() = 0;
};

// The puts of one write batch that found no free candidate slot, as a backend
// runs the steps that place them; gphash::Core::PlaceFailedPuts decides which
// step comes next. Called with the table held exclusively by the write path.
class PlacementSteps {
 public:
  virtual ~PlacementSteps() = default;
  // Moves resident keys out of the failed puts' candidate buckets into other
  // candidate buckets of their own (kicks). True when some key moved.
  virtual Result<bool> Kick() = 0;
  // Grows the table: gphash::Core::Grow, with what the backend does around it.
  virtual Status Resize() = 0;
  // Runs the failed puts again. Returns how many still found no free slot.
  virtual Result<uint64_t> Retry() = 0;
};

}  // namespace gpkv::gphash
