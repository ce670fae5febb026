#include "tables/gphash/gpu/staged_apply.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>

namespace gpkv::gphash::gpu {
namespace {

// Below this many stores one thread applies them (thread start-up costs more).
constexpr size_t kParallelStores = size_t{1} << 14;

void ApplyStore(pm::Pool& pool, const StagedStore& store) {
  auto* word = pool.At<uint64_t>(store.offset_and_kind & ~kStagedKindMask);
  if ((store.offset_and_kind & kStagedKindMask) == kStagedData) {
    __atomic_store_n(word, store.word, __ATOMIC_RELAXED);
    pool.Persist(word, sizeof(uint64_t));
  } else {
    pool.Publish(word, store.word);
  }
}

void ApplyPass(pm::Pool& pool, const StagedStore* stores, size_t count, uint64_t kind) {
  const auto run = [&](size_t i) {
    if ((stores[i].offset_and_kind & kStagedKindMask) == kind) ApplyStore(pool, stores[i]);
  };
  if (count < kParallelStores) {
    for (size_t i = 0; i < count; ++i) run(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < count; ++i) run(i);
}

}  // namespace

Status ApplyStagedStores(pm::Pool& pool, const StagedStore* stores, size_t count,
                         const std::string& where, bool in_order) {
  for (size_t i = 0; i < count; ++i) {
    const uint64_t offset = stores[i].offset_and_kind & ~kStagedKindMask;
    const uint64_t kind = stores[i].offset_and_kind & kStagedKindMask;
    if (kind > kStagedEmpty || offset < sizeof(uint64_t) || offset > pool.size() - 8) {
      char text[160];
      std::snprintf(text, sizeof(text),
                    ": staged store %zu of %zu names pool offset 0x%" PRIx64 " (kind %" PRIu64
                    "), outside the pool; nothing of the launch was applied",
                    i, count, offset, kind);
      return Status::Corruption(where + text);
    }
  }
  if (in_order) {
    for (size_t i = 0; i < count; ++i) ApplyStore(pool, stores[i]);
    return Status::OK();
  }
  ApplyPass(pool, stores, count, kStagedData);
  ApplyPass(pool, stores, count, kStagedPublish);
  ApplyPass(pool, stores, count, kStagedEmpty);
  return Status::OK();
}

}  // namespace gpkv::gphash::gpu
