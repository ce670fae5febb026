#include "tables/gphash/family.h"

#include <cstring>

#include "pm/extent_allocator.h"
#include "tables/catalog_entry.h"
#include "tables/gphash/check.h"
#include "tables/gphash/cli.h"
#include "tables/gphash/cpu/backend.h"
#include "tables/gphash/layout.h"
#include "tables/gphash/logged/check.h"
#include "tables/gphash/logged/core.h"
#include "tables/gphash/logged/reader.h"
#include "tables/gphash/logged/root.h"
#include "tables/gphash/logged/table.h"
#include "tables/gphash/reader.h"
#include "tables/gphash/root.h"
#include "tables/gphash/table.h"
#include "tables/hash_index.h"
#include "tables/persistent_family.h"
#if GPKV_HAVE_CUDA
#include "tables/gphash/gpu/backend.h"
#include "tables/gphash/logged/gpu/device_batches.h"
#include "tables/gphash/logged/gpu/device_image_writer.h"
#include "tables/gphash/logged/gpu/device_records.h"
#endif

namespace gpkv::gphash {
namespace {

static_assert(sizeof(gphash::CatalogParams) == format::kCatalogParamsSize);

// The table on the GPU backend. Unsupported or OutOfDeviceMemory, saying
// why, when the GPU cannot take it here: no usable device, an index too
// large for GPU memory in staged mode, or (unless the DB named the GPU) an
// index past the link's cliff in direct mode, where the CPU backend is
// measured faster.
#if GPKV_HAVE_CUDA
// The backend's options from the DB's (Options::hash_gpu, gpu_cache_fraction).
gpu::GpuTableOptions GpuOptionsOf(const tables::OpenContext& context) {
  const HashGpuOptions& tuning = context.hash_gpu;
  gpu::GpuTableOptions gpu_options;
  static_cast<HashGpuOptions&>(gpu_options) = tuning;
  // Named: the GPU whatever the index size. Otherwise only where the GPU is
  // measured faster than the CPU backend (see HashGpuOptions).
  if (context.backend_required) gpu_options.direct_max_index_bytes = 0;
  gpu_options.bkt_cache_fraction = context.gpu_cache_fraction;
  gpu_options.device = context.cuda_device;
  return gpu_options;
}

Result<std::unique_ptr<Table>> OpenOnGpu(const tables::OpenContext& context,
                                         const format::CatalogEntry& entry,
                                         const TableOptions& options) {
  const gpu::GpuTableOptions gpu_options = GpuOptionsOf(context);
  auto gpu = gpu::GpuBackend::Open(*context.pool, entry.name, entry.root_offset, gpu_options,
                                   context.report);
  if (!gpu.ok()) return gpu.status();
  return std::unique_ptr<Table>(
      std::make_unique<GphashTable>(entry.name, options, std::move(*gpu)));
}
#endif

// The two modes of a persistent hash table: in place (GPHash's bytes) and
// logged (logged/). Create follows the options; the calls given only a root
// follow the root's magic word.
Status CheckHashOptions(const std::string& where, const TableOptions& options) {
  GPKV_RETURN_IF_ERROR(gphash::CheckOptions(where, options));
  return logged::IsLogged(options) ? logged::CheckOptions(where, options) : Status::OK();
}

Result<uint64_t> CreateHashTable(pm::Pool& pool, uint64_t table_id, const TableOptions& options) {
  if (!logged::IsLogged(options)) return CreateTable(pool, table_id, options);
  GPKV_RETURN_IF_ERROR(
      CheckHashOptions(pool.path() + ": table id " + std::to_string(table_id), options));
  return logged::CreateTable(pool, table_id, options);
}

Status DropHashTable(pm::Pool& pool, const std::string& table_name, uint64_t root_offset) {
  if (logged::IsLoggedRoot(pool, root_offset)) {
    return logged::DropTable(pool, table_name, root_offset);
  }
  return DropTable(pool, table_name, root_offset);
}

Result<std::vector<tables::TableExtent>> HashExtents(const pm::Pool& pool,
                                                     const std::string& table_name,
                                                     uint64_t root_offset, bool require_allocated) {
  if (logged::IsLoggedRoot(pool, root_offset)) {
    return logged::LoggedExtents(pool, table_name, root_offset, require_allocated);
  }
  return GphashExtents(pool, table_name, root_offset, require_allocated);
}

Status VerifyHash(const pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                  uint64_t root_offset, recovery::Report& report,
                  const recovery::ProgressFn& progress) {
  if (logged::IsLoggedRoot(pool, root_offset)) {
    return logged::VerifyLogged(pool, table_name, table_id, root_offset, report, progress);
  }
  return VerifyGphash(pool, table_name, table_id, root_offset, report, progress);
}

Status RepairHash(pm::Pool& pool, const std::string& table_name, uint64_t table_id,
                  uint64_t root_offset, recovery::Report& report,
                  const recovery::ProgressFn& progress) {
  if (logged::IsLoggedRoot(pool, root_offset)) {
    return logged::RepairLogged(pool, table_name, table_id, root_offset, report, progress);
  }
  return RepairGphash(pool, table_name, table_id, root_offset, report, progress);
}

// A logged table: its core over an index on the context's backend (the
// volatile hash table: libcuckoo on the CPU, the GPU slab hash on CUDA). On
// CUDA an index that device memory cannot hold is OutOfDeviceMemory saying
// so (under kAuto the engine then opens the table on the CPU).
Result<std::unique_ptr<Table>> OpenLogged(const tables::OpenContext& context,
                                          const format::CatalogEntry& entry,
                                          const TableOptions& options) {
  const bool on_gpu = context.backend == gpkv::Backend::kCuda;
#if !GPKV_HAVE_CUDA
  if (on_gpu) {
    return Status::Unsupported(context.pool->path() + ": table '" + std::string(entry.name) +
                               "': this build of gpkv has no CUDA backend");
  }
#endif
  auto make_index = [&](uint64_t expected_keys) -> Result<std::unique_ptr<Table>> {
    TableOptions index_options = options;
    index_options.expected_keys = expected_keys;
    auto index = tables::OpenHashIndex(context, entry.name, index_options);
    if (on_gpu && index.status().code() == Code::kOutOfDeviceMemory) {
      return Status::OutOfDeviceMemory(
          index.status().message() + " (the index of a logged hash table of " +
          std::to_string(expected_keys) +
          " keys does not fit device memory; a hash table written in place, whose index lives "
          "in the pool, runs on the GPU in direct or staged mode)");
    }
    return index;
  };
  std::unique_ptr<logged::DeviceRecordWriter> device_records;
  logged::ImageWriterFactory make_image_writer;
#if GPKV_HAVE_CUDA
  if (on_gpu) {
    device_records = logged::gpu::MakeDeviceRecordWriter(*context.pool, context.cuda_device);
    pm::Pool* pool = context.pool;
    make_image_writer = [pool](uint64_t table_id, uint32_t key_size, uint32_t value_size,
                               int threads) {
      return logged::gpu::MakeDeviceImageWriter(*pool, table_id, key_size, value_size, threads);
    };
  }
#endif
  auto core = logged::Core::Open(*context.pool, entry.name, entry.root_offset, make_index,
                                 context.cpu_threads, context.report, std::move(device_records),
                                 make_image_writer);
  if (!core.ok()) return core.status();
  std::unique_ptr<logged::DeviceBatches> device_batches;
#if GPKV_HAVE_CUDA
  if (on_gpu) device_batches = logged::gpu::MakeDeviceBatches(context.cuda_device);
#endif
  return std::unique_ptr<Table>(std::make_unique<logged::LoggedTable>(
      entry.name, options, std::move(*core), std::move(device_batches),
      context.hash_gpu.logged_device_copy_min_ops));
}

class GphashFamily final : public tables::PersistentFamily {
 public:
  GphashFamily()
      : PersistentFamily(kFamilyName, TableKind::kHash, Cli(),
                         {&CheckHashOptions, &CreateHashTable, &DropHashTable, &HashExtents,
                          &VerifyHash, &RepairHash}) {}

