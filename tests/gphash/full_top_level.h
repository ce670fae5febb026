// A GPHash table left as a resize interrupted right after it published its
// LevelSet (a new top level of twice the buckets, kLevelSetResizing), with
// every slot of the new top level VALID: each holds a filler key in one of
// its candidate buckets. Written through the family's one writer
// (gphash::PublishLevelSet). For a table of one level the new top is the only
// level above the bottom, so no bottom key can move up: the resize the next
// open finishes keeps its bottom level (one more level), on either backend.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "format/hash.h"
#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "tables/gphash/layout.h"
#include "tables/gphash/reader.h"
#include "tables/gphash/root.h"

namespace gpkv::gphash_test {

// Writes key number `id` (key_size bytes) or its value (value_size bytes).
using IdBytes = std::function<void(uint64_t id, uint8_t* out)>;

// Publishes the interrupted resize described above for the closed table
// rooted at root_offset and appends the filler keys' ids (from first_filler
// up, values from make_value) to *fillers.
// REQUIRES: the table is not open; its values are inline (at most 8 bytes);
// no key of the table has an id at or above first_filler.
inline void InterruptResizeWithFullTop(pm::Pool& pool, uint64_t table_id, uint64_t root_offset,
                                       uint64_t first_filler, const IdBytes& make_key,
                                       const IdBytes& make_value, std::vector<uint64_t>* fillers) {
  auto view = gphash::ReadGphash(pool, "t", root_offset);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_FALSE(view->geo.value_cells);
  const gphash::LevelSet current = view->levelset;
  const uint64_t buckets = gphash::GrownTopBuckets(current);
  const uint64_t bytes = buckets * view->geo.bucket_bytes;
  auto offset = pool.allocator().Allocate(bytes, format::kExtentKindBucketLevel, table_id);
  ASSERT_TRUE(offset.ok()) << offset.status().ToString();
  uint8_t* level = pool.At<uint8_t>(*offset);
  std::memset(level, 0, bytes);

  const uint32_t slots = view->geo.slots_per_bucket;
  std::vector<uint32_t> used(buckets, 0);
  uint64_t left = buckets * slots;
  uint8_t key[format::kMaxKeySize];
  uint8_t value[8] = {};
  for (uint64_t id = first_filler; left > 0; ++id) {
    make_key(id, key);
    const format::KeyHash hash = format::HashKey(key, view->key_size, view->geo.hash_seed);
    for (uint32_t location = 0; location < view->geo.hash_locations; ++location) {
      const uint64_t bucket = gphash::BucketIndex(hash, location, buckets);
      if (used[bucket] == slots) continue;
      const uint32_t slot = used[bucket]++;
      uint8_t* base = level + bucket * view->geo.bucket_bytes;
      std::memcpy(base + gphash::KeyOffset(slots, view->key_size, slot), key, view->key_size);
      std::memset(value, 0, sizeof(value));
      make_value(id, value);
      std::memcpy(base + gphash::ValueWordOffset(slots, view->key_size, slot), value, 8);
      const uint64_t word =
          gphash::MakeSlotWord(gphash::kSlotValid, 1, gphash::FingerprintOfHash(hash));
      std::memcpy(base + gphash::SlotWordOffset(slot), &word, 8);
      fillers->push_back(id);
      --left;
      break;
    }
  }
  pool.Persist(level, bytes);
  gphash::LevelSet next = gphash::GrownLevelSet(current, *offset);
  gphash::PublishLevelSet(pool, root_offset, &next);
  ASSERT_TRUE(pool.Sync().ok());
}

}  // namespace gpkv::gphash_test
