// The checks of TableOptions that every table family makes alike: the key
// and value sizes the pool format allows (format/pool_layout.h). A family's
// CheckOptions (tables/family.h) calls CheckTableSizes first, then checks
// what is its own (geometry, batch sizes, ...).
//
// Who may call: the families (tables/<family>/).
// Thread safety: pure functions; any thread.
#pragma once

#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv::tables {

// InvalidArgument, message starting with `where`, when options.key_size is
// not a key size of the format (8, 16 or 32) or options.value_size not a
// value size of the format (1..128); OK otherwise.
Status CheckTableSizes(const std::string& where, const TableOptions& options);

// InvalidArgument, message starting with `where`, when options.hash_log is
// not its default: a log of hash batches belongs to persistent hash tables
// only (their logged mode); every other family calls this so that the
// option is refused rather than ignored.
Status CheckNoHashLog(const std::string& where, const TableOptions& options);

}  // namespace gpkv::tables
