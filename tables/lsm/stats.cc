#include "tables/lsm/stats.h"

#include <algorithm>

#include "format/pool_layout.h"

namespace gpkv::lsm {

void AddManifestStats(const Manifest& manifest, const uint64_t* level_tombstones,
                      uint32_t log2_batch, const EntryShape& shape, LsmStats* stats) {
  stats->levels = manifest.level_count;
  stats->level_entries.assign(manifest.level_count, 0);
  for (uint32_t level = 0; level < manifest.level_count; ++level) {
    const RunRef& ref = manifest.levels[level];
    stats->capacity += LevelCapacity(log2_batch, level);
    if (ref.offset == 0) continue;
    stats->runs += 1;
    stats->entries += ref.entries;
    stats->level_entries[level] = ref.entries;
    stats->tombstones += level_tombstones[level];
    stats->run_bytes += format::AlignUp(
        RunExtentBytes(ref.entries, shape.key_size(), shape.value_size), format::kExtentAlignment);
  }
  stats->compactions = manifest.compactions;
  stats->applied_seq = manifest.applied_seq;
}

bool NeedsCompaction(const Manifest& manifest, const uint64_t* level_tombstones,
                     uint32_t max_dead_percent) {
  uint64_t entries = 0;
  uint64_t tombstones = 0;
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    entries += manifest.levels[level].entries;
    tombstones += level_tombstones[level];
  }
  const uint64_t dead = std::min(entries, 2 * tombstones);
  return entries != 0 && dead * 100 > uint64_t{max_dead_percent} * entries;
}

}  // namespace gpkv::lsm