  void EncodeParams(const TableOptions& options,
                    uint8_t (&params)[format::kCatalogParamsSize]) const override {
    gphash::CatalogParams block{};
    block.levels = options.hash.levels;
    block.hash_locations = options.hash.hash_locations;
    block.slots_per_bucket = options.hash.slots_per_bucket;
    if (logged::IsLogged(options)) {
      block.log2_batch = static_cast<uint8_t>(logged::Log2Batch(options));
      block.log_batches = static_cast<uint16_t>(options.hash_log.log_batches);
    }
    std::memcpy(params, &block, sizeof(block));
  }

  Status DecodeParams(const std::string& where, const uint8_t (&params)[format::kCatalogParamsSize],
                      TableOptions* options) const override {
    gphash::CatalogParams block;
    std::memcpy(&block, params, sizeof(block));
    options->hash.levels = block.levels;
    options->hash.hash_locations = block.hash_locations;
    options->hash.slots_per_bucket = block.slots_per_bucket;
    options->hash.initial_top_buckets = 0;
    options->hash_log.log_batches = block.log_batches;
    if (block.log_batches != 0) {
      if (block.log2_batch >= 64) {
        return Status::Corruption(where + ": batch entries 2^" + std::to_string(block.log2_batch) +
                                  " is out of range");
      }
      options->hash_log.batch_entries = uint64_t{1} << block.log2_batch;
    } else if (block.log2_batch != 0) {
      return Status::Corruption(where + ": an in-place hash table with batch entries");
    }
    return tables::CheckDecodedParams(where, CheckHashOptions(where, *options), block.reserved);
  }

