#include "tables/lsm/family.h"

#include <cstring>

#include "tables/catalog_entry.h"
#include "tables/lsm/check.h"
#include "tables/lsm/cli.h"
#include "tables/lsm/core.h"
#include "tables/lsm/cpu/backend.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/reader.h"
#include "tables/lsm/root.h"
#include "tables/lsm/table.h"
#include "tables/persistent_family.h"
#if GPKV_HAVE_CUDA
#include "tables/lsm/gpu/backend.h"
#endif

namespace gpkv::lsm {
namespace {

// The table over `backend`: its core opened (recovery included), the front.
Result<std::unique_ptr<Table>> OpenWith(const tables::OpenContext& context,
                                        const format::CatalogEntry& entry,
                                        const TableOptions& options,
                                        std::unique_ptr<Backend> backend) {
  auto core = Core::Open(*context.pool, entry.name, entry.root_offset, options, std::move(backend),
                         context.report);
  if (!core.ok()) return core.status();
  return std::unique_ptr<Table>(std::make_unique<LsmTable>(entry.name, options, std::move(*core)));
}

class LsmFamily final : public tables::PersistentFamily {
 public:
  LsmFamily()
      : PersistentFamily(
            kFamilyName, TableKind::kOrdered, Cli(),
            {&lsm::CheckOptions, &CreateTable, &DropTable, &LsmExtents, &VerifyLsm, &RepairLsm}) {}

  void EncodeParams(const TableOptions& options,
                    uint8_t (&params)[format::kCatalogParamsSize]) const override {
    CatalogParams block{};
    block.log2_batch = static_cast<uint8_t>(Log2Batch(options));
    block.max_dead_percent = options.ordered.max_dead_percent;
    block.log_batches = static_cast<uint16_t>(options.ordered.log_batches);
    std::memcpy(params, &block, sizeof(block));
  }

  Status DecodeParams(const std::string& where, const uint8_t (&params)[format::kCatalogParamsSize],
                      TableOptions* options) const override {
    CatalogParams block;
    std::memcpy(&block, params, sizeof(block));
    if (block.log2_batch < kMinLog2Batch || block.log2_batch > kMaxLog2Batch) {
      return Status::Corruption(where + ": batch entries 2^" + std::to_string(block.log2_batch) +
                                " is out of range");
    }
    options->ordered.batch_entries = uint64_t{1} << block.log2_batch;
    options->ordered.max_dead_percent = block.max_dead_percent;
    options->ordered.log_batches = block.log_batches == 0 ? 1 : block.log_batches;
    return tables::CheckDecodedParams(where, lsm::CheckOptions(where, *options), block.reserved);
  }

  // Both backends read and write the same bytes: the table opens on the
  // context's backend. On CUDA, a table the GPU cannot take (no usable
  // device, no device memory for its runs) is Unsupported or
  // OutOfDeviceMemory: the engine decides whether the CPU takes it.
  Result<std::unique_ptr<Table>> Open(const tables::OpenContext& context,
                                      const format::CatalogEntry& entry,
                                      const TableOptions& options) const override {
#if GPKV_HAVE_CUDA
    if (context.backend == gpkv::Backend::kCuda) {
      auto backend = gpu::GpuBackend::Create(*context.pool, entry.name, context.cpu_threads,
                                             context.ordered_gpu, context.cuda_device);
      if (!backend.ok()) return backend.status();
      return OpenWith(context, entry, options, std::move(*backend));
    }
#endif
    return OpenWith(context, entry, options,
                    std::make_unique<cpu::CpuBackend>(*context.pool, context.cpu_threads));
  }

  Result<format::CatalogEntry> Salvage(const pm::Pool& pool, const format::ExtentEntry& root_extent,
                                       const std::string& name) const override {
    auto view = ReadLsmRoot(pool, name, root_extent.offset, /*require_allocated=*/false);
    if (!view.ok()) return view.status();
    TableOptions options;
    format::CatalogEntry entry = tables::SalvagedEntry(*this, *view, &options);
    options.ordered.batch_entries = view->batch_entries();
    options.ordered.log_batches = view->log_batches;
    entry.expected_keys = options.expected_keys;
    EncodeParams(options, entry.params);
    return entry;
  }
};

}  // namespace

const tables::TableFamily& Family() { return tables::Instance<LsmFamily>(); }

}  // namespace gpkv::lsm
