// Instantiates the hot path (tables/gphash/cpu/kernel.h) for the nine supported
// geometries: 4, 8 or 16 slots per bucket x 8, 16 or 32 key bytes.
#include "tables/gphash/cpu/kernel.h"

namespace gpkv::gphash::cpu {
namespace {

template <uint32_t S, uint32_t K>
const Kernels* KernelsFor() {
  using Ops = kernel::Ops<S, K>;
  static const Kernels kernels = {&Ops::PutWorker, &Ops::EraseWorker, &Ops::GetRange, &Ops::PutOne};
  return &kernels;
}

template <uint32_t S>
const Kernels* KernelsForKey(uint32_t key_size) {
  switch (key_size) {
    case 8:
      return KernelsFor<S, 8>();
    case 16:
      return KernelsFor<S, 16>();
    case 32:
      return KernelsFor<S, 32>();
  }
  return nullptr;
}

}  // namespace

const Kernels* SelectKernels(uint32_t slots_per_bucket, uint32_t key_size) {
  static_assert(gphash::kMinSlotsPerBucket == 4 && gphash::kMaxSlotsPerBucket == 16 &&
                    format::kMinKeySize == 8 && format::kMaxKeySize == 32,
                "the kernels are instantiated for every geometry of tables/gphash/layout.h");
  switch (slots_per_bucket) {
    case 4:
      return KernelsForKey<4>(key_size);
    case 8:
      return KernelsForKey<8>(key_size);
    case 16:
      return KernelsForKey<16>(key_size);
  }
  return nullptr;
}

}  // namespace gpkv::gphash::cpu
