// gphash::Stats: the counters both GPHash backends keep of an open table. The
// Table facade reports them as TableStats properties ("gphash.<name>").
#pragma once

#include <cstdint>

namespace gpkv::gphash {

// What a table's BktCache (the GPU backend's copies of the most-read buckets
// in direct mode) did since the table was opened; all zero without one.
// Bucket reads are those of gets (a get reads its key's candidate buckets one
// at a time up to the one that holds it).
struct BktCacheStats {
  uint64_t capacity_buckets = 0;  // cache slots
  uint64_t table_buckets = 0;     // buckets of all levels the cache ranks
  uint64_t reloads = 0;           // reloads started
  uint64_t buckets_loaded = 0;    // bucket copies the reloads made
  uint64_t get_cache_reads = 0;   // bucket reads of gets served by the cache
  uint64_t get_pool_reads = 0;    // bucket reads of gets that crossed the link
};

struct Stats {
  uint64_t keys = 0;         // live keys
  uint64_t slots = 0;        // slots of all levels
  double load_factor = 0.0;  // keys / slots
  uint32_t levels = 0;       // levels in use (more than the geometry while resizing)
  uint64_t top_buckets = 0;  // buckets of the top level
  uint64_t resizes = 0;      // resizes since the table was created
  uint64_t index_bytes = 0;  // pool bytes of bucket levels
  uint64_t value_bytes = 0;  // pool bytes of value cells (0 when values are inline)
  bool resizing = false;     // a resize is in progress
  // The GPU backend's cache of hot buckets in direct mode (all zero without
  // one).
  BktCacheStats cache;
};

}  // namespace gpkv::gphash
