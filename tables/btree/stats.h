// btree::Stats: the counters of an open volatile ordered table. The backend
// fills what it holds; the core adds its clock and snapshots. The Table
// front reports them as TableStats properties ("btree.<name>").
#pragma once

#include <cstdint>

namespace gpkv::btree {

struct Stats {
  uint64_t keys = 0;        // live keys (current contents)
  uint64_t versions = 0;    // versions held: one per key, more where snapshots see old ones
  uint64_t tombstones = 0;  // erased versions a snapshot can still tell from absent keys
  uint64_t bytes = 0;       // memory the table holds (RAM or GPU memory), estimated
  uint64_t reclaimed = 0;   // versions freed since open because no snapshot could see them
  uint64_t snapshots = 0;   // live snapshots
  uint64_t timestamp = 0;   // the clock: write batches applied since open
};

}  // namespace gpkv::btree
