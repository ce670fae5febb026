// slab_hash::MixedBatch: the slab hash's mixed batch, a hook beside the
// public API for the benchmark (the paper's concurrent benchmark) and tests:
// one launch of concurrent searches, replaces and deletes on a volatile hash
// table that runs on the GPU. gpkv::Table has no call for it: a batch of
// several kinds of operation in no set order is a benchmark's workload, not
// a contract callers build on.
//
// Who may call: gpkv-bench (bench/gpu/), tests. Thread safety: as
// gpkv::Table::Put (the table is held exclusively for the batch).
#pragma once

#include <cstdint>

#include "gpkv/batch.h"
#include "gpkv/status.h"
#include "gpkv/table.h"

namespace gpkv::slab_hash {

// Operation codes of a mixed batch, one byte each.
enum class MixedOp : uint8_t { kSearch = 0, kReplace = 1, kDelete = 2 };

// Runs n = ops.size() operations on `table`, a volatile hash table as
// DB::CreateTable / OpenTable returned it: ops[i] is a MixedOp; keys holds n
// keys; values[i] is the value to write (replace) or receives the value
// found (search); results (n bytes) is 1 where a search found its key or a
// delete removed one (replace: 1). The arrays may be host or device memory,
// as the table's batches take them. Operations on the same key in one batch
// take effect in some serial order (not necessarily the batch's); a search
// never returns a value its key did not have.
// InvalidArgument for spans of the wrong sizes or a table that is closed or
// not a volatile hash table; Unsupported when the table does not run on the
// GPU (the CPU backend has no mixed batch).
Status MixedBatch(Table& table, ConstBytes ops, ConstBytes keys, MutableBytes values,
                  MutableBytes results, const BatchOptions& options = {});

}  // namespace gpkv::slab_hash
