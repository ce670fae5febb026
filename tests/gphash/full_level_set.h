// A GPHash table whose LevelSet holds kMaxLevels levels, built through the
// family's one writer (gphash::PublishLevelSet): the state in which a resize
// must say PoolFull on both backends. No ordinary workload reaches it (the
// geometry allows 4 levels, a resize adds one for its duration), so the test
// adds levels below the bottom one, each half the size of the level above,
// as the reader requires.
#pragma once

#include <gtest/gtest.h>

#include "pm/extent_allocator.h"
#include "pm/pool.h"
#include "tables/gphash/layout.h"
#include "tables/gphash/reader.h"
#include "tables/gphash/root.h"

namespace gpkv::gphash_test {

// Extends the closed table rooted at root_offset to kMaxLevels levels.
// REQUIRES: the table is not open and empty; its top level has at least
// 2^(kMaxLevels - 1) buckets.
inline void FillLevelSet(pm::Pool& pool, uint64_t table_id, uint64_t root_offset) {
  auto view = gphash::ReadGphash(pool, "t", root_offset);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  gphash::LevelSet next = view->levelset;
  while (next.level_count < gphash::kMaxLevels) {
    const gphash::LevelDesc& bottom = next.levels[next.level_count - 1];
    ASSERT_GE(bottom.bucket_count, 2u);
    const uint64_t buckets = bottom.bucket_count / 2;
    auto offset = pool.allocator().Allocate(buckets * view->geo.bucket_bytes,
                                            format::kExtentKindBucketLevel, table_id);
    ASSERT_TRUE(offset.ok()) << offset.status().ToString();
    next.levels[next.level_count] = {*offset, buckets, 0};
    next.level_count += 1;
  }
  // Level ids decrease downwards (the table is empty: ranks are free).
  for (uint32_t i = 0; i < next.level_count; ++i)
    next.levels[i].level_id = next.level_count - 1 - i;
  next.next_level_id = next.level_count;
  gphash::PublishLevelSet(pool, root_offset, &next);
  ASSERT_TRUE(pool.Sync().ok());
}

}  // namespace gpkv::gphash_test
