#include "engine/db_impl.h"

#include <sys/stat.h>

#include <algorithm>
#include <thread>

#include "engine/backend.h"
#include "engine/catalog.h"
#include "pm/extent_allocator.h"
#include "recovery/catalog.h"
#include "tables/gphash/check.h"
#include "tables/gphash/cpu/backend.h"
#include "tables/gphash/table.h"

namespace gpkv {

Result<std::unique_ptr<DB>> DB::Open(const std::string& path, const Options& options) {
  if (path.empty()) return Status::InvalidArgument("empty pool path");
  if (!(options.gpu_cache_fraction >= 0 && options.gpu_cache_fraction <= 1)) {
    return Status::InvalidArgument(path + ": Options::gpu_cache_fraction must be in [0, 1], not " +
                                   std::to_string(options.gpu_cache_fraction));
  }
  auto backend = engine::ChooseBackend(options.backend);
  if (!backend.ok()) return backend.status();

  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  Result<std::unique_ptr<pm::Pool>> pool = Status::OK();
  if (!exists) {
    if (!options.create_if_missing) {
      return Status::NotFound(path + ": no such pool file (set create_if_missing to create it)");
    }
    if (options.read_only) {
      return Status::InvalidArgument(path + ": cannot create a pool read-only");
    }
    pool = pm::Pool::Create(path, options.pool_size, options.sync_mode);
  } else {
    if (options.error_if_exists) return Status::AlreadyExists(path + ": pool file exists");
    pool = pm::Pool::Open(path, options.read_only, options.sync_mode);
  }
  if (!pool.ok()) return pool.status();
  auto db = std::make_unique<engine::DBImpl>(std::move(pool.value()), options, *backend);
  GPKV_RETURN_IF_ERROR(db->Load());
  return std::unique_ptr<DB>(std::move(db));
}

namespace engine {

using format::CatalogEntry;

DBImpl::DBImpl(std::unique_ptr<pm::Pool> pool, const Options& options, Backend backend)
    : pool_(std::move(pool)), options_(options), backend_(backend) {}

DBImpl::~DBImpl() {
  tables_.clear();  // tables use the pool: close them first
  pool_.reset();
}

int DBImpl::threads() const {
  if (options_.cpu_threads > 0) return options_.cpu_threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

Status DBImpl::Load() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto catalog = recovery::ReadCatalog(*pool_);
  if (!catalog.ok()) return catalog.status();
  catalog_ = std::move(catalog.value());

  if (!pool_->read_only()) {
    // Extents a crash left allocated but unlinked: free them.
    std::vector<uint64_t> reachable;
    format::Superblock superblock = pool_->superblock();
    if (superblock.catalog_offset != 0) reachable.push_back(superblock.catalog_offset);
    for (const CatalogEntry& entry : catalog_) {
      if (entry.durability != static_cast<uint8_t>(Durability::kPersistent)) continue;
      auto extents = recovery::GphashReferencedExtents(*pool_, entry.name, entry.root_offset);
      if (!extents.ok()) return extents.status();
      reachable.insert(reachable.end(), extents->begin(), extents->end());
    }
    auto freed = pool_->allocator().FreeUnreachable(reachable);
    if (!freed.ok()) return freed.status();
    GPKV_RETURN_IF_ERROR(pool_->Sync());
  }
  for (const CatalogEntry& entry : catalog_) {
    if (entry.kind == static_cast<uint8_t>(TableKind::kHash) &&
        entry.durability == static_cast<uint8_t>(Durability::kPersistent)) {
      auto table = OpenEntry(entry);
      if (!table.ok()) return table.status();
    }
  }
  return Status::OK();
}

Result<Table*> DBImpl::OpenEntry(const CatalogEntry& entry) {
  TableOptions options = TableOptionsOf(entry);
  if (options.kind != TableKind::kHash || options.durability != Durability::kPersistent) {
    return Status::Unsupported(pool_->path() + ": table '" + entry.name +
                               "': only persistent hash tables are built so far");
  }
  auto table = OpenBackend(entry, options);
  if (!table.ok()) return table.status();
  Table* raw = table->get();
  tables_[entry.name] = std::move(table.value());
  return raw;
}

Result<std::unique_ptr<Table>> DBImpl::OpenBackend(const CatalogEntry& entry,
                                                   const TableOptions& options) {
#if GPKV_HAVE_CUDA
  if (backend_ == Backend::kCuda) {
    gpu::GpuTableOptions gpu_options;
    // Asked for CUDA: the GPU whatever the index size. kAuto: only where the
    // GPU is measured faster than the CPU backend (see GpuTableOptions).
    if (options_.backend == Backend::kCuda) gpu_options.direct_max_index_bytes = 0;
    gpu_options.bkt_cache_fraction = options_.gpu_cache_fraction;
    auto gpu = gpu::GphashGpu::Open(*pool_, entry.name, entry.root_offset, gpu_options, nullptr);
    if (gpu.ok()) {
      return std::unique_ptr<Table>(std::make_unique<PersistentHashTable>(
          entry.name, options, pool_->path(), pool_->read_only(), std::move(*gpu)));
    }
    // kAuto: what the GPU cannot run here (an index too large for GPU memory
    // in staged mode, or past the link's cliff in direct mode) runs on the
    // CPU; an explicit kCuda reports it.
    const bool cpu_can_take_it =
        gpu.status().IsUnsupported() || gpu.status().code() == Code::kOutOfDeviceMemory;
    if (!cpu_can_take_it || options_.backend == Backend::kCuda) return gpu.status();
  }
#endif
  auto cpu = cpu::Gphash::Open(*pool_, entry.name, entry.root_offset, threads(), nullptr);
  if (!cpu.ok()) return cpu.status();
  return std::unique_ptr<Table>(std::make_unique<PersistentHashTable>(
      entry.name, options, pool_->path(), pool_->read_only(), std::move(*cpu)));
}

const CatalogEntry* DBImpl::FindEntry(const std::string& name) const {
  for (const CatalogEntry& entry : catalog_) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

Status DBImpl::CheckNewTable(const std::string& name, const TableOptions& options) const {
  const std::string where = pool_->path() + ": table '" + name + "'";
  if (name.empty() || name.size() > format::kMaxTableNameLength ||
      name.find('\0') != std::string::npos) {
    return Status::InvalidArgument(where + ": a table name has 1 to " +
                                   std::to_string(format::kMaxTableNameLength) +
                                   " bytes and no NUL");
  }
  if (options.kind != TableKind::kHash && options.kind != TableKind::kOrdered) {
    return Status::InvalidArgument(where + ": unknown table kind");
  }
  if (options.durability != Durability::kPersistent &&
      options.durability != Durability::kVolatile) {
    return Status::InvalidArgument(where + ": unknown durability");
  }
  if (options.kind == TableKind::kOrdered) {
    return Status::Unsupported(where + ": ordered tables (LSM / B-Tree) are not built yet");
  }
  if (options.durability == Durability::kVolatile) {
    return Status::Unsupported(where + ": volatile hash tables (slab hash) are not built yet");
  }
  return Status::OK();
}

Result<Table*> DBImpl::CreateTable(const std::string& name, const TableOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pool_->read_only()) {
    return Status::InvalidArgument(pool_->path() + ": pool is open read-only");
  }
  if (FindEntry(name) != nullptr) {
    return Status::AlreadyExists(pool_->path() + ": table '" + name + "' exists");
  }
  GPKV_RETURN_IF_ERROR(CheckNewTable(name, options));
  std::lock_guard<std::mutex> metadata_lock(pool_->metadata_mutex());
  format::Superblock superblock = pool_->superblock();
  uint64_t table_id = superblock.next_table_id;
  auto root = cpu::Gphash::Create(*pool_, table_id, options);
  if (!root.ok()) return root.status();
  CatalogEntry entry = MakeCatalogEntry(name, table_id, options, *root);
  std::vector<CatalogEntry> next = catalog_;
  next.push_back(entry);
  Status published = recovery::PublishCatalog(*pool_, next, table_id + 1);
  if (!published.ok()) {
    cpu::Gphash::Destroy(*pool_, name, *root).IgnoreError();  // unlinked: freed at open anyway
    return published;
  }
  catalog_ = std::move(next);
  return OpenEntry(entry);
}

Result<Table*> DBImpl::OpenTable(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tables_.find(name);
  if (it != tables_.end()) return it->second.get();
  const CatalogEntry* entry = FindEntry(name);
  if (entry == nullptr) {
    return Status::NotFound(pool_->path() + ": no table '" + name + "'");
  }
  return OpenEntry(*entry);
}

Status DBImpl::DropTable(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pool_->read_only()) {
    return Status::InvalidArgument(pool_->path() + ": pool is open read-only");
  }
  const CatalogEntry* found = FindEntry(name);
  if (found == nullptr) return Status::NotFound(pool_->path() + ": no table '" + name + "'");
  CatalogEntry entry = *found;
  std::lock_guard<std::mutex> metadata_lock(pool_->metadata_mutex());
  std::vector<CatalogEntry> next;
  for (const CatalogEntry& e : catalog_) {
    if (e.table_id != entry.table_id) next.push_back(e);
  }
  GPKV_RETURN_IF_ERROR(recovery::PublishCatalog(*pool_, next, pool_->superblock().next_table_id));
  catalog_ = std::move(next);
  tables_.erase(name);
  if (entry.durability == static_cast<uint8_t>(Durability::kPersistent)) {
    // Unlinked now: a crash from here on leaves unreachable extents, freed at open.
    GPKV_RETURN_IF_ERROR(cpu::Gphash::Destroy(*pool_, name, entry.root_offset));
  }
  return pool_->Sync();
}

Result<std::vector<TableInfo>> DBImpl::ListTables() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<TableInfo> out;
  for (const CatalogEntry& entry : catalog_) {
    out.push_back(TableInfo{entry.name, entry.table_id, TableOptionsOf(entry)});
  }
  return out;
}

Result<PoolInfo> DBImpl::Info() {
  PoolInfo info;
  info.path = pool_->path();
  info.uuid = pool_->uuid_string();
  info.format_version = pool_->header().format_version;
  info.pool_size = pool_->size();
  info.heap_bytes = pool_->allocator().heap_bytes();
  info.used_bytes = pool_->allocator().used_bytes();
  info.extents = pool_->allocator().AllocatedExtents().size();
  info.superblock_generation = pool_->superblock().generation;
  info.is_pmem = pool_->is_pmem();
  info.backend = BackendName(backend_);
  return info;
}

}  // namespace engine
}  // namespace gpkv
