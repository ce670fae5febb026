// gphash::Stats: the counters both GPHash backends keep of an open table. The
// Table facade reports them as TableStats properties ("gphash.<name>").
#pragma once

#include <cstdint>

namespace gpkv::gphash {

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
};

}  // namespace gpkv::gphash
