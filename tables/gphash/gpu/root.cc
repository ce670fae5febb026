#include "tables/gphash/gpu/root.h"

#include "tables/gphash/reader.h"
#include "tables/gphash/root.h"

namespace gpkv::gphash::gpu {

uint64_t IndexBytes(const GphashRootSnapshot& snapshot) {
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < snapshot.level_set.level_count; ++i) {
    bytes += snapshot.level_set.levels[i].bucket_count * snapshot.bucket_bytes;
  }
  return bytes;
}

std::string TableWhere(const pm::Pool& pool, const std::string& table_name, const std::string& what,
                       uint64_t offset) {
  return pool.Where("table '" + table_name + "' " + what, offset);
}

Result<GphashRootSnapshot> ReadGphashRoot(const pm::Pool& pool, const std::string& table_name,
                                          uint64_t root_offset) {
  // The one validation of a root that verify, repair and the CPU backend share.
  auto view = gphash::ReadGphash(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  GphashRootSnapshot snapshot;
  static_cast<gphash::Geometry&>(snapshot) = gphash::GeometryOf(*pool.At<GphashRoot>(root_offset));
  snapshot.root_offset = root_offset;
  snapshot.table_id = view->table_id;
  snapshot.geometry_levels = view->geometry_levels;
  snapshot.active_word = view->active_word;
  snapshot.level_set = view->levelset;
  return snapshot;
}

Result<GphashRootSnapshot> PublishLevelSet(pm::Pool& pool, const GphashRootSnapshot& current,
                                           LevelSet next) {
  GphashRootSnapshot snapshot = current;
  snapshot.active_word = gphash::PublishLevelSet(pool, current.root_offset, &next);
  snapshot.level_set = next;
  return snapshot;
}
}  // namespace gpkv::gphash::gpu
