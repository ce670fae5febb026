// btree::gpu: the volatile ordered table's GPU backend, a B-link tree in GPU
// memory (Awad et al., "Engineering a High-Performance GPU B-Tree", PPoPP
// 2019) whose leaves point at version lists (Awad's multiversion extension),
// with the family's API and semantics (backend.h) and its version rules
// (versions.h). tree.cuh describes the nodes, the latches and the versions.
//
// Who may call: tables/btree/ (the front opens it), tests and the benchmark.
// Thread safety: backend.h's (the core serialises writes); the reads of
// several threads take the device in turn.
#pragma once

#include <cstddef>
#include <memory>

#include "gpkv/options.h"
#include "tables/btree/backend.h"

namespace gpkv::btree::gpu {

// Choices of the backend's kernels that tables leave at their defaults;
// experiments/btree_gets measures them against each other.
struct GpuTuning {
  // Get batches of at least this many one-word keys are sorted by their
  // keys' leading bits before the descent, and count and range batches by
  // their lo bounds' (SIZE_MAX: never sorted).
  size_t sorted_get_min = size_t{1} << 16;
};

// An empty table for keys and values of `options` (sizes checked by the
// family) on CUDA device `device`. Unsupported when the device is not
// usable; OutOfDeviceMemory when the first nodes do not fit.
Result<std::unique_ptr<Backend>> CreateGpuBackend(const TableOptions& options, int device = 0,
                                                  const GpuTuning& tuning = {});

}  // namespace gpkv::btree::gpu
