#include "engine/db_impl.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <string>
#include <thread>

#include "engine/backend.h"
#include "engine/catalog.h"
#include "engine/checked_table.h"
#include "pm/extent_allocator.h"
#include "recovery/catalog.h"
#include "tables/registry.h"
#include "util/copy_pool.h"
#if GPKV_HAVE_CUDA
#include "gpu/host_memory.h"
#endif

namespace gpkv {

Result<std::unique_ptr<DB>> DB::Open(const std::string& path, const Options& options) {
  if (path.empty()) return Status::InvalidArgument("empty pool path");
  if (!(options.gpu_cache_fraction >= 0 && options.gpu_cache_fraction <= 1)) {
    return Status::InvalidArgument(path + ": Options::gpu_cache_fraction must be in [0, 1], not " +
                                   std::to_string(options.gpu_cache_fraction));
  }
  if (options.copy_threads < 0) {
    return Status::InvalidArgument(path + ": Options::copy_threads must be 0 or more, not " +
                                   std::to_string(options.copy_threads));
  }
  auto backend = engine::ChooseBackend(options.backend, options.cuda_device);
  if (!backend.ok()) return backend.status();
  // The GPU backends' staging copies run on the process's copy pool: start
  // it with this DB's threads unless an earlier DB has.
  if (*backend == Backend::kCuda) util::CopyPool::Shared(options.copy_threads);

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
namespace {

// The name of an extent's kind (format::ExtentKind), as TableExtentInfo gives it.
const char* ExtentKindName(format::ExtentKind kind) {
  switch (kind) {
    case format::kExtentKindCatalog:
      return "catalog";
    case format::kExtentKindTableRoot:
      return "table-root";
    case format::kExtentKindBucketLevel:
      return "bucket-level";
    case format::kExtentKindValueChunk:
      return "value-chunk";
    case format::kExtentKindOther:
      return "other";
  }
  return "other";
}

}  // namespace

using format::CatalogEntry;

DBImpl::DBImpl(std::unique_ptr<pm::Pool> pool, const Options& options, Backend backend)
    : path_(pool->path()), pool_(std::move(pool)), options_(options), backend_(backend) {}

DBImpl::~DBImpl() {
  Status status = Close();
  if (status.ok()) return;
  if (options_.error_logger) {
    options_.error_logger(status);
  } else {
    std::fprintf(stderr, "gpkv: %s\n", status.ToString().c_str());
  }
}

Status DBImpl::CheckOpen() const {
  if (closed_.load(std::memory_order_acquire)) {
    return Status::InvalidArgument(path_ + ": the DB is closed");
  }
  return Status::OK();
}

Status DBImpl::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_.load(std::memory_order_acquire)) return Status::OK();
  Status first;
  auto keep = [&first](Status status) {
    if (first.ok() && !status.ok()) first = std::move(status);
  };
  // Tables use the pool: close them first. Their wrappers stay, refusing
  // calls, so the caller's Table pointers stay valid.
  for (auto& [name, table] : tables_) keep(table->Close());
  {
    std::lock_guard<std::mutex> host_lock(host_mutex_);
#if GPKV_HAVE_CUDA
    if (backend_ == Backend::kCuda) {
      for (const auto& [start, bytes] : host_ranges_) {
        keep(gpu::UnregisterHostMemory(reinterpret_cast<void*>(start)));
      }
    }
#endif
    host_ranges_.clear();
  }
  if (!pool_->read_only()) keep(pool_->Sync());
  pool_.reset();
  closed_.store(true, std::memory_order_release);
  return first;
}

Status DBImpl::RegisterHostMemory(void* address, size_t bytes) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  const auto start = reinterpret_cast<uintptr_t>(address);
  if (address == nullptr || bytes == 0 || start + bytes < start) {
    return Status::InvalidArgument(pool_->path() + ": RegisterHostMemory needs a non-empty range");
  }
  std::lock_guard<std::mutex> lock(host_mutex_);
  // The first range that ends after `start` must begin at or after its end.
  auto next = host_ranges_.upper_bound(start);
  if (next != host_ranges_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second > start) next = previous;
  }
  if (next != host_ranges_.end() && next->first < start + bytes) {
    return Status::InvalidArgument(pool_->path() +
                                   ": RegisterHostMemory: " + std::to_string(bytes) +
                                   " bytes overlap a range registered already");
  }
#if GPKV_HAVE_CUDA
  if (backend_ == Backend::kCuda) GPKV_RETURN_IF_ERROR(gpu::RegisterHostMemory(address, bytes));
#endif
  host_ranges_[start] = bytes;
  return Status::OK();
}

Status DBImpl::UnregisterHostMemory(void* address) {
  GPKV_RETURN_IF_ERROR(CheckOpen());
  std::lock_guard<std::mutex> lock(host_mutex_);
  auto it = host_ranges_.find(reinterpret_cast<uintptr_t>(address));
  if (it == host_ranges_.end()) {
    return Status::NotFound(pool_->path() +
                            ": UnregisterHostMemory: no registered range starts there");
  }
#if GPKV_HAVE_CUDA
  if (backend_ == Backend::kCuda) GPKV_RETURN_IF_ERROR(gpu::UnregisterHostMemory(address));
#endif
  host_ranges_.erase(it);
  return Status::OK();
}

