#include "tables/slab_hash/table.h"

#include "tables/slab_hash/cpu/backend.h"
#include "tables/stats_builder.h"
#if GPKV_HAVE_CUDA
#include "tables/slab_hash/gpu/backend.h"
#endif

namespace gpkv::slab_hash {
namespace {

// Expected keys of a CPU table that RAM cannot hold at its catalog size.
constexpr uint64_t kFallbackExpectedKeys = uint64_t{1} << 16;

Result<std::unique_ptr<Backend>> OpenOnCpu(TableOptions options, int cpu_threads) {
  auto backend = cpu::CreateCpuBackend(options, cpu_threads);
  if (backend.status().code() == Code::kOutOfDeviceMemory &&
      options.expected_keys > kFallbackExpectedKeys) {
    options.expected_keys = kFallbackExpectedKeys;
    backend = cpu::CreateCpuBackend(options, cpu_threads);
  }
  return backend;
}

}  // namespace

Result<std::unique_ptr<Table>> OpenEmptyTable(const std::string& where, const std::string& name,
                                              const TableOptions& options, gpkv::Backend backend,
                                              int cpu_threads, int cuda_device) {
  if (backend == gpkv::Backend::kCuda) {
#if GPKV_HAVE_CUDA
    return tables::OpenFront<SlabHashTable>(where, name, options,
                                            gpu::GpuBackend::Create(options, cuda_device));
#else
    (void)cuda_device;
    return Status::Unsupported(where + ": this build of gpkv has no CUDA backend");
#endif
  }
  return tables::OpenFront<SlabHashTable>(where, name, options, OpenOnCpu(options, cpu_threads));
}

TableStats PublicStats(const Stats& stats) {
  tables::StatsBuilder out(kFamilyName, TableKind::kHash, Durability::kVolatile, stats.keys,
                           stats.bytes);
  out.Add("buckets", static_cast<double>(stats.buckets));
  out.Add("slabs", static_cast<double>(stats.slabs));
  out.Add("slots", static_cast<double>(stats.slots));
  out.Add("dead-slots", static_cast<double>(stats.dead_slots));
  out.Add("load-factor", stats.load_factor);
  out.Add("memory-utilisation", stats.memory_utilisation);
  out.Add("super-blocks", static_cast<double>(stats.super_blocks));
  out.Add("rehashes", static_cast<double>(stats.rehashes));
  out.Add("rehash-seconds", stats.rehash_seconds);
  out.Add("flushes", static_cast<double>(stats.flushes));
  return out.Take();
}

SlabHashTable::SlabHashTable(std::string where, std::string name, TableOptions options,
                             std::unique_ptr<Backend> backend)
    : HashFamilyTable(std::move(name), options, std::move(backend), std::move(where)) {}

Result<TableStats> SlabHashTable::Stats() {
  auto stats = backend().Stats();
  if (!stats.ok()) return Named(stats.status());
  return PublicStats(*stats);
}

Status SlabHashTable::Scan(const ScanVisitor& visit) { return Named(backend().Scan(visit)); }

int SlabHashTable::cuda_device() const { return backend().cuda_device(); }

Status SlabHashTable::ScanIntoDevice(uint64_t* keys, uint64_t* values, uint64_t capacity,
                                     uint64_t* pairs) {
  return Named(backend().ScanIntoDevice(keys, values, capacity, pairs));
}

Status SlabHashTable::PutWhile(ConstBytes keys, ConstBytes values,
                               const std::function<void()>& meanwhile) {
  return Named(backend().PutWhile(keys.bytes(), values.bytes(), CountOf(keys), meanwhile));
}

Status SlabHashTable::Mixed(const uint8_t* ops, const uint8_t* keys, uint8_t* values,
                            uint8_t* results, size_t count, void* stream) {
  return Named(backend().Mixed(ops, keys, values, results, count, stream));
}

}  // namespace gpkv::slab_hash
