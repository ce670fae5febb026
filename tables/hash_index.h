// tables::OpenHashIndex: an empty volatile hash table used as the in-memory
// index of a persistent hash table whose contents the pool keeps in another
// form (GPHash's logged mode: an image and a batch log). The table is the
// registry's (hash, volatile) family's, so that the family that uses it as an
// index includes no other family; it answers gpkv::Table's batches on the
// context's backend (libcuckoo on the CPU, the slab hash on CUDA).
//
// Who may call: the persistent hash family (tables/gphash/), tests.
// Thread safety: a plain function; the table it returns is as gpkv::Table
// promises.
#pragma once

#include <memory>
#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/family.h"

namespace gpkv::tables {

// An empty volatile hash table named `name` for keys and values of
// options.key_size / options.value_size, sized for options.expected_keys, on
// context.backend. Unsupported when this build has no volatile hash family;
// the family's errors (OutOfDeviceMemory when the GPU cannot hold it)
// otherwise.
Result<std::unique_ptr<Table>> OpenHashIndex(const OpenContext& context, const std::string& name,
                                             const TableOptions& options);

}  // namespace gpkv::tables
