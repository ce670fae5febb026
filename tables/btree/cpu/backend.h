// btree::cpu::CpuBackend: the volatile ordered table's CPU backend, over
// Abseil's absl::btree_map (Debian's libabsl-dev), with the family's API and
// semantics (backend.h) and its version rules (versions.h). Each key maps to
// its versions, newest first; values of up to 8 bytes sit in the version,
// larger ones in a value store of fixed-size cells. Reads of a batch run on
// `threads` worker threads; writes apply one batch at a time.
//
// Who may call: tables/btree/ (the front opens it), tests.
// Thread safety: backend.h's (the core serialises writes).
#pragma once

#include <memory>

#include "gpkv/options.h"
#include "tables/btree/backend.h"

namespace gpkv::btree::cpu {

// An empty table for keys and values of `options` (sizes checked by the
// family), running reads on `threads` threads.
Result<std::unique_ptr<Backend>> CreateCpuBackend(const TableOptions& options, int threads);

}  // namespace gpkv::btree::cpu
