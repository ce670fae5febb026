// lsm::LsmStats, the counters of an ordered table, and the rules both
// backends apply to what a manifest says: its counters (runs, entries,
// capacity, pool bytes of runs, tombstones) and the automatic compaction
// policy. Written once here, for lsm::Core over either backend.
//
// Who may call: tables/lsm/ (both backends, the Table facade) and tests.
// Thread safety: pure functions over the caller's values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"

namespace gpkv::lsm {

// Counters of a table; the family's properties are built from them.
struct LsmStats {
  uint64_t keys = 0;            // live keys (a merge scan of all sources)
  uint64_t entries = 0;         // entries in runs
  uint64_t buffer_entries = 0;  // entries in the write buffer (and the log)
  uint64_t tombstones = 0;      // tombstones in runs
  uint64_t dead_entries = 0;    // entries + buffer_entries - keys
  uint64_t batch_entries = 0;   // b
  uint64_t log_batches = 1;     // M: the buffer flushes at M * b logged entries
  uint32_t levels = 0;          // highest occupied level + 1
  uint32_t runs = 0;            // occupied levels
  uint64_t capacity = 0;        // entries the levels 0..levels-1 can hold
  uint64_t run_bytes = 0;
  uint64_t log_bytes = 0;           // published log bytes (of the half batches go to)
  uint64_t log_capacity = 0;        // bytes of the log extent (all halves)
  uint32_t log_halves = 1;          // 2: a checkpoint runs behind the batches (M >= 2)
  bool checkpoint_pending = false;  // a checkpoint written, its manifest not yet published
  uint64_t compactions = 0;
  uint64_t applied_seq = 0;
  std::vector<uint64_t> level_entries;  // per level 0..levels-1 (0 = empty)
  // Backend-specific counters of the write path since open, as (name,
  // value) pairs (the GPU backend: seconds per phase and counts); reported
  // as lsm.<name> properties.
  std::vector<std::pair<std::string, double>> write_profile;
};

// Adds what `manifest` tells to *stats: levels, level_entries, runs,
// entries, capacity, run_bytes, tombstones (level_tombstones[level], from the
// run headers, kMaxLevels entries), compactions and applied_seq.
void AddManifestStats(const Manifest& manifest, const uint64_t* level_tombstones,
                      uint32_t log2_batch, const EntryShape& shape, LsmStats* stats);

// The automatic compaction rule: true when the dead entries the runs hold
// pass max_dead_percent of their entries. Each tombstone is dead and hides
// at least one older entry (tombstones are written only for live keys), so
// 2 * tombstones estimates the dead entries; stale versions left by puts are
// dropped as cascades meet them.
bool NeedsCompaction(const Manifest& manifest, const uint64_t* level_tombstones,
                     uint32_t max_dead_percent);

}  // namespace gpkv::lsm
