#include "tables/gphash/family.h"

#include <cstring>

#include "pm/extent_allocator.h"
#include "tables/catalog_entry.h"
#include "tables/gphash/check.h"
#include "tables/gphash/cli.h"
#include "tables/gphash/cpu/backend.h"
#include "tables/gphash/layout.h"
#include "tables/gphash/reader.h"
#include "tables/gphash/root.h"
#include "tables/gphash/table.h"
#include "tables/persistent_family.h"
#if GPKV_HAVE_CUDA
#include "tables/gphash/gpu/backend.h"
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

class GphashFamily final : public tables::PersistentFamily {
 public:
  GphashFamily()
      : PersistentFamily(kFamilyName, TableKind::kHash, Cli(),
                         {&gphash::CheckOptions, &CreateTable, &DropTable, &GphashExtents,
                          &VerifyGphash, &RepairGphash}) {}

  void EncodeParams(const TableOptions& options,
                    uint8_t (&params)[format::kCatalogParamsSize]) const override {
    gphash::CatalogParams block{};
    block.levels = options.hash.levels;
    block.hash_locations = options.hash.hash_locations;
    block.slots_per_bucket = options.hash.slots_per_bucket;
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
    return tables::CheckDecodedParams(where, gphash::CheckOptions(where, *options), block.reserved);
  }

  Result<std::unique_ptr<Table>> Open(const tables::OpenContext& context,
                                      const format::CatalogEntry& entry,
                                      const TableOptions& options) const override {
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
};

}  // namespace

const tables::TableFamily& Family() { return tables::Instance<GphashFamily>(); }

}  // namespace gpkv::gphash
