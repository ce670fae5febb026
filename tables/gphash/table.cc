#include "tables/gphash/table.h"

#include "tables/gphash/layout.h"

namespace gpkv::gphash {
#if GPKV_HAVE_CUDA
namespace {

// BatchOptions::stream is a cudaStream_t passed opaquely.
CUstream_st* Stream(const BatchOptions& options) {
  return static_cast<CUstream_st*>(options.stream);
}

}  // namespace
#endif

TableStats PublicStats(const Stats& stats) {
  TableStats out;
  out.kind = TableKind::kHash;
  out.durability = Durability::kPersistent;
  out.family = kFamilyName;
  out.keys = stats.keys;
  out.bytes = format::kGphashRootSize + stats.index_bytes + stats.value_bytes;
  auto add = [&](const char* name, double value) {
    out.properties.push_back({std::string(kFamilyName) + "." + name, value});
  };
  add("slots", static_cast<double>(stats.slots));
  add("load-factor", stats.load_factor);
  add("levels", stats.levels);
  add("top-buckets", static_cast<double>(stats.top_buckets));
  add("resizes", static_cast<double>(stats.resizes));
  add("index-bytes", static_cast<double>(stats.index_bytes));
  add("value-bytes", static_cast<double>(stats.value_bytes));
  add("resizing", stats.resizing ? 1 : 0);
  return out;
}

GphashTable::GphashTable(std::string name, TableOptions options,
                         std::unique_ptr<cpu::Gphash> backend)
    : name_(std::move(name)), options_(options), cpu_(std::move(backend)) {}

#if GPKV_HAVE_CUDA
GphashTable::GphashTable(std::string name, TableOptions options,
                         std::unique_ptr<gpu::GphashGpu> backend)
    : name_(std::move(name)), options_(options), gpu_(std::move(backend)) {}

#define GPKV_DISPATCH(call, gpu_call) return gpu_ ? gpu_->gpu_call : cpu_->call
#else
#define GPKV_DISPATCH(call, gpu_call) return cpu_->call
#endif

Status GphashTable::Put(ConstBytes keys, ConstBytes values,
                        [[maybe_unused]] const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  GPKV_DISPATCH(Put(keys.bytes(), values.bytes(), count),
                Put(keys.bytes(), values.bytes(), count, Stream(options)));
}

Status GphashTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                        [[maybe_unused]] const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  GPKV_DISPATCH(Get(keys.bytes(), values.bytes(), found_bytes, count),
                Get(keys.bytes(), values.bytes(), found_bytes, count, Stream(options)));
}

Status GphashTable::Erase(ConstBytes keys, MutableBytes erased,
                          [[maybe_unused]] const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  uint8_t* erased_bytes = erased.empty() ? nullptr : erased.bytes();
  GPKV_DISPATCH(Erase(keys.bytes(), erased_bytes, count),
                Erase(keys.bytes(), erased_bytes, count, Stream(options)));
}

Result<TableStats> GphashTable::Stats() {
#if GPKV_HAVE_CUDA
  if (gpu_) return PublicStats(gpu_->Stats());
#endif
  return PublicStats(cpu_->Stats());
}

Status GphashTable::Scan(const ScanVisitor& visit) { GPKV_DISPATCH(Scan(visit), Scan(visit)); }

}  // namespace gpkv::gphash
