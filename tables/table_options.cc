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

Status CheckNoHashLog(const std::string& where, const TableOptions& options) {
  const HashLogOptions defaults;
  if (options.hash_log.log_batches == defaults.log_batches &&
      options.hash_log.batch_entries == defaults.batch_entries) {
    return Status::OK();
  }
  return Status::InvalidArgument(
      where +
      ": hash_log (log batches and batch entries of a logged hash table) applies to persistent "
      "hash tables only: leave it at its defaults");
}

}  // namespace gpkv::tables
