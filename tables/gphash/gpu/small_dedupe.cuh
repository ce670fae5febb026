// The duplicate pass of a small write batch (at most kSmallDedupeOps
// operations) in one block's shared memory, for MarkSurvivorsSmallKernel
// (host_staging.cu) and PutSmallKernel (kernels.cu): each key claims a slot
// of a table (linear probing from its hash) or joins the slot of an equal
// key, where the survivor's index is kept by atomicMax (the last put of a key
// wins) or atomicMin (the first erase of a key reports it).
//
// The keys may be in host memory, read over the link (a small batch's arrays
// used in place): a thread loads all its keys before it uses any (one round
// trip, not one per key), and two keys are compared only when the 32-bit
// tags of their hashes agree, so a collision in the table reads no other
// key.
//
// Who may include: the GPHash GPU backend's .cu files.
#pragma once

#include <cstdint>

#include "tables/gphash/gpu/host_staging.h"

namespace gpkv::gpu::small_dedupe {

constexpr uint32_t kSlots = 2 * kSmallDedupeOps;  // a power of two
constexpr uint32_t kEmptySlot = 0xffffffffu;

// The block's shared memory for the pass (48 KiB).
struct Shared {
  uint32_t table[kSlots];
  uint32_t tags[kSmallDedupeOps];
};

// What one thread keeps of the pass: the keys it took (key i = threadIdx.x +
// k * kThreads is its k-th) and their slots.
template <int kKeyWords, int kThreads>
struct ThreadKeys {
  static constexpr int kPerThread = static_cast<int>(kSmallDedupeOps) / kThreads;
  uint64_t words[kPerThread][kKeyWords];
  uint32_t slot_of[kPerThread];
};

template <int kKeyWords>
__device__ __forceinline__ bool SameKey(const uint64_t* keys, uint32_t a, uint32_t b) {
  bool equal = true;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) {
    equal &= keys[uint64_t{a} * kKeyWords + w] == keys[uint64_t{b} * kKeyWords + w];
  }
  return equal;
}

// Runs the pass over the batch's `count` keys with all kThreads threads of
// the block. Afterwards (it ends with __syncthreads), key i survives when
// shared.table[mine.slot_of[k]] == i. REQUIRES: count <= kSmallDedupeOps.
template <int kKeyWords, int kThreads>
__device__ void Build(const uint64_t* keys, uint32_t count, bool keep_first, Shared& shared,
                      ThreadKeys<kKeyWords, kThreads>& mine) {
  constexpr int kPerThread = ThreadKeys<kKeyWords, kThreads>::kPerThread;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = threadIdx.x + k * kThreads;
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) {
      mine.words[k][w] = i < count ? keys[uint64_t{i} * kKeyWords + w] : 0;
    }
  }
  for (uint32_t s = threadIdx.x; s < kSlots; s += kThreads) shared.table[s] = kEmptySlot;
  uint64_t mixed[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = threadIdx.x + k * kThreads;
    mixed[k] = 0;
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) {
      mixed[k] = (mixed[k] ^ mine.words[k][w]) * 0x9e3779b97f4a7c15ull;
    }
    if (i < count) shared.tags[i] = static_cast<uint32_t>(mixed[k]);
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = threadIdx.x + k * kThreads;
    if (i >= count) break;
    uint32_t slot = static_cast<uint32_t>(mixed[k] >> 40) & (kSlots - 1);
    for (;;) {
      const uint32_t holder = atomicCAS(&shared.table[slot], kEmptySlot, i);
      if (holder == kEmptySlot) break;
      if (shared.tags[holder] == shared.tags[i] && SameKey<kKeyWords>(keys, holder, i)) {
        if (keep_first) {
          atomicMin(&shared.table[slot], i);
        } else {
          atomicMax(&shared.table[slot], i);
        }
        break;
      }
      slot = (slot + 1) & (kSlots - 1);
    }
    mine.slot_of[k] = slot;
  }
  __syncthreads();
}

}  // namespace gpkv::gpu::small_dedupe
