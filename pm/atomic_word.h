// Atomic access to 8-byte words of the pool mapping (slot words, value words,
// key words). C++17 has no std::atomic_ref, and the mapping holds plain
// uint64_t, so these wrap the GCC/Clang __atomic builtins. Every concurrent
// access to the mapping in cpu/ goes through them; persisting is pm::Pool's.
//
// REQUIRES: every address is 8-byte aligned (all slot, key and value words of
// the GPHash layout are).
#pragma once

#include <cstdint>
#include <cstring>

namespace gpkv::pm {

inline uint64_t LoadRelaxed(const void* address) {
  return __atomic_load_n(static_cast<const uint64_t*>(address), __ATOMIC_RELAXED);
}
inline uint64_t LoadAcquire(const void* address) {
  return __atomic_load_n(static_cast<const uint64_t*>(address), __ATOMIC_ACQUIRE);
}
inline void StoreRelaxed(void* address, uint64_t value) {
  __atomic_store_n(static_cast<uint64_t*>(address), value, __ATOMIC_RELAXED);
}
inline void StoreRelease(void* address, uint64_t value) {
  __atomic_store_n(static_cast<uint64_t*>(address), value, __ATOMIC_RELEASE);
}
inline uint64_t Exchange(void* address, uint64_t value) {
  return __atomic_exchange_n(static_cast<uint64_t*>(address), value, __ATOMIC_ACQ_REL);
}
// On failure `expected` receives the current value.
inline bool CompareExchange(void* address, uint64_t& expected, uint64_t desired) {
  return __atomic_compare_exchange_n(static_cast<uint64_t*>(address), &expected, desired, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
// Orders the loads before it with the loads after it (seqlock validation).
inline void LoadFence() { __atomic_thread_fence(__ATOMIC_ACQUIRE); }

// Asks for the cache line holding `address`. A volatile asm rather than
// __builtin_prefetch: GCC 12 at -O2 deletes loops whose only effect is
// __builtin_prefetch (a hint it treats as side-effect free), which silently
// removed all software pipelining of the batch loops.
inline void Prefetch(const void* address) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address, 0, 3);
#endif
}

// An 8-byte word of caller memory, which may be unaligned.
inline uint64_t LoadUnaligned(const uint8_t* address) {
  uint64_t word;
  std::memcpy(&word, address, sizeof(word));
  return word;
}

// Copies `words` 8-byte words from caller memory (any alignment) into the
// mapping without tearing any word.
inline void CopyWordsIn(void* destination, const uint8_t* source, uint32_t words) {
  auto* to = static_cast<uint64_t*>(destination);
  for (uint32_t i = 0; i < words; ++i) StoreRelaxed(to + i, LoadUnaligned(source + 8 * i));
}
// Copies `words` 8-byte words out of the mapping into caller memory.
inline void CopyWordsOut(uint8_t* destination, const void* source, uint32_t words) {
  const auto* from = static_cast<const uint64_t*>(source);
  for (uint32_t i = 0; i < words; ++i) {
    uint64_t word = LoadRelaxed(from + i);
    std::memcpy(destination + 8 * i, &word, sizeof(word));
  }
}

}  // namespace gpkv::pm