  Result<std::unique_ptr<Table>> Open(const tables::OpenContext& context,
                                      const format::CatalogEntry& entry,
                                      const TableOptions& options) const override {
    if (logged::IsLogged(options)) return OpenLogged(context, entry, options);
#if GPKV_HAVE_CUDA
    if (context.backend == gpkv::Backend::kCuda) return OpenOnGpu(context, entry, options);
#endif
    auto cpu = cpu::CpuBackend::Open(*context.pool, entry.name, entry.root_offset,
                                     context.cpu_threads, context.report);
    if (!cpu.ok()) return cpu.status();
    return std::unique_ptr<Table>(
        std::make_unique<GphashTable>(entry.name, options, std::move(*cpu)));
  }

  Result<format::CatalogEntry> Salvage(const pm::Pool& pool, const format::ExtentEntry& root_extent,
                                       const std::string& name) const override {
    if (logged::IsLoggedRoot(pool, root_extent.offset)) {
      return SalvageLogged(pool, root_extent, name);
    }
    auto view = gphash::ReadGphash(pool, name, root_extent.offset, /*require_allocated=*/false);
    if (!view.ok()) return view.status();
    TableOptions options;
    format::CatalogEntry entry = tables::SalvagedEntry(*this, *view, &options);
    options.hash.levels = static_cast<uint8_t>(view->geometry_levels);
    options.hash.hash_locations = static_cast<uint8_t>(view->geo.hash_locations);
    options.hash.slots_per_bucket = static_cast<uint8_t>(view->geo.slots_per_bucket);
    EncodeParams(options, entry.params);
    return entry;
  }

 private:
  Result<format::CatalogEntry> SalvageLogged(const pm::Pool& pool,
                                             const format::ExtentEntry& root_extent,
                                             const std::string& name) const {
    auto view = logged::ReadLoggedRoot(pool, name, root_extent.offset,
                                       /*require_allocated=*/false);
    if (!view.ok()) return view.status();
    TableOptions options;
    format::CatalogEntry entry = tables::SalvagedEntry(*this, *view, &options);
    options.expected_keys = view->expected_keys;
    entry.expected_keys = view->expected_keys;
    options.hash_log.log_batches = view->log_batches;
    options.hash_log.batch_entries = view->batch_entries();
    EncodeParams(options, entry.params);
    return entry;
  }
};

}  // namespace

const tables::TableFamily& Family() { return tables::Instance<GphashFamily>(); }

}  // namespace gpkv::gphash
