// 64-bit checksum of on-media metadata (pool header, superblocks, catalog,
// table roots). FNV-1a over the bytes, then a final avalanche. Hand-written
// rather than zlib/xxhash because format/ depends on the standard library
// alone and a recovery tool must be able to recompute it from FORMAT.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/hd.h"

namespace gpkv::format {

GPKV_HD uint64_t Checksum64(const void* data, size_t size) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

}  // namespace gpkv::format
