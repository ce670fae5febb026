#include "tables/slab_hash/cpu/backend.h"

#include <string>

#include "tables/slab_hash/cpu/cuckoo_table.h"

namespace gpkv::slab_hash {
namespace {

// Value words stored per pair: the value size rounded up to 8, 16, 32, 64
// or 128 bytes (five instantiations per key size instead of sixteen).
uint32_t StoredValueWords(uint32_t value_size) {
  uint32_t words = 1;
  while (words * 8 < value_size) words *= 2;
  return words;
}

template <uint32_t kKeyWords, uint32_t kValueWords>
std::unique_ptr<Backend> Make(const TableOptions& options, int threads) {
  return std::make_unique<cuckoo::CuckooTable<kKeyWords, kValueWords>>(options, threads);
}

template <uint32_t kKeyWords>
std::unique_ptr<Backend> MakeForKey(const TableOptions& options, int threads) {
  switch (StoredValueWords(options.value_size)) {
    case 1:
      return Make<kKeyWords, 1>(options, threads);
    case 2:
      return Make<kKeyWords, 2>(options, threads);
    case 4:
      return Make<kKeyWords, 4>(options, threads);
    case 8:
      return Make<kKeyWords, 8>(options, threads);
    case 16:
      return Make<kKeyWords, 16>(options, threads);
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<Backend>> CreateCuckooBackend(const TableOptions& options, int threads) {
  if (options.value_size < 1 || options.value_size > 128) {
    return Status::InvalidArgument("slab_hash cpu: value size " +
                                   std::to_string(options.value_size) + " is not 1..128");
  }
  std::unique_ptr<Backend> backend;
  try {
    switch (options.key_size) {
      case 8:
        backend = MakeForKey<1>(options, threads);
        break;
      case 16:
        backend = MakeForKey<2>(options, threads);
        break;
      case 32:
        backend = MakeForKey<4>(options, threads);
        break;
    }
  } catch (...) {
    return cuckoo::StatusOfCurrentException("slab_hash cpu: creating a table for " +
                                            std::to_string(options.expected_keys) + " keys");
  }
  if (backend == nullptr) {
    return Status::InvalidArgument("slab_hash cpu: key size " + std::to_string(options.key_size) +
                                   " is not 8, 16 or 32");
  }
  return backend;
}

}  // namespace gpkv::slab_hash
