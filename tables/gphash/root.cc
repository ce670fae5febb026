#include "tables/gphash/root.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "format/checksum.h"
#include "pm/atomic_word.h"
#include "pm/extent_allocator.h"
#include "tables/gphash/reader.h"
#include "tables/table_options.h"

namespace gpkv::gphash {
namespace {

constexpr uint64_t kMinTopBuckets = 16;
constexpr uint64_t kMaxInitialTopBuckets = gphash::kMaxBucketCount;
constexpr double kTargetLoad = 0.9;

// Extents allocated by CreateTable, freed again if it fails half way.
class CreateGuard {
 public:
  explicit CreateGuard(pm::Pool& pool) : pool_(pool) {}
  ~CreateGuard() {
    if (committed_) return;
    for (uint64_t offset : extents_) pool_.allocator().Free(offset).IgnoreError();
  }
  Result<uint64_t> Allocate(uint64_t bytes, format::ExtentKind kind, uint64_t table_id) {
    auto offset = pool_.allocator().Allocate(bytes, kind, table_id);
    if (offset.ok()) extents_.push_back(*offset);
    return offset;
  }
  void Commit() { committed_ = true; }

 private:
  pm::Pool& pool_;
  std::vector<uint64_t> extents_;
  bool committed_ = false;
};

}  // namespace

Status CheckOptions(const std::string& where, const TableOptions& options) {
  const HashGeometry& geometry = options.hash;
  GPKV_RETURN_IF_ERROR(tables::CheckTableSizes(where, options));
  if (!gphash::IsValidGeometry(geometry.levels, geometry.hash_locations,
                               geometry.slots_per_bucket)) {
    return Status::InvalidArgument(
        where + ": geometry " + std::to_string(geometry.levels) + "L-" +
        std::to_string(geometry.hash_locations) + "H-" + std::to_string(geometry.slots_per_bucket) +
        "S is not supported (levels 1..4, hash locations 1..4, slots 4, 8 or 16)");
  }
  if (geometry.initial_top_buckets != 0 &&
      (!format::IsPowerOfTwo(geometry.initial_top_buckets) ||
       geometry.initial_top_buckets < (uint64_t{1} << (geometry.levels - 1)) ||
       geometry.initial_top_buckets > kMaxInitialTopBuckets)) {
    return Status::InvalidArgument(where + ": initial top buckets " +
                                   std::to_string(geometry.initial_top_buckets) +
                                   " is not a power of two of at least 2^(levels-1)");
  }
  return Status::OK();
}

uint64_t InitialTopBuckets(const TableOptions& options) {
  const HashGeometry& geometry = options.hash;
  if (geometry.initial_top_buckets != 0) return geometry.initial_top_buckets;
  double per_top_bucket = 0;
  for (uint32_t i = 0; i < geometry.levels; ++i) {
    per_top_bucket += geometry.slots_per_bucket * std::ldexp(1.0, -static_cast<int>(i));
  }
  double wanted = static_cast<double>(options.expected_keys) / (per_top_bucket * kTargetLoad);
  uint64_t top = std::max<uint64_t>(kMinTopBuckets, uint64_t{1} << (geometry.levels - 1));
  while (static_cast<double>(top) < wanted && top < kMaxInitialTopBuckets) top *= 2;
  return top;
}

Result<uint64_t> CreateTable(pm::Pool& pool, uint64_t table_id, const TableOptions& options) {
  if (pool.read_only()) return Status::InvalidArgument(pool.path() + ": pool is open read-only");
  GPKV_RETURN_IF_ERROR(
      CheckOptions(pool.path() + ": table id " + std::to_string(table_id), options));
  const HashGeometry& geometry = options.hash;
  const uint64_t top = InitialTopBuckets(options);
  const uint32_t bucket_bytes = gphash::BucketBytes(geometry.slots_per_bucket, options.key_size);
  const bool cells = gphash::ValueModeFor(options.value_size) == gphash::kValueCells;

  CreateGuard guard(pool);
  auto root_offset =
      guard.Allocate(gphash::kGphashRootSize, format::kExtentKindTableRoot, table_id);
  if (!root_offset.ok()) return root_offset.status();
  gphash::LevelSet set{};
  set.level_count = geometry.levels;
  set.generation = 1;
  set.next_level_id = geometry.levels;
  for (uint32_t i = 0; i < geometry.levels; ++i) {
    uint64_t buckets = top >> i;
    auto level = guard.Allocate(buckets * bucket_bytes, format::kExtentKindBucketLevel, table_id);
    if (!level.ok()) return level.status();
    set.levels[i] = {*level, buckets, geometry.levels - 1 - i};
  }
  set.checksum = format::Checksum64(&set, offsetof(gphash::LevelSet, checksum));

  gphash::GphashRoot root{};
  root.magic = gphash::kGphashRootMagic;
  root.table_id = table_id;
  root.key_size = options.key_size;
  root.value_size = options.value_size;
  root.levels = geometry.levels;
  root.hash_locations = geometry.hash_locations;
  root.slots_per_bucket = geometry.slots_per_bucket;
  root.value_mode = cells ? gphash::kValueCells : gphash::kValueInline;
  root.bucket_bytes = bucket_bytes;
  std::random_device random;
  root.hash_seed = (uint64_t{random()} << 32) ^ random();
  if (cells) {
    root.cell_size = gphash::CellSizeFor(options.value_size);
    root.cells_per_chunk =
        std::clamp<uint64_t>(options.expected_keys / 4, 4096, gphash::kMaxCellsPerChunk);
    auto chunk = guard.Allocate(root.cells_per_chunk * root.cell_size,
                                format::kExtentKindValueChunk, table_id);
    if (!chunk.ok()) return chunk.status();
    root.value_chunks[0] = *chunk;
  }
  root.checksum = format::Checksum64(&root, offsetof(gphash::GphashRoot, checksum));
  root.levelsets[0] = set;
  // The commit words stay zero until the root they publish is persisted.
  auto* stored = pool.At<gphash::GphashRoot>(*root_offset);
  std::memcpy(stored, &root, sizeof(root));
  pool.Persist(stored, sizeof(root));
  pool.Publish(&stored->active_levelset, gphash::MakeActiveLevelSetWord(1, 0));
  if (cells) pool.Publish(&stored->value_chunk_count, 1);
  GPKV_RETURN_IF_ERROR(pool.Sync());
  guard.Commit();
  return *root_offset;
}

uint64_t PublishLevelSet(pm::Pool& pool, uint64_t root_offset, gphash::LevelSet* next) {
  auto* root = pool.At<gphash::GphashRoot>(root_offset);
  const uint64_t active = pm::LoadAcquire(&root->active_levelset);
  const uint32_t target = 1 - gphash::ActiveLevelSetIndex(active);
  next->generation = gphash::ActiveLevelSetGeneration(active) + 1;
  for (uint32_t i = next->level_count; i < gphash::kMaxLevels; ++i) next->levels[i] = {};
  next->checksum = format::Checksum64(next, offsetof(gphash::LevelSet, checksum));
  std::memcpy(&root->levelsets[target], next, sizeof(*next));
  pool.Persist(&root->levelsets[target], sizeof(*next));
  const uint64_t word = gphash::MakeActiveLevelSetWord(next->generation, target);
  pool.Publish(&root->active_levelset, word);
  return word;
}

Status CheckGrowth(const std::string& where, const gphash::LevelSet& current) {
  if (current.level_count >= gphash::kMaxLevels) {
    return Status::PoolFull(where + ": cannot grow past " + std::to_string(gphash::kMaxLevels) +
                            " levels");
  }
  if (GrownTopBuckets(current) > gphash::kMaxBucketCount) {
    return Status::PoolFull(where + ": the top level cannot grow past " +
                            std::to_string(current.levels[0].bucket_count) + " buckets");
  }
  return Status::OK();
}

uint64_t GrownTopBuckets(const gphash::LevelSet& current) {
  return current.levels[0].bucket_count * 2;
}

gphash::LevelSet GrownLevelSet(const gphash::LevelSet& current, uint64_t new_top_offset) {
  gphash::LevelSet next = current;
  for (uint32_t i = current.level_count; i > 0; --i) next.levels[i] = current.levels[i - 1];
  next.levels[0] = {new_top_offset, GrownTopBuckets(current), current.next_level_id};
  next.level_count = current.level_count + 1;
  next.next_level_id = current.next_level_id + 1;
  next.flags |= gphash::kLevelSetResizing;
  return next;
}

gphash::LevelSet FinishedLevelSet(const gphash::LevelSet& current, bool drop_bottom) {
  gphash::LevelSet next = current;
  next.flags &= ~gphash::kLevelSetResizing;
  if (drop_bottom) {
    next.levels[next.level_count - 1] = {};
    next.level_count -= 1;
  }
  return next;
}

Status DropTable(pm::Pool& pool, const std::string& table_name, uint64_t root_offset) {
  auto view = gphash::ReadGphash(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  Status first;
  auto free_extent = [&](uint64_t offset) {
    Status status = pool.allocator().Free(offset);
    if (first.ok() && !status.ok()) first = status;
  };
  for (const gphash::GphashLevel& level : view->levels) free_extent(level.offset);
  for (uint64_t chunk : view->chunks) free_extent(chunk);
  free_extent(root_offset);
  GPKV_RETURN_IF_ERROR(first);
  return pool.Sync();
}

}  // namespace gpkv::gphash