int DBImpl::threads() const {
  if (options_.cpu_threads > 0) return options_.cpu_threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string DBImpl::TableWhere(const std::string& name) const {
  return pool_->path() + ": table '" + name + "'";
}

Status DBImpl::Load() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto catalog = recovery::ReadCatalog(*pool_);
  if (!catalog.ok()) return catalog.status();
  catalog_ = std::move(catalog.value());

  if (!pool_->read_only()) {
    // Extents a crash left allocated but unlinked: free them. A persistent
    // table whose family this build lacks owns extents we cannot name, so
    // then nothing is freed.
    std::vector<uint64_t> reachable;
    bool all_known = true;
    format::Superblock superblock = pool_->superblock();
    if (superblock.catalog_offset != 0) reachable.push_back(superblock.catalog_offset);
    for (const CatalogEntry& entry : catalog_) {
      if (entry.durability != static_cast<uint8_t>(Durability::kPersistent)) continue;
      auto family = tables::FamilyOf(TableWhere(entry.name), entry);
      if (!family.ok()) {
        all_known = false;
        continue;
      }
      auto extents = (*family)->Extents(*pool_, entry, /*require_allocated=*/true);
      if (!extents.ok()) {
        if (!extents.status().IsCorruption()) return extents.status();
        // Damaged: its extents cannot be named, so nothing is freed.
        damaged_[entry.name] = extents.status();
        all_known = false;
        continue;
      }
      for (const tables::TableExtent& extent : *extents) reachable.push_back(extent.offset);
    }
    if (all_known) {
      auto freed = pool_->allocator().FreeUnreachable(reachable);
      if (!freed.ok()) return freed.status();
    }
    GPKV_RETURN_IF_ERROR(pool_->Sync());
  }
  // Growth maps the pool anew: before any table holds an address in it.
  if (options_.grow_if_smaller && options_.pool_size > pool_->size()) {
    if (pool_->read_only()) {
      return Status::InvalidArgument(path_ + ": cannot grow a pool opened read-only (size " +
                                     std::to_string(pool_->size()) + ", Options::pool_size " +
                                     std::to_string(options_.pool_size) + ")");
    }
    GPKV_RETURN_IF_ERROR(pool_->Grow(options_.pool_size));
  }
  // Open every table now (running its recovery), except those of families
  // this build lacks: OpenTable reports those. Damage stays with its table.
  for (const CatalogEntry& entry : catalog_) {
    if (!tables::FamilyOf(TableWhere(entry.name), entry).ok()) continue;
    if (damaged_.count(entry.name) != 0) continue;
    auto table = OpenEntry(entry);
    if (table.ok()) continue;
    if (!table.status().IsCorruption() && !table.status().IsNeedsRecovery()) {
      return table.status();
    }
    damaged_[entry.name] = table.status();
  }
  return Status::OK();
}

Result<Table*> DBImpl::OpenEntry(const CatalogEntry& entry) {
  const std::string where = TableWhere(entry.name);
  auto family = tables::FamilyOf(where, entry);
  if (!family.ok()) return family.status();
  auto options = TableOptionsOf(where, entry, **family);
  if (!options.ok()) return options.status();
  tables::OpenContext context;
  context.pool = pool_.get();
  context.backend = backend_;
  context.backend_required = options_.backend == Backend::kCuda;
  context.cuda_device = options_.cuda_device;
  context.gpu_cache_fraction = options_.gpu_cache_fraction;
  context.hash_gpu = options_.hash_gpu;
  context.ordered_gpu = options_.ordered_gpu;
  context.cpu_threads = threads();
  auto table = (*family)->Open(context, entry, *options);
  std::string fallback;
  if (!table.ok() && context.backend == Backend::kCuda &&
      FallsBackToCpu(options_.backend, table.status())) {
    fallback = FallbackMessage(where, table.status());
    context.backend = Backend::kCpu;
    table = (*family)->Open(context, entry, *options);
  }
  if (!table.ok()) return table.status();
  const int device = context.backend == Backend::kCuda ? options_.cuda_device : -1;
  auto checked = std::make_unique<CheckedTable>(pool_->path(), pool_->read_only(),
                                                BackendName(context.backend), device,
                                                std::move(fallback), std::move(table.value()));
  Table* raw = checked.get();
  tables_[entry.name] = std::move(checked);
  return raw;
}

