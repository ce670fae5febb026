// Key hashing shared by every backend: which buckets a key may live in and
// its fingerprint are pure functions of (key bytes, table seed), so a pool
// written on the CPU is read the same way on the GPU.
//
// HashKey mixes the key 8 bytes at a time (little-endian words) with a
// 64x64->128 multiply folding step (as wyhash / rapidhash do) and returns two
// independent 64-bit hashes. Keys are 8, 16 or 32 bytes.
#pragma once

#include <cstdint>
#include <cstring>

#include "format/hd.h"

namespace gpkv::format {

struct KeyHash {
  uint64_t primary;    // bucket choice
  uint64_t secondary;  // second bucket choice, fingerprint
};

GPKV_HD uint64_t Mix64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  uint64_t lo = a * b;
  uint64_t hi = __umul64hi(a, b);
#else
  unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  uint64_t lo = static_cast<uint64_t>(product);
  uint64_t hi = static_cast<uint64_t>(product >> 64);
#endif
  return lo ^ hi;
}

GPKV_HD uint64_t LoadWord(const uint8_t* p) {
  uint64_t word;
  memcpy(&word, p, sizeof(word));  // x86 and CUDA are little-endian
  return word;
}

constexpr uint64_t kHashP0 = 0xa0761d6478bd642fULL;
constexpr uint64_t kHashP1 = 0xe7037ed1a0b428dbULL;
constexpr uint64_t kHashP2 = 0x8ebc6af09c88c6e3ULL;
constexpr uint64_t kHashP3 = 0x589965cc75374cc3ULL;

// REQUIRES: key_size is a multiple of 8.
GPKV_HD KeyHash HashKey(const uint8_t* key, uint32_t key_size, uint64_t seed) {
  uint64_t h = seed ^ kHashP0 ^ key_size;
  for (uint32_t i = 0; i < key_size; i += 8) {
    h = Mix64(LoadWord(key + i) ^ kHashP1, h ^ kHashP2);
  }
  KeyHash out;
  out.primary = Mix64(h ^ kHashP3, kHashP1);
  out.secondary = Mix64(h ^ kHashP0, kHashP2 ^ seed);
  return out;
}

}  // namespace gpkv::format
