#include "tables/gphash/table.h"

#include <cstring>

namespace gpkv::engine {
#if GPKV_HAVE_CUDA
namespace {

// BatchOptions::stream is a cudaStream_t passed opaquely.
CUstream_st* Stream([[maybe_unused]] const BatchOptions& options) {
  return static_cast<CUstream_st*>(options.stream);
}

}  // namespace
#endif

PersistentHashTable::PersistentHashTable(std::string name, TableOptions options,
                                         std::string pool_path, bool read_only,
                                         std::unique_ptr<cpu::Gphash> backend)
    : name_(std::move(name)),
      options_(options),
      pool_path_(std::move(pool_path)),
      read_only_(read_only),
      cpu_(std::move(backend)) {}

#if GPKV_HAVE_CUDA
PersistentHashTable::PersistentHashTable(std::string name, TableOptions options,
                                         std::string pool_path, bool read_only,
                                         std::unique_ptr<gpu::GphashGpu> backend)
    : name_(std::move(name)),
      options_(options),
      pool_path_(std::move(pool_path)),
      read_only_(read_only),
      gpu_(std::move(backend)) {}

#define GPKV_DISPATCH(call, gpu_call) return gpu_ ? gpu_->gpu_call : cpu_->call
#else
#define GPKV_DISPATCH(call, gpu_call) return cpu_->call
#endif

Status PersistentHashTable::CheckKeys(ConstBytes keys, size_t* count) const {
  if (keys.size() % options_.key_size != 0) {
    return Status::InvalidArgument(
        pool_path_ + ": table '" + name_ + "': " + std::to_string(keys.size()) +
        " key bytes is not a multiple of the key size " + std::to_string(options_.key_size));
  }
  if (keys.data() == nullptr && keys.size() != 0) {
    return Status::InvalidArgument(pool_path_ + ": table '" + name_ + "': null keys");
  }
  *count = keys.size() / options_.key_size;
  return Status::OK();
}

Status PersistentHashTable::CheckSize(const char* what, size_t actual, size_t expected,
                                      const void* data) const {
  if (actual != expected) {
    return Status::InvalidArgument(pool_path_ + ": table '" + name_ + "': " + what + " holds " +
                                   std::to_string(actual) + " bytes, the batch needs " +
                                   std::to_string(expected));
  }
  if (data == nullptr && expected != 0) {
    return Status::InvalidArgument(pool_path_ + ": table '" + name_ + "': null " + what);
  }
  return Status::OK();
}

Status PersistentHashTable::CheckWritable() const {
  if (read_only_) {
    return Status::InvalidArgument(pool_path_ + ": table '" + name_ +
                                   "': the pool is open read-only");
  }
  return Status::OK();
}

Status PersistentHashTable::Put(ConstBytes keys, ConstBytes values,
                                [[maybe_unused]] const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckWritable());
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  GPKV_RETURN_IF_ERROR(
      CheckSize("values", values.size(), count * options_.value_size, values.data()));
  if (count == 0) return Status::OK();
  GPKV_DISPATCH(Put(keys.bytes(), values.bytes(), count),
                Put(keys.bytes(), values.bytes(), count, Stream(options)));
}

Status PersistentHashTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                                [[maybe_unused]] const BatchOptions& options) {
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  GPKV_RETURN_IF_ERROR(
      CheckSize("values", values.size(), count * options_.value_size, values.data()));
  if (!found.empty()) GPKV_RETURN_IF_ERROR(CheckSize("found", found.size(), count, found.data()));
  if (count == 0) return Status::OK();
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  GPKV_DISPATCH(Get(keys.bytes(), values.bytes(), found_bytes, count),
                Get(keys.bytes(), values.bytes(), found_bytes, count, Stream(options)));
}

Status PersistentHashTable::Erase(ConstBytes keys, MutableBytes erased,
                                  [[maybe_unused]] const BatchOptions& options) {
  GPKV_RETURN_IF_ERROR(CheckWritable());
  size_t count = 0;
  GPKV_RETURN_IF_ERROR(CheckKeys(keys, &count));
  if (!erased.empty()) {
    GPKV_RETURN_IF_ERROR(CheckSize("erased", erased.size(), count, erased.data()));
  }
  if (count == 0) return Status::OK();
  uint8_t* erased_bytes = erased.empty() ? nullptr : erased.bytes();
  GPKV_DISPATCH(Erase(keys.bytes(), erased_bytes, count),
                Erase(keys.bytes(), erased_bytes, count, Stream(options)));
}

Result<TableStats> PersistentHashTable::Stats() { GPKV_DISPATCH(Stats(), Stats()); }

Status PersistentHashTable::Scan(const ScanVisitor& visit) {
  GPKV_DISPATCH(Scan(visit), Scan(visit));
}

}  // namespace gpkv::engine
