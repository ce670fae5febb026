// engine::DBImpl: the gpkv::DB of one pool file. Owns the pool, the catalog
// copy in memory and every open table.
//
// Thread safety: catalog changes (create / drop) and table lookups serialise
// on mutex_; a catalog write also takes the pool's metadata mutex inside it
// (pm::Pool::metadata_mutex(), which repair takes too); batches on tables run
// outside both.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "pm/pool.h"

namespace gpkv::engine {

class DBImpl final : public DB {
 public:
  DBImpl(std::unique_ptr<pm::Pool> pool, const Options& options, Backend backend);
  ~DBImpl() override;

  // Reads the catalog, frees extents no table references (crash leftovers),
  // and opens every persistent table (running its recovery).
  Status Load();

  Result<Table*> CreateTable(const std::string& name, const TableOptions& options) override;
  Result<Table*> OpenTable(const std::string& name) override;
  Status DropTable(const std::string& name) override;
  Result<std::vector<TableInfo>> ListTables() override;
  Result<PoolInfo> Info() override;

 private:
  Status CheckNewTable(const std::string& name, const TableOptions& options) const;
  Result<Table*> OpenEntry(const format::CatalogEntry& entry);
  // The table's backend: the GPU when the DB runs on CUDA (falling back to
  // the CPU for what the GPU cannot run when the backend was kAuto).
  Result<std::unique_ptr<Table>> OpenBackend(const format::CatalogEntry& entry,
                                             const TableOptions& options);
  const format::CatalogEntry* FindEntry(const std::string& name) const;
  int threads() const;

  std::unique_ptr<pm::Pool> pool_;
  const Options options_;
  const Backend backend_;
  std::mutex mutex_;
  std::vector<format::CatalogEntry> catalog_;
  std::map<std::string, std::unique_ptr<Table>> tables_;
};

}  // namespace gpkv::engine
