// The host half of staged mode (gpu::GpuBackend on a pool the GPU cannot
// map): applies one kernel launch's log of pool stores to the pool mapping.
// Plain C++ (no CUDA headers), parallel with OpenMP.
//
// Order: every key and value word first, then every slot word that publishes
// VALID, then every slot word that goes back to EMPTY, each store made
// durable with the pool's own primitives (pool.Persist / pool.Publish, as the
// CPU backend writes). That is the protocol's order for every launch that
// logs: a put batch (keys and values, then their publishing words), an erase
// batch and recovery (emptied words only), a resize step (new copies
// published before the old ones are emptied). Within one launch no word is
// stored twice (one operation per key, one slot per reservation), so the
// stores of one pass may run in any order.
//
// Who may call: tables/gphash/gpu/staged.cu.
#pragma once

#include <cstddef>
#include <string>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/gphash/gpu/device_view.h"

namespace gpkv::gphash::gpu {

// Applies `count` logged stores to `pool`: in the three passes above, or
// (in_order) one after another in log order, for a launch whose stores may
// hit one word twice (the kicks of LaunchKick run in one warp, so their log
// order is their program order). Corruption naming `where` and the offset
// when a store falls outside the pool (a kernel bug; nothing is applied).
Status ApplyStagedStores(pm::Pool& pool, const StagedStore* stores, size_t count,
                         const std::string& where, bool in_order = false);

}  // namespace gpkv::gphash::gpu
