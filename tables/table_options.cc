#include "tables/table_options.h"

#include "format/pool_layout.h"

namespace gpkv::tables {

Status CheckTableSizes(const std::string& where, const TableOptions& options) {
  if (!format::IsValidKeySize(options.key_size)) {
    return Status::InvalidArgument(where + ": key size " + std::to_string(options.key_size) +
                                   " is not 8, 16 or 32");
  }
  if (!format::IsValidValueSize(options.value_size)) {
    return Status::InvalidArgument(where + ": value size " + std::to_string(options.value_size) +
                                   " is not " + std::to_string(format::kMinValueSize) + ".." +
                                   std::to_string(format::kMaxValueSize));
  }
  return Status::OK();
}

}  // namespace gpkv::tables
