// slab_hash::cpu::CpuBackend: the volatile hash table's CPU backend, over
// libcuckoo's cuckoohash_map (the well-kept library gpkv's tests already use
// as their oracle), with the slab hash's API and semantics (backend.h).
// Batches run on `threads` worker threads; keys are split among them by
// hash so that every key's operations keep their batch order.
//
// Who may call: table.cc, tests and the benchmark.
// Thread safety: every method may be called from several threads at once.
#pragma once

#include <memory>

#include "gpkv/options.h"
#include "tables/slab_hash/backend.h"

namespace gpkv::slab_hash::cpu {

// An empty table for keys and values of `options` (sizes checked by the
// family), sized for options.expected_keys, running batches on `threads`
// threads.
Result<std::unique_ptr<Backend>> CreateCpuBackend(const TableOptions& options, int threads);

}  // namespace gpkv::slab_hash::cpu
