#include "tools/number_text.h"

#include <cstring>

namespace gpkv::tools {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string TooLarge(std::string_view text, size_t size) {
  return "'" + std::string(text) + "' does not fit in " + std::to_string(size) + " byte" +
         (size == 1 ? "" : "s");
}

std::string ParseHex(std::string_view text, std::string_view digits, size_t size, uint8_t* out) {
  if (digits.empty()) return "'" + std::string(text) + "' has no hexadecimal digits";
  // Digits are read from the least significant (last) one: digit i lands in
  // byte i / 2, high nibble when i is odd.
  size_t digit_index = 0;
  for (size_t position = digits.size(); position-- > 0; ++digit_index) {
    int value = HexDigit(digits[position]);
    if (value < 0) return "'" + std::string(text) + "' is not a hexadecimal number";
    size_t byte_index = digit_index / 2;
    if (byte_index >= size) {
      if (value != 0) return TooLarge(text, size);
      continue;  // a leading zero beyond the size
    }
    out[byte_index] |= static_cast<uint8_t>(digit_index % 2 ? value << 4 : value);
  }
  return "";
}

std::string ParseDecimal(std::string_view text, size_t size, uint8_t* out) {
  // Multiply-and-add over the little-endian bytes: out = out * 10 + digit.
  for (char c : text) {
    if (c < '0' || c > '9') return "'" + std::string(text) + "' is not an unsigned number";
    unsigned carry = static_cast<unsigned>(c - '0');
    for (size_t i = 0; i < size; ++i) {
      unsigned product = out[i] * 10u + carry;
      out[i] = static_cast<uint8_t>(product & 0xff);
      carry = product >> 8;
    }
    if (carry != 0) return TooLarge(text, size);
  }
  return "";
}

}  // namespace

std::string ParseNumber(std::string_view text, size_t size, bool hex_default, uint8_t* out) {
  std::memset(out, 0, size);
  if (text.empty()) return "empty number";
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    return ParseHex(text, text.substr(2), size, out);
  }
  if (text == "0x" || text == "0X") return "'" + std::string(text) + "' has no digits";
  if (hex_default) return ParseHex(text, text, size, out);
  return ParseDecimal(text, size, out);
}

std::string FormatNumber(const uint8_t* bytes, size_t size, bool hex) {
  if (!hex && size <= 8) {
    uint64_t value = 0;
    for (size_t i = size; i-- > 0;) value = (value << 8) | bytes[i];
    return std::to_string(value);
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string text = "0x";
  text.reserve(2 + 2 * size);
  for (size_t i = size; i-- > 0;) {
    text.push_back(kDigits[bytes[i] >> 4]);
    text.push_back(kDigits[bytes[i] & 0xf]);
  }
  return text;
}

}  // namespace gpkv::tools
