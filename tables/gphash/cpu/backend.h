// cpu::CpuBackend: the persistent hash table (GPHash layout, tables/gphash/layout.h)
// run by CPU threads directly on the pool mapping (a gphash::Backend, backend.h). Lock-free,
// log-free insert / update / erase by CAS on slot words (__atomic builtins (C++17 has no
// std::atomic_ref)), one-step fingerprint comparison of a bucket, resize by a new top level.
//
// Who may call: engine/ (through the Table facade) and tests.
//
// Thread safety: Put / Get / Erase / Stats may run concurrently from several
// threads (each batch is itself run by `threads` workers). A resize takes the
// table exclusively for its duration. Per key a reader sees the old or the new
// value, never a mix (slot versions + value-cell epochs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/backend.h"
#include "tables/gphash/stats.h"

namespace gpkv::gphash::cpu {

class CpuBackend final : public gphash::Backend {
 public:
  // Validates options (key size 8/16/32, value size 1..128, geometry) and
  // allocates a root, the levels and (value_size > 8) a first value chunk.
  // Returns the root offset: durable, but reachable only once the caller links
  // it into the catalog (an unlinked root is freed by open-time recovery).
  static Result<uint64_t> Create(pm::Pool& pool, uint64_t table_id, const TableOptions& options);

  // Opens the table rooted at root_offset, running open-time recovery first:
  // INSERT slots cleared, duplicates resolved, an interrupted resize finished,
  // value cells no slot references reclaimed. `report` (optional) receives
  // what recovery changed. Corruption (naming table and offset) if the root,
  // a level descriptor or a slot cannot be trusted. On a read-only pool
  // nothing is written: the slots recovery would change stay, and every get
  // and scan answers as the recovered table would (Stats() shows the levels
  // as they are in the pool, an interrupted resize included).
  static Result<std::unique_ptr<CpuBackend>> Open(pm::Pool& pool, const std::string& table_name,
                                                  uint64_t root_offset, int threads,
                                                  recovery::Report* report);
  ~CpuBackend() override;

  // Batches: count keys of key_size bytes; values of value_size bytes. See
  // gpkv::Table for the contract. Durable on return (pool.Sync()). `stream`
  // is ignored (backend.h).
  using Backend::Erase;
  using Backend::Get;
  using Backend::Put;
  Status Put(const uint8_t* keys, const uint8_t* values, size_t count, void* stream) override;
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
             void* stream) override;
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) override;

  // Visits every live pair (see gpkv::Table::Scan); single-threaded.
  Status Scan(const Table::ScanVisitor& visit) const override;

  gphash::Stats Stats() const override;
  uint32_t key_size() const override;
  uint32_t value_size() const override;

  // Frees every extent of the table rooted at root_offset.
  // REQUIRES: the table is unlinked from the catalog and not open.
  static Status Destroy(pm::Pool& pool, const std::string& table_name, uint64_t root_offset);

  // Test hook: retired slots whose level was gone when they were reclaimed
  // (never written; always 0 unless reclamation has a bug).
  uint64_t TEST_StrayReclaims() const;

  class Impl;

 private:
  explicit CpuBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpkv::gphash::cpu
