// tables::TableFamily: what the engine and recovery know of a table family
// (GPHash, the LSM and the slab hash are built). A family
// owns its bytes in the pool (or its memory, when volatile), its backends
// and its checks; the engine and recovery reach it only through this
// interface, found in the registry (tables/registry.h) by kind and
// durability.
//
// Adding a family: its folder tables/<family>/, a class implementing this
// interface, one line in tables/registry.cc, its CMake line and its CLI hook
// (docs/ARCHITECTURE.md, "How to add a table family").
//
// Who may call: engine/, recovery/, tools/ (through the registry), tests.
// Thread safety: a family object is stateless and immutable; every method
// may be called from several threads. Methods that write a table's bytes
// (Create, Drop, Repair) require that no one else uses that table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/family_cli.h"

namespace gpkv::tables {

// What a family gets to open one table.
struct OpenContext {
  pm::Pool* pool = nullptr;
  // The backend to open the table on: kCpu or kCuda, never kAuto.
  Backend backend = Backend::kCpu;
  // True when the DB named this backend (Options::backend kCuda): the table
  // runs on the GPU even where a family measured the CPU backend faster.
  // False under Backend::kAuto: a family may then refuse (Unsupported, saying
  // why) a table the GPU would run slower than the CPU backend.
  bool backend_required = false;
  // Options::cuda_device of the DB: the device a table on kCuda runs on.
  int cuda_device = 0;
  // Options::gpu_cache_fraction of the DB.
  double gpu_cache_fraction = Options().gpu_cache_fraction;
  // Options::hash_gpu of the DB (the persistent hash tables' GPU tuning).
  HashGpuOptions hash_gpu;
  // Options::ordered_gpu of the DB (the ordered tables' GPU tuning).
  OrderedGpuOptions ordered_gpu;
  // CPU worker threads per batch, resolved (>= 1).
  int cpu_threads = 1;
  // What open-time recovery changed; may be null.
  recovery::Report* report = nullptr;
};

// One extent a table references, as repair re-adopts it.
struct TableExtent {
  uint64_t offset = 0;
  uint64_t length = 0;
  format::ExtentKind kind = format::kExtentKindOther;
};

class TableFamily {
 public:
  // What a family is: its name, the (kind, durability) it serves and its CLI
  // hook, given once by its constructor.
  TableFamily(const char* name, TableKind kind, Durability durability, const FamilyCli& cli)
      : name_(name), kind_(kind), durability_(durability), cli_(cli) {}
  virtual ~TableFamily() = default;
  TableFamily(const TableFamily&) = delete;
  TableFamily& operator=(const TableFamily&) = delete;

  // Short lowercase name, used in messages, stats and property names
  // ("gphash" gives "gphash.load-factor").
  const char* name() const { return name_; }
  TableKind kind() const { return kind_; }
  Durability durability() const { return durability_; }
  // What it says in the gpkv tool: its `tables create` flags, its lines in
  // `info` and `tables` (tables/<family>/cli.h).
  const FamilyCli& cli() const { return cli_; }

  // ---- options and the catalog ----

  // InvalidArgument, message starting with `where`, unless a table with
  // these options can be created (sizes, geometry, ...).
  virtual Status CheckOptions(const std::string& where, const TableOptions& options) const = 0;
  // Writes the family's parameter block of a catalog entry from options.
  virtual void EncodeParams(const TableOptions& options,
                            uint8_t (&params)[format::kCatalogParamsSize]) const = 0;
  // Reads it back into options (the generic fields are set already).
  // Corruption, message starting with `where`, when the block is not valid.
  virtual Status DecodeParams(const std::string& where,
                              const uint8_t (&params)[format::kCatalogParamsSize],
                              TableOptions* options) const = 0;

  // ---- lifetime ----

  // Creates a table's bytes in the pool: durable but unlinked (the caller
  // links the returned root offset into the catalog; an unlinked root is
  // freed at the next open). Volatile families return 0 and write nothing.
  // REQUIRES: CheckOptions(options) is OK; pool.metadata_mutex() held.
  virtual Result<uint64_t> Create(pm::Pool& pool, uint64_t table_id,
                                  const TableOptions& options) const = 0;
  // Opens the table of `entry`, running its open-time recovery, on the
  // context's backend and on no other. `options` are the entry's, decoded.
  // On kCuda: Unsupported or OutOfDeviceMemory, saying why, when the GPU
  // cannot take the table (no usable device, not enough device memory, or
  // one the family refuses without backend_required). The engine owns the
  // fallback: under Backend::kAuto it then opens the table on kCpu.
  virtual Result<std::unique_ptr<Table>> Open(const OpenContext& context,
                                              const format::CatalogEntry& entry,
                                              const TableOptions& options) const = 0;
  // Frees every extent of a table that is unlinked from the catalog.
  // REQUIRES: the table is not open.
  virtual Status Drop(pm::Pool& pool, const format::CatalogEntry& entry) const = 0;

  // ---- checks (verify, repair, open-time extent reclamation) ----

  // Every extent the table references, each bounds-checked. Corruption
  // (naming table and offset) when its root cannot be trusted, or, with
  // require_allocated, when one of them is not allocated in the extent table
  // (repair passes false: it re-adopts such extents).
  // REQUIRES: persistent family.
  virtual Result<std::vector<TableExtent>> Extents(const pm::Pool& pool,
                                                   const format::CatalogEntry& entry,
                                                   bool require_allocated) const = 0;
  // Read-only check of the table's bytes; appends findings and a
  // TableReport to `report`. An error Status only when the table cannot be
  // read at all (its root is not trusted).
  virtual Status Verify(const pm::Pool& pool, const format::CatalogEntry& entry,
                        recovery::Report& report, const recovery::ProgressFn& progress) const = 0;
  // Repairs the table's bytes in place (what Verify reports as corruption is
  // dropped); appends what changed to `report`. Corruption when its root
  // cannot be trusted: the caller then drops the table from the catalog.
  virtual Status Repair(pm::Pool& pool, const format::CatalogEntry& entry, recovery::Report& report,
                        const recovery::ProgressFn& progress) const = 0;
  // A catalog entry for a table whose catalog was lost, from its root extent
  // (extent kind kExtentKindTableRoot), named `name`; an error when the
  // extent is not a valid root of this family.
  virtual Result<format::CatalogEntry> Salvage(const pm::Pool& pool,
                                               const format::ExtentEntry& root_extent,
                                               const std::string& name) const = 0;

 private:
  const char* const name_;
  const TableKind kind_;
  const Durability durability_;
  const FamilyCli& cli_;
};

}  // namespace gpkv::tables
