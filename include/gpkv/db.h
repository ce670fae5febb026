// gpkv::DB: one pool file holding a catalog of named tables.
//
//   gpkv::Options options;
//   options.create_if_missing = true;
//   auto db = gpkv::DB::Open("/dev/shm/pool.gpkv", options);
//   if (!db.ok()) { ... db.status().ToString() ... }
//   auto table = (*db)->CreateTable("users", gpkv::TableOptions{});
//   GPKV_RETURN_IF_ERROR((*table)->Put(keys, values));
//
// Opening a pool writable runs recovery: reserved slots are cleared, an
// interrupted resize is finished and unreferenced value cells are reclaimed
// (Options::read_only says what a read-only open does instead).
//
// Thread safety: all methods may be called from several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"

namespace gpkv {

// A table as the catalog records it.
struct TableInfo {
  std::string name;
  uint64_t id = 0;
  TableOptions options;
  uint64_t root_offset = 0;  // pool offset of the table's root; 0 for a volatile table
};

// One extent of the pool a table owns (DB::TableExtents).
struct TableExtentInfo {
  uint64_t offset = 0;  // pool offset of its first byte
  uint64_t length = 0;  // bytes
  // What the pool's extent table says it holds: "table-root",
  // "bucket-level", "value-chunk" or "other" (an ordered table's log and runs).
  std::string kind;
};

// Facts about the open pool.
struct PoolInfo {
  std::string path;
  std::string uuid;  // 36-character text form
  uint32_t format_version = 0;
  uint64_t pool_size = 0;   // bytes of the pool (see Options::grow_if_smaller)
  uint64_t heap_bytes = 0;  // bytes available to tables
  uint64_t used_bytes = 0;  // bytes in allocated extents
  uint64_t extents = 0;     // allocated extents
  uint64_t superblock_generation = 0;
  bool is_pmem = false;  // cache-line persistence (a DAX mapping)
  std::string backend;   // "cpu" or "cuda"
};

class DB {
 public:
  // Opens (or with options.create_if_missing creates) the pool at path.
  // Errors: NotFound (no file, not creating), AlreadyExists
  // (error_if_exists), Corruption (with file and offset) of the pool's own
  // structures (header, superblocks, extent table, catalog), IOError,
  // Unsupported (newer format version; CUDA requested but unusable). Damage
  // inside one table does not fail the open: that table's OpenTable reports
  // it and the other tables work; while a table is damaged, open-time
  // recovery frees no unreferenced extents.
  static Result<std::unique_ptr<DB>> Open(const std::string& path, const Options& options);

  // Closes the DB unless Close was called; an error Close cannot return goes
  // to Options::error_logger.
  virtual ~DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;

  // Finishes pending work (an ordered table's pending checkpoint is
  // published), closes every table (releasing its GPU memory and
  // registrations), unregisters host memory, makes the pool durable and
  // releases it. Returns the first error met on the way; the DB is closed
  // either way, and whatever a failed step left undone is finished by
  // recovery at the next open. A second Close returns OK. After Close every
  // call on the DB and on its Table pointers returns InvalidArgument; the
  // pointers stay valid until the DB is destroyed.
  // REQUIRES: no other call on the DB or its tables is running.
  virtual Status Close() = 0;

  // Creates a table. AlreadyExists if the name is taken; InvalidArgument for
  // bad sizes or geometry; Unsupported for kinds not built yet. The table is
  // durable in the catalog when this returns.
  virtual Result<Table*> CreateTable(const std::string& name, const TableOptions& options) = 0;
  // Opens an existing table. NotFound if there is none of that name;
  // Corruption naming the table and the offset when its bytes were found
  // damaged at Open (`gpkv repair` repairs or drops it; DropTable drops it).
  // On a read-only pool a table that needs open-time recovery opens and
  // answers as recovered (see Options::read_only).
  virtual Result<Table*> OpenTable(const std::string& name) = 0;
  // Removes a table and frees its pool space. Table pointers to it become
  // invalid. REQUIRES: no batch on the table is running.
  virtual Status DropTable(const std::string& name) = 0;
  virtual Result<std::vector<TableInfo>> ListTables() = 0;
  // The extents of the pool a persistent table owns, root first, as its root
  // names them now; empty for a volatile table. NotFound if there is no table
  // of that name; Corruption naming the table and the offset when its root
  // cannot be read. A resize running meanwhile may or may not be seen.
  virtual Result<std::vector<TableExtentInfo>> TableExtents(const std::string& name) = 0;
  virtual Result<PoolInfo> Info() = 0;

  // ---- host memory the caller reuses for batches ----

  // Registers [address, address + bytes) of the caller's memory for batches
  // that live in it (keys, values, found / erased flags). With the CUDA
  // backend the range is page-locked (cudaHostRegister): the GPU copies a
  // batch array that lies wholly inside one registered (or cudaHostAlloc'ed)
  // range by DMA, in place; other host arrays go through the table's pinned
  // staging, one more host copy. Worth it for buffers reused over many
  // batches: registering costs about as much as copying the range a few
  // times. The CPU backend only records the range. Ranges stay registered
  // until UnregisterHostMemory or until the DB closes.
  // Errors: InvalidArgument for a null address, zero bytes, or a range that
  // overlaps one registered already; what CUDA reports otherwise
  // (OutOfDeviceMemory, Unsupported ...).
  // REQUIRES: the memory stays allocated while registered.
  virtual Status RegisterHostMemory(void* address, size_t bytes) = 0;
  // Undoes RegisterHostMemory(address, ...). NotFound when no range starts
  // at `address`. REQUIRES: no batch that uses the range is running.
  virtual Status UnregisterHostMemory(void* address) = 0;

 protected:
  DB() = default;
};

}  // namespace gpkv
