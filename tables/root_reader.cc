#include "tables/root_reader.h"

#include <cinttypes>
#include <cstdio>

namespace gpkv::tables {

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%" PRIx64, value);
  return text;
}

Status RootReader::Bad(uint64_t field, const std::string& why) const {
  return Status::Corruption(pool_.Where("table '" + table_ + "' root", root_offset_ + field) +
                            ": " + why);
}

}  // namespace gpkv::tables
