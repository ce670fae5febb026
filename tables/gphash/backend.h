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
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/gphash/stats.h"
#include "tables/hash_backend.h"

namespace gpkv::gphash {

class Backend : public tables::HashBackend {
 public:
  // Visits every live pair (gpkv::Table::Scan's contract) by reading the
  // pool on the host; single-threaded.
  virtual Status Scan(const Table::ScanVisitor& visit) const = 0;

  virtual gphash::Stats Stats() const = 0;
  virtual uint32_t key_size() const = 0;
  virtual uint32_t value_size() const = 0;
};

}  // namespace gpkv::gphash
