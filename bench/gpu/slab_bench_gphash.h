// The slab suite's persistent peer (slab_bench_gphash.cu): a persistent hash
// table on the CUDA backend in mirror mode (through the public API,
// api_table.h), its pool in SlabBenchConfig::pool_dir, on the slab hash's
// keys and batches, so that each slab hash row stands beside what the
// persistent table does with the same operations.
//
// Built with the CUDA backend only.
// Who may call: slab_bench_run.cu.
#pragma once

#include <cstdio>
#include <vector>

#include "bench/gpu/slab_bench.h"
#include "bench/gpu/slab_bench_keys.h"
#include "bench/gpu/slab_bench_report.h"
#include "gpkv/status.h"

namespace gpkv::bench::gpu {

// One table sized for the key count (and the mixed run's inserts), opened
// in mirror mode; per repeat: build, search hit (device and host batches),
// search miss, delete of every key, then a rebuild (untimed) and the mixed
// batches, each as one Put (its inserts), one Erase (its deletes) and one
// Get (its searches); then the table is emptied (untimed). Appends a row
// per phase (system kGphashSystem) to `rows`.
Status RunGphashPeer(const SlabBenchConfig& config, const SlabKeySets& sets, std::FILE* text,
                     std::vector<SlabRow>* rows);

}  // namespace gpkv::bench::gpu
