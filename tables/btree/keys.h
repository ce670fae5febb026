// The order of keys in an ordered table (gpkv/table.h): unsigned
// little-endian integers of key_size bytes, the last 8-byte word the most
// significant. Written once for the core and the backends.
//
// Who may call: tables/btree/. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpkv::btree {

// Word i (0 = least significant) of a key.
inline uint64_t KeyWord(const uint8_t* key, uint32_t word) {
  uint64_t value;
  std::memcpy(&value, key + word * sizeof(uint64_t), sizeof(value));
  return value;
}

// True when key a orders before key b; both have key_words 8-byte words.
inline bool KeyLess(const uint8_t* a, const uint8_t* b, uint32_t key_words) {
  for (uint32_t word = key_words; word-- > 0;) {
    const uint64_t a_word = KeyWord(a, word);
    const uint64_t b_word = KeyWord(b, word);
    if (a_word != b_word) return a_word < b_word;
  }
  return false;
}

}  // namespace gpkv::btree
