// logged::KeyOrder: the order in which a checkpoint's image holds its pairs
// (layout.h CompareKeys), found by a stable LSD radix sort over the key
// words on CPU threads: the sort of the image writer, which runs behind the
// batches and must finish before the other log half fills.
//
// Who may call: the image writer (image_writer.cc) and tests.
// Thread safety: a plain function; it runs its own OpenMP team.
#pragma once

#include <cstdint>
#include <memory>

namespace gpkv::gphash::logged {

// The indices of the `entries` keys of key_size bytes at `keys` in key order
// (CompareKeys: the key's little-endian words, the last one the most
// significant); equal keys keep their order. Sorts on `threads` threads.
// REQUIRES: key_size is a multiple of 8. Throws std::bad_alloc when its
// scratch cannot be had.
std::unique_ptr<uint64_t[]> KeyOrder(const uint8_t* keys, uint64_t entries, uint32_t key_size,
                                     int threads);

}  // namespace gpkv::gphash::logged
