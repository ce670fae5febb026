#include "tables/slab_hash/table.h"

#include "tables/slab_hash/cpu/backend.h"
#if GPKV_HAVE_CUDA
#include "tables/slab_hash/gpu/backend.h"
#endif

namespace gpkv::slab_hash {
namespace {

// Expected keys of a CPU table that RAM cannot hold at its catalog size.
constexpr uint64_t kFallbackExpectedKeys = uint64_t{1} << 16;

Result<std::unique_ptr<Backend>> OpenOnCpu(const std::string& where, TableOptions options,
                                           int cpu_threads) {
  auto backend = cpu::CreateCpuBackend(options, cpu_threads);
  if (backend.status().code() == Code::kOutOfDeviceMemory &&
      options.expected_keys > kFallbackExpectedKeys) {
    options.expected_keys = kFallbackExpectedKeys;
    backend = cpu::CreateCpuBackend(options, cpu_threads);
  }
  if (!backend.ok()) {
    return Status(backend.status().code(), where + ": " + backend.status().message());
  }
  return std::move(*backend);
}

}  // namespace

Result<std::unique_ptr<Table>> OpenEmptyTable(const std::string& where, const std::string& name,
                                              const TableOptions& options, gpkv::Backend backend,
                                              int cpu_threads) {
  if (backend == gpkv::Backend::kCuda) {
#if GPKV_HAVE_CUDA
    auto on_gpu = gpu::GpuBackend::Create(options);
    if (!on_gpu.ok()) {
      return Status(on_gpu.status().code(), where + ": " + on_gpu.status().message());
    }
    return std::unique_ptr<Table>(std::make_unique<SlabHashTable>(
        where, name, options, std::unique_ptr<Backend>(std::move(*on_gpu))));
#else
    return Status::Unsupported(where + ": this build of gpkv has no CUDA backend");
#endif
  }
  auto on_cpu = OpenOnCpu(where, options, cpu_threads);
  if (!on_cpu.ok()) return on_cpu.status();
  return std::unique_ptr<Table>(
      std::make_unique<SlabHashTable>(where, name, options, std::move(*on_cpu)));
}

TableStats PublicStats(const Stats& stats) {
  TableStats out;
  out.kind = TableKind::kHash;
  out.durability = Durability::kVolatile;
  out.family = kFamilyName;
  out.keys = stats.keys;
  out.bytes = stats.bytes;
  auto add = [&](const char* name, double value) {
    out.properties.push_back({std::string(kFamilyName) + "." + name, value});
  };
  add("buckets", static_cast<double>(stats.buckets));
  add("slabs", static_cast<double>(stats.slabs));
  add("slots", static_cast<double>(stats.slots));
  add("dead-slots", static_cast<double>(stats.dead_slots));
  add("load-factor", stats.load_factor);
  add("memory-utilisation", stats.memory_utilisation);
  add("super-blocks", static_cast<double>(stats.super_blocks));
  add("rehashes", static_cast<double>(stats.rehashes));
  add("rehash-seconds", stats.rehash_seconds);
  add("flushes", static_cast<double>(stats.flushes));
  return out;
}

SlabHashTable::SlabHashTable(std::string where, std::string name, TableOptions options,
                             std::unique_ptr<Backend> backend)
    : where_(std::move(where)),
      name_(std::move(name)),
      options_(options),
      backend_(std::move(backend)) {}

Status SlabHashTable::Named(Status status) const {
  if (status.ok()) return status;
  return Status(status.code(), where_ + ": " + status.message());
}

Status SlabHashTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  return Named(backend_->Put(keys.bytes(), values.bytes(), count, options.stream));
}

Status SlabHashTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                          const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  return Named(backend_->Get(keys.bytes(), values.bytes(), found_bytes, count, options.stream));
}

Status SlabHashTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  uint8_t* erased_bytes = erased.empty() ? nullptr : erased.bytes();
  return Named(backend_->Erase(keys.bytes(), erased_bytes, count, options.stream));
}

Result<TableStats> SlabHashTable::Stats() {
  auto stats = backend_->Stats();
  if (!stats.ok()) return Named(stats.status());
  return PublicStats(*stats);
}

Status SlabHashTable::Scan(const ScanVisitor& visit) { return Named(backend_->Scan(visit)); }

}  // namespace gpkv::slab_hash
