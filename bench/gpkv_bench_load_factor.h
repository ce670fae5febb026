// The load factor a hash table reaches before its first resize, measured by
// filling a table created for `expected_keys` keys until it resizes.
//
// Who may call: the foundation suite of gpkv-bench.
#pragma once

#include <cstdint>
#include <string>

#include "bench/gpkv_bench_driver.h"

namespace gpkv::bench {

struct ResizeProbe {
  bool resized = false;      // false: no resize up to the insert limit
  double load_factor = 0.0;  // keys / slots just before the first resize
  uint64_t keys = 0;         // keys just before the first resize
  uint64_t slots = 0;        // slots of the levels before the resize
  uint64_t inserted = 0;     // keys inserted in all (the last batch triggered the resize)
  uint64_t batch = 1;        // the batch that resized: the load factor before the
                             // resize lies in [keys, keys + batch) / slots
  std::string precision;     // "1 key", or "batch of N keys" if the exact pass failed
  std::string error;         // empty when every call succeeded
};

// gpkv: creates a fresh pool at config.pool_path with a table for
// `expected_keys` keys of config's sizes and inserts distinct keys until
// TableStats::resizes becomes 1 (at most 4 * expected_keys keys), in batches
// of 1/16 of the free slots (single keys at the end): the load factor is that of the Stats() taken
// just before the batch that resized, and `precision` that batch's size. Runs with one worker
// thread (the load factor is a property of the geometry, not of the threads).
// Removes the pool afterwards.
ResizeProbe ProbeGpkvLoadFactor(const DriverConfig& config, uint64_t expected_keys,
                                uint64_t key_seed);

// libcuckoo's peer: a cuckoohash_map<uint64_t, uint64_t> constructed for
// `expected_keys`, filled one key at a time until its hashpower grows.
ResizeProbe ProbeCuckooLoadFactor(uint64_t expected_keys, uint64_t key_seed);

}  // namespace gpkv::bench
