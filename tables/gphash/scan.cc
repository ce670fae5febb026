#include "tables/gphash/scan.h"

#include <atomic>
#include <cstring>

#include "pm/atomic_word.h"

namespace gpkv::gphash {
namespace {

// Where the scan reads a table: the immutable part of its root and the
// LevelSet the caller holds.
struct ScanTable : gphash::Geometry {
  const uint8_t* base = nullptr;
  uint64_t pool_size = 0;
  const gphash::LevelSet* level_set = nullptr;

  const uint8_t* Bucket(uint32_t level, uint64_t index) const {
    return base + level_set->levels[level].offset + index * bucket_bytes;
  }
  const uint8_t* SlotWord(const uint8_t* bucket, uint32_t slot) const {
    return bucket + gphash::SlotWordOffset(slot);
  }
  const uint8_t* SlotKey(const uint8_t* bucket, uint32_t slot) const {
    return bucket + gphash::KeyOffset(slots_per_bucket, key_size, slot);
  }
  const uint8_t* SlotValue(const uint8_t* bucket, uint32_t slot) const {
    return bucket + gphash::ValueWordOffset(slots_per_bucket, key_size, slot);
  }
};

// True when no other VALID copy of `key` outranks the copy at (level,
// index, slot) by the duplicate rule.
bool IsWinner(const ScanTable& table, const uint8_t* key, uint32_t level, uint64_t index,
              uint32_t slot) {
  const format::KeyHash hash = format::HashKey(key, table.key_size, table.hash_seed);
  const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
  const gphash::LevelSet& set = *table.level_set;
  for (uint32_t other_level = 0; other_level < set.level_count; ++other_level) {
    const gphash::LevelCandidates buckets = gphash::CandidateBucketsOfLevel(
        hash, table.hash_locations, set.levels[other_level].bucket_count,
        gphash::CandidateOrder::kFirstLocation);
    for (uint32_t i = 0; i < buckets.count; ++i) {
      const uint64_t other_index = buckets.buckets[i];
      const uint8_t* bucket = table.Bucket(other_level, other_index);
      for (uint32_t other_slot = 0; other_slot < table.slots_per_bucket; ++other_slot) {
        const uint64_t word = pm::LoadAcquire(table.SlotWord(bucket, other_slot));
        if (!gphash::SlotMatches(word, fingerprint)) continue;
        if (std::memcmp(table.SlotKey(bucket, other_slot), key, table.key_size) != 0) continue;
        if (gphash::SlotOutranks(other_level, other_index, other_slot, level, index, slot)) {
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace

Status ScanLivePairs(const pm::Pool& pool, uint64_t root_offset, const gphash::LevelSet& level_set,
                     const Table::ScanVisitor& visit) {
  const auto* root = pool.At<gphash::GphashRoot>(root_offset);
  ScanTable table;
  static_cast<gphash::Geometry&>(table) = gphash::GeometryOf(*root);
  table.base = pool.base();
  table.pool_size = pool.size();
  table.level_set = &level_set;

  alignas(8) uint8_t key[32];
  alignas(8) uint8_t value[136];
  for (uint32_t level = 0; level < level_set.level_count; ++level) {
    for (uint64_t index = 0; index < level_set.levels[level].bucket_count; ++index) {
      const uint8_t* bucket = table.Bucket(level, index);
      for (uint32_t slot = 0; slot < table.slots_per_bucket; ++slot) {
        bool stable = false;
        uint64_t value_word = 0;
        for (;;) {  // seqlock: read the slot again if it changed under us
          const uint64_t before = pm::LoadAcquire(table.SlotWord(bucket, slot));
          if (gphash::SlotStateOf(before) != gphash::kSlotValid) break;
          pm::CopyWordsOut(key, table.SlotKey(bucket, slot), table.key_size / 8);
          value_word = pm::LoadAcquire(table.SlotValue(bucket, slot));
          // A word read from a slot that changed meanwhile is discarded
          // below; the bound only keeps the copy inside the mapping.
          if (table.value_cells && value_word <= table.pool_size - table.cell_size) {
            std::memcpy(value, table.base + value_word, table.value_size);
          }
          pm::LoadFence();
          if (pm::LoadRelaxed(table.SlotWord(bucket, slot)) == before) {
            stable = true;
            break;
          }
        }
        if (!stable || !IsWinner(table, key, level, index, slot)) continue;
        if (!table.value_cells) std::memcpy(value, &value_word, sizeof(value_word));
        if (!visit(key, value)) return Status::OK();
      }
    }
  }
  return Status::OK();
}

}  // namespace gpkv::gphash
