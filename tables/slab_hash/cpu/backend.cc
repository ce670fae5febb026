#include "tables/slab_hash/cpu/backend.h"

#include <unistd.h>

#include <string>

#include "tables/slab_hash/cpu/cuckoo_table.h"

namespace gpkv::slab_hash::cpu {
namespace {

// Value words stored per pair: the value size rounded up to 8, 16, 32, 64
// or 128 bytes (five instantiations per key size instead of sixteen).
uint32_t StoredValueWords(uint32_t value_size) {
  uint32_t words = 1;
  while (words * 8 < value_size) words *= 2;
  return words;
}

// The machine's RAM in bytes (0 when unknown).
uint64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? uint64_t(pages) * uint64_t(page_size) : 0;
}

// A table larger than RAM is refused before it is allocated: libcuckoo
// writes every bucket at construction, so an allocation the kernel
// overcommits would end in the OOM killer, not in an error.
template <uint32_t kKeyWords, uint32_t kValueWords>
Result<std::unique_ptr<Backend>> Make(const TableOptions& options, int threads) {
  using Table = CpuBackend<kKeyWords, kValueWords>;
  const uint64_t bytes = Table::InitialBytes(options.expected_keys);
  const uint64_t memory = PhysicalMemory();
  if (memory != 0 && bytes > memory) {
    return Status::OutOfDeviceMemory("slab_hash cpu: a table for " +
                                     std::to_string(options.expected_keys) + " keys takes " +
                                     std::to_string(bytes) + " bytes, more than the machine's " +
                                     std::to_string(memory) + " bytes of RAM");
  }
  return std::unique_ptr<Backend>(std::make_unique<Table>(options, threads));
}

template <uint32_t kKeyWords>
Result<std::unique_ptr<Backend>> MakeForKey(const TableOptions& options, int threads) {
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
  return Status::InvalidArgument("slab_hash cpu: value size " + std::to_string(options.value_size) +
                                 " is not 1..128");
}

}  // namespace

Result<std::unique_ptr<Backend>> CreateCpuBackend(const TableOptions& options, int threads) {
  if (options.value_size < 1 || options.value_size > 128) {
    return Status::InvalidArgument("slab_hash cpu: value size " +
                                   std::to_string(options.value_size) + " is not 1..128");
  }
  try {
    switch (options.key_size) {
      case 8:
        return MakeForKey<1>(options, threads);
      case 16:
        return MakeForKey<2>(options, threads);
      case 32:
        return MakeForKey<4>(options, threads);
    }
  } catch (...) {
    return tables::StatusOfCurrentException("slab_hash cpu: creating a table for " +
                                            std::to_string(options.expected_keys) + " keys");
  }
  return Status::InvalidArgument("slab_hash cpu: key size " + std::to_string(options.key_size) +
                                 " is not 8, 16 or 32");
}

}  // namespace gpkv::slab_hash::cpu