const CatalogEntry* DBImpl::FindEntry(const std::string& name) const {
  for (const CatalogEntry& entry : catalog_) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

Result<const tables::TableFamily*> DBImpl::CheckNewTable(const std::string& name,
                                                         const TableOptions& options) const {
  const std::string where = TableWhere(name);
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
  const tables::TableFamily* family = tables::FindFamily(options.kind, options.durability);
  if (family == nullptr) {
    return Status::Unsupported(where + ": " + tables::DurabilityName(options.durability) + " " +
                               tables::KindName(options.kind) +
                               " tables are not built into this gpkv yet");
  }
  GPKV_RETURN_IF_ERROR(family->CheckOptions(where, options));
  return family;
}

Result<Table*> DBImpl::CreateTable(const std::string& name, const TableOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  GPKV_RETURN_IF_ERROR(CheckOpen());
  if (pool_->read_only()) {
    return Status::InvalidArgument(pool_->path() + ": pool is open read-only");
  }
  if (FindEntry(name) != nullptr) {
    return Status::AlreadyExists(pool_->path() + ": table '" + name + "' exists");
  }
  auto family = CheckNewTable(name, options);
  if (!family.ok()) return family.status();
  std::lock_guard<std::mutex> metadata_lock(pool_->metadata_mutex());
  format::Superblock superblock = pool_->superblock();
  uint64_t table_id = superblock.next_table_id;
  auto root = (*family)->Create(*pool_, table_id, options);
  if (!root.ok()) return root.status();
  CatalogEntry entry = MakeCatalogEntry(name, table_id, options, *root, **family);
  std::vector<CatalogEntry> next = catalog_;
  next.push_back(entry);
  Status published = recovery::PublishCatalog(*pool_, next, table_id + 1);
  if (!published.ok()) {
    (*family)->Drop(*pool_, entry).IgnoreError();  // unlinked: freed at open anyway
    return published;
  }
  catalog_ = std::move(next);
  return OpenEntry(entry);
}

Result<Table*> DBImpl::OpenTable(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  GPKV_RETURN_IF_ERROR(CheckOpen());
  auto it = tables_.find(name);
  if (it != tables_.end()) return it->second.get();
  auto damaged = damaged_.find(name);
  if (damaged != damaged_.end()) return damaged->second;
  const CatalogEntry* entry = FindEntry(name);
  if (entry == nullptr) {
    return Status::NotFound(pool_->path() + ": no table '" + name + "'");
  }
  return OpenEntry(*entry);
}

Status DBImpl::DropTable(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  GPKV_RETURN_IF_ERROR(CheckOpen());
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
  // A damaged table's extents cannot be trusted: unlinked, they are freed
  // at the next open that finds every table intact.
  const bool damaged = damaged_.erase(name) != 0;
  auto family = tables::FamilyOf(TableWhere(name), entry);
  if (family.ok() && !damaged) {
    // Unlinked now: a crash from here on leaves unreachable extents, freed at
    // open (persistent families); volatile ones free their memory on close.
    GPKV_RETURN_IF_ERROR((*family)->Drop(*pool_, entry));
  }
  return pool_->Sync();
}

Result<std::vector<TableInfo>> DBImpl::ListTables() {
  std::lock_guard<std::mutex> lock(mutex_);
  GPKV_RETURN_IF_ERROR(CheckOpen());
  std::vector<TableInfo> out;
  for (const CatalogEntry& entry : catalog_) {
    TableInfo info{entry.name, entry.table_id, {}, entry.root_offset};
    info.options.kind = static_cast<TableKind>(entry.kind);
    info.options.durability = static_cast<Durability>(entry.durability);
    info.options.key_size = entry.key_size;
    info.options.value_size = entry.value_size;
    info.options.expected_keys = entry.expected_keys;
    auto family = tables::FamilyOf(TableWhere(entry.name), entry);
    if (family.ok()) {
      auto options = TableOptionsOf(TableWhere(entry.name), entry, **family);
      if (!options.ok()) return options.status();
      info.options = *options;
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::vector<TableExtentInfo>> DBImpl::TableExtents(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  GPKV_RETURN_IF_ERROR(CheckOpen());
  const CatalogEntry* entry = FindEntry(name);
  if (entry == nullptr) return Status::NotFound(pool_->path() + ": no table '" + name + "'");
  std::vector<TableExtentInfo> out;
  if (entry->durability != static_cast<uint8_t>(Durability::kPersistent)) return out;
  auto family = tables::FamilyOf(TableWhere(name), *entry);
  if (!family.ok()) return family.status();
  auto extents = (*family)->Extents(*pool_, *entry, /*require_allocated=*/true);
  if (!extents.ok()) return extents.status();
  // Length and kind as the extent table records them (require_allocated:
  // every extent the family names is allocated there).
  std::map<uint64_t, format::ExtentEntry> allocated;
  for (const format::ExtentEntry& extent : pool_->allocator().AllocatedExtents()) {
    allocated[extent.offset] = extent;
  }
  for (const tables::TableExtent& extent : *extents) {
    auto found = allocated.find(extent.offset);
    if (found == allocated.end()) {
      out.push_back({extent.offset, extent.length, ExtentKindName(extent.kind)});
    } else {
      out.push_back({extent.offset, found->second.length,
                     ExtentKindName(static_cast<format::ExtentKind>(found->second.kind))});
    }
  }
  return out;
}

Result<PoolInfo> DBImpl::Info() {
  std::lock_guard<std::mutex> lock(mutex_);
  GPKV_RETURN_IF_ERROR(CheckOpen());
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
