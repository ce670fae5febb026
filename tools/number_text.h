// Keys and values of the gpkv tool as text. A key or value of S bytes is an
// unsigned integer stored little-endian in S bytes:
//
//   42        decimal (any size, as long as the number fits in S bytes)
//   0x2a      hexadecimal, the most significant digit first; any size
//
// Shorter numbers are zero-extended, so `42` and `0x2a` name the same 8-byte
// key, and `0x1` the 16-byte key 01 00 .. 00. With `hex_default`, digits
// without a prefix are read as hexadecimal too.
//
// Output: decimal for sizes up to 8 bytes, else (or with `hex`) 0x and all
// 2*S digits, so that `gpkv dump` output can be read back by `gpkv load`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpkv::tools {

// Parses `text` into size bytes at out. Returns "" on success, else why the
// text is not a number of that size (out is then unspecified).
std::string ParseNumber(std::string_view text, size_t size, bool hex_default, uint8_t* out);

// Formats size bytes at bytes as described above.
std::string FormatNumber(const uint8_t* bytes, size_t size, bool hex);

}  // namespace gpkv::tools
