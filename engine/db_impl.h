// engine::DBImpl: the gpkv::DB of one pool file. Owns the pool, the catalog
// copy in memory and every open table.
//
// Registered host memory (RegisterHostMemory) is tracked in host_ranges_
// under host_mutex_ and unregistered when the DB closes. Close closes the
// tables (their CheckedTable wrappers stay, refusing calls) and releases the
// pool; the destructor closes a DB the caller did not.
//
// Thread safety: catalog changes (create / drop) and table lookups serialise
// on mutex_; a catalog write also takes the pool's metadata mutex inside it
// (pm::Pool::metadata_mutex(), which repair takes too); batches on tables run
// outside both.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "pm/pool.h"
#include "tables/family.h"

namespace gpkv::engine {

class DBImpl final : public DB {
 public:
  DBImpl(std::unique_ptr<pm::Pool> pool, const Options& options, Backend backend);
  ~DBImpl() override;

  // Reads the catalog, frees extents no table references (crash leftovers),
  // and opens every persistent table (running its recovery). A table whose
  // bytes are corrupt (or, read-only, that needs recovery) is set aside in
  // damaged_ (when corrupt, its extents cannot be named: nothing is freed);
  // the others open as usual.
  Status Load();

  Status Close() override;
  Result<Table*> CreateTable(const std::string& name, const TableOptions& options) override;
  Result<Table*> OpenTable(const std::string& name) override;
  Status DropTable(const std::string& name) override;
  Result<std::vector<TableInfo>> ListTables() override;
  Result<std::vector<TableExtentInfo>> TableExtents(const std::string& name) override;
  Result<PoolInfo> Info() override;
  Status RegisterHostMemory(void* address, size_t bytes) override;
  Status UnregisterHostMemory(void* address) override;

 private:
  // The family that will hold a new table; InvalidArgument or Unsupported
  // naming the pool and the table when there is none for these options.
  Result<const tables::TableFamily*> CheckNewTable(const std::string& name,
                                                   const TableOptions& options) const;
  // Opens the table of `entry` through its family (running its recovery) and
  // keeps it in tables_.
  Result<Table*> OpenEntry(const format::CatalogEntry& entry);
  // InvalidArgument naming the pool once the DB is closed.
  Status CheckOpen() const;
  // "<pool>: table '<name>'".
  std::string TableWhere(const std::string& name) const;
  const format::CatalogEntry* FindEntry(const std::string& name) const;
  int threads() const;

  const std::string path_;
  std::unique_ptr<pm::Pool> pool_;  // null once closed
  std::atomic<bool> closed_{false};
  const Options options_;
  const Backend backend_;
  std::mutex mutex_;
  std::vector<format::CatalogEntry> catalog_;
  std::map<std::string, std::unique_ptr<Table>> tables_;
  // Tables found corrupt at open, or needing recovery a read-only open
  // cannot write: name -> the Corruption / NeedsRecovery OpenTable returns.
  std::map<std::string, Status> damaged_;
  // Registered host ranges: start -> bytes (page-locked with the CUDA
  // backend). Guarded by host_mutex_.
  std::mutex host_mutex_;
  std::map<uintptr_t, size_t> host_ranges_;
};

}  // namespace gpkv::engine
