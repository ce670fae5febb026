// slab_hash::Stats: the counters both slab-hash backends keep of an open
// (volatile) table. The Table facade reports them as TableStats properties
// ("slab_hash.<name>"); a backend leaves at zero what it does not have.
#pragma once

#include <cstdint>

namespace gpkv::slab_hash {

struct Stats {
  uint64_t keys = 0;            // live keys
  uint64_t buckets = 0;         // buckets (lists) of the table
  uint64_t slabs = 0;           // slabs in use: base slabs + chained + value slabs (GPU)
  uint64_t slots = 0;           // key slots of all list slabs (GPU); capacity (CPU)
  uint64_t dead_slots = 0;      // erased slots not yet flushed (GPU)
  double load_factor = 0.0;     // keys / slots
  double memory_utilisation = 0.0;  // keys * (key_size + value_size) / bytes
  uint64_t bytes = 0;           // device memory (GPU) or RAM (CPU) the table holds
  uint64_t super_blocks = 0;    // SlabAlloc super blocks (GPU)
  uint64_t rehashes = 0;        // growths into more buckets since open
  double rehash_seconds = 0.0;  // total time spent in them
  uint64_t flushes = 0;         // list compactions (flush passes) since open
};

}  // namespace gpkv::slab_hash
