#include "tables/gphash/gpu/root.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "format/checksum.h"
#include "pm/extent_allocator.h"
#include "tables/gphash/reader.h"

namespace gpkv::gpu {
namespace {

using format::GphashRoot;
using format::LevelSet;

constexpr uint64_t kMaxInitialTopBuckets = uint64_t{1} << 40;

bool IsPowerOfTwo(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

uint64_t LevelSetChecksum(const LevelSet& level_set) {
  return format::Checksum64(&level_set, offsetof(LevelSet, checksum));
}

uint64_t RootChecksum(const GphashRoot& root) {
  return format::Checksum64(&root, offsetof(GphashRoot, checksum));
}

Status CheckGeometry(uint32_t key_size, uint32_t value_size, uint32_t levels,
                     uint32_t hash_locations, uint32_t slots_per_bucket, std::string* why) {
  if (key_size != 8 && key_size != 16 && key_size != 32) {
    *why = "key size " + std::to_string(key_size) + " is not 8, 16 or 32";
  } else if (value_size < 1 || value_size > 128) {
    *why = "value size " + std::to_string(value_size) + " is not 1..128";
  } else if (levels < 1 || levels > 4) {
    *why = "levels " + std::to_string(levels) + " is not 1..4";
  } else if (hash_locations < 1 || hash_locations > 4) {
    *why = "hash locations " + std::to_string(hash_locations) + " is not 1..4";
  } else if (slots_per_bucket != 4 && slots_per_bucket != 8 && slots_per_bucket != 16) {
    *why = "slots per bucket " + std::to_string(slots_per_bucket) + " is not 4, 8 or 16";
  } else {
    return Status::OK();
  }
  return Status::InvalidArgument(*why);
}

}  // namespace

uint64_t IndexBytes(const GphashRootSnapshot& snapshot) {
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < snapshot.level_set.level_count; ++i) {
    bytes += snapshot.level_set.levels[i].bucket_count * snapshot.bucket_bytes;
  }
  return bytes;
}

namespace {

// Top-level buckets for `expected_keys` at 90% load over all levels (level i
// holds top >> i buckets), at least 16: the sizing cpu::Gphash::Create uses.
uint64_t TopBucketsFor(const TableOptions& options) {
  const HashGeometry& geometry = options.hash;
  if (geometry.initial_top_buckets != 0) return geometry.initial_top_buckets;
  double slots_per_top_bucket = 0;
  for (uint32_t i = 0; i < geometry.levels; ++i) {
    slots_per_top_bucket += geometry.slots_per_bucket * std::ldexp(1.0, -static_cast<int>(i));
  }
  double wanted = static_cast<double>(options.expected_keys) / (slots_per_top_bucket * 0.9);
  uint64_t buckets = std::max<uint64_t>(16, uint64_t{1} << (geometry.levels - 1));
  while (static_cast<double>(buckets) < wanted && buckets < kMaxInitialTopBuckets) buckets *= 2;
  return buckets;
}

}  // namespace

std::string TableWhere(const pm::Pool& pool, const std::string& table_name, const std::string& what,
                       uint64_t offset) {
  return pool.Where("table '" + table_name + "' " + what, offset);
}

Result<GphashRootSnapshot> ReadGphashRoot(const pm::Pool& pool, const std::string& table_name,
                                          uint64_t root_offset) {
  // The one validation of a root that verify, repair and the CPU backend share.
  auto view = recovery::ReadGphash(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  GphashRootSnapshot snapshot;
  snapshot.root_offset = root_offset;
  snapshot.table_id = view->table_id;
  snapshot.key_size = view->key_size;
  snapshot.value_size = view->value_size;
  snapshot.value_cells = view->value_cells();
  snapshot.cell_size = view->cell_size;
  snapshot.geometry_levels = view->geometry_levels;
  snapshot.hash_locations = view->hash_locations;
  snapshot.slots_per_bucket = view->slots_per_bucket;
  snapshot.bucket_bytes = view->bucket_bytes;
  snapshot.hash_seed = view->hash_seed;
  snapshot.active_word = view->active_word;
  snapshot.level_set = view->levelset;
  return snapshot;
}

Result<GphashRootSnapshot> PublishLevelSet(pm::Pool& pool, const GphashRootSnapshot& current,
                                           LevelSet next) {
  uint64_t generation = format::ActiveLevelSetGeneration(current.active_word) + 1;
  uint32_t index = 1 - format::ActiveLevelSetIndex(current.active_word);
  next.generation = generation;
  next.checksum = LevelSetChecksum(next);
  auto* root = pool.At<GphashRoot>(current.root_offset);
  std::memcpy(&root->levelsets[index], &next, sizeof(next));
  pool.Persist(&root->levelsets[index], sizeof(next));
  uint64_t active = format::MakeActiveLevelSetWord(generation, index);
  pool.Publish(&root->active_levelset, active);
  GphashRootSnapshot snapshot = current;
  snapshot.active_word = active;
  snapshot.level_set = next;
  return snapshot;
}

Result<uint64_t> CreateGphashRoot(pm::Pool& pool, uint64_t table_id, const TableOptions& options) {
  if (pool.read_only()) return Status::InvalidArgument(pool.path() + ": pool is open read-only");
  const HashGeometry& geometry = options.hash;
  std::string why;
  Status valid = CheckGeometry(options.key_size, options.value_size, geometry.levels,
                               geometry.hash_locations, geometry.slots_per_bucket, &why);
  if (!valid.ok()) return Status::InvalidArgument(pool.path() + ": new table: " + why);
  uint64_t top = TopBucketsFor(options);
  if (!IsPowerOfTwo(top) || top < (uint64_t{1} << (geometry.levels - 1)) ||
      top > kMaxInitialTopBuckets) {
    return Status::InvalidArgument(pool.path() + ": new table: initial_top_buckets " +
                                   std::to_string(top) + " is not a power of two of at least " +
                                   std::to_string(uint64_t{1} << (geometry.levels - 1)));
  }
  const uint32_t bucket_bytes = format::BucketBytes(geometry.slots_per_bucket, options.key_size);
  std::vector<uint64_t> allocated;
  auto undo = [&](Status status) -> Result<uint64_t> {
    for (uint64_t offset : allocated) pool.allocator().Free(offset).IgnoreError();
    return status;
  };
  LevelSet level_set{};
  level_set.level_count = geometry.levels;
  level_set.generation = 1;
  level_set.next_level_id = geometry.levels;
  for (uint32_t i = 0; i < geometry.levels; ++i) {
    uint64_t buckets = top >> i;
    auto level =
        pool.allocator().Allocate(buckets * bucket_bytes, format::kExtentKindBucketLevel, table_id);
    if (!level.ok()) return undo(level.status());
    allocated.push_back(*level);
    level_set.levels[i] = {*level, buckets, geometry.levels - 1 - i};
  }
  level_set.checksum = LevelSetChecksum(level_set);
  // Values over 8 bytes live in value cells: the first chunk of cells is
  // allocated with the table, sized as cpu::Gphash::Create sizes it.
  const bool cells = options.value_size > 8;
  uint64_t cells_per_chunk = 0;
  uint64_t first_chunk = 0;
  if (cells) {
    cells_per_chunk = std::clamp<uint64_t>(options.expected_keys / 4, 4096, uint64_t{1} << 22);
    auto chunk =
        pool.allocator().Allocate(cells_per_chunk * format::CellSizeFor(options.value_size),
                                  format::kExtentKindValueChunk, table_id);
    if (!chunk.ok()) return undo(chunk.status());
    allocated.push_back(*chunk);
    first_chunk = *chunk;
  }
  auto root_offset =
      pool.allocator().Allocate(format::kGphashRootSize, format::kExtentKindTableRoot, table_id);
  if (!root_offset.ok()) return undo(root_offset.status());

  GphashRoot root{};
  root.magic = format::kGphashRootMagic;
  root.table_id = table_id;
  root.key_size = options.key_size;
  root.value_size = options.value_size;
  root.levels = geometry.levels;
  root.hash_locations = geometry.hash_locations;
  root.slots_per_bucket = geometry.slots_per_bucket;
  root.value_mode = cells ? format::kValueCells : format::kValueInline;
  root.bucket_bytes = bucket_bytes;
  std::random_device random;
  root.hash_seed = (uint64_t{random()} << 32) | random();
  if (cells) {
    root.cell_size = format::CellSizeFor(options.value_size);
    root.cells_per_chunk = cells_per_chunk;
    root.value_chunks[0] = first_chunk;
  }
  root.checksum = RootChecksum(root);
  root.active_levelset = format::MakeActiveLevelSetWord(1, 0);
  root.levelsets[0] = level_set;
  std::memcpy(pool.base() + *root_offset, &root, sizeof(root));
  pool.Persist(pool.base() + *root_offset, sizeof(root));
  // The chunk list's commit word, published after the root that lists it.
  if (cells) pool.Publish(&pool.At<GphashRoot>(*root_offset)->value_chunk_count, 1);
  GPKV_RETURN_IF_ERROR(pool.Sync());
  return *root_offset;
}

}  // namespace gpkv::gpu
