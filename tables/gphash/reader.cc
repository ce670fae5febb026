#include "tables/gphash/reader.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "format/checksum.h"
#include "format/pool_layout.h"

namespace gpkv::gphash {
namespace {

struct Range {
  uint64_t offset;
  uint64_t length;
  std::string what;
  uint64_t field_offset;  // where the reference to it is stored
};

class RootChecker : tables::RootReader {
 public:
  using RootReader::RootReader;

  Status Read(GphashView* view) {
    GPKV_RETURN_IF_ERROR(CopyRoot(gphash::kGphashRootSize, &root_));
    GPKV_RETURN_IF_ERROR(CheckFixedPart());
    Fill(view);
    GPKV_RETURN_IF_ERROR(CheckLevelSet(view));
    GPKV_RETURN_IF_ERROR(CheckChunks(view));
    GPKV_RETURN_IF_ERROR(CheckOverlaps());
    return require_allocated_ ? CheckAllocated() : Status::OK();
  }

 private:
  Status CheckFixedPart() {
    GPKV_RETURN_IF_ERROR(
        CheckMagicChecksumAndKeySize(root_, gphash::kGphashRootMagic, "a hash table"));
    if (!format::IsValidValueSize(root_.value_size)) {
      return Bad(20, "value size " + std::to_string(root_.value_size) + " is not " +
                         std::to_string(format::kMinValueSize) + ".." +
                         std::to_string(format::kMaxValueSize));
    }
    if (!gphash::IsValidGeometry(root_.levels, root_.hash_locations, root_.slots_per_bucket)) {
      return Bad(24, "geometry " + std::to_string(root_.levels) + "L-" +
                         std::to_string(root_.hash_locations) + "H-" +
                         std::to_string(root_.slots_per_bucket) + "S is out of range");
    }
    const gphash::ValueMode expected_mode = gphash::ValueModeFor(root_.value_size);
    if (root_.value_mode != expected_mode) {
      return Bad(27, "value mode " + std::to_string(root_.value_mode) +
                         " does not match value size " + std::to_string(root_.value_size));
    }
    uint32_t bucket_bytes = gphash::BucketBytes(root_.slots_per_bucket, root_.key_size);
    if (root_.bucket_bytes != bucket_bytes) {
      return Bad(28, "bucket size " + std::to_string(root_.bucket_bytes) + " is not " +
                         std::to_string(bucket_bytes));
    }
    if (expected_mode == gphash::kValueCells) {
      if (root_.cell_size != gphash::CellSizeFor(root_.value_size)) {
        return Bad(40, "cell size " + std::to_string(root_.cell_size) +
                           " does not fit value size " + std::to_string(root_.value_size));
      }
      if (root_.cells_per_chunk < 1 || root_.cells_per_chunk > gphash::kMaxCellsPerChunk) {
        return Bad(48,
                   "cells per chunk " + std::to_string(root_.cells_per_chunk) + " is out of range");
      }
    } else if (root_.cell_size != 0 || root_.cells_per_chunk != 0) {
      return Bad(40, "inline values with a cell size");
    }
    return Status::OK();
  }

  void Fill(GphashView* view) {
    FillIdentity(root_, view);
    view->geometry_levels = root_.levels;
    view->geo = gphash::GeometryOf(root_);
    view->cells_per_chunk = root_.cells_per_chunk;
    view->chunk_bytes = root_.cells_per_chunk * root_.cell_size;
    view->resizes = root_.resizes;
    ranges_.push_back({root_offset_, gphash::kGphashRootSize, "root", 0});
  }

  Status CheckLevelSet(GphashView* view) {
    view->active_word = root_.active_levelset;
    uint32_t index = gphash::ActiveLevelSetIndex(root_.active_levelset);
    uint64_t set_field = offsetof(GphashRoot, levelsets) + index * sizeof(LevelSet);
    const LevelSet& set = root_.levelsets[index];
    std::string which = "LevelSet " + std::to_string(index) + ": ";
    if (format::Checksum64(&set, offsetof(LevelSet, checksum)) != set.checksum) {
      return Bad(set_field + offsetof(LevelSet, checksum), which + "checksum mismatch");
    }
    if (set.generation != gphash::ActiveLevelSetGeneration(root_.active_levelset) ||
        set.generation == 0) {
      return Bad(set_field + 8, which + "generation " + std::to_string(set.generation) +
                                    " does not match the active word " +
                                    HexOffset(root_.active_levelset));
    }
    if (set.level_count < 1 || set.level_count > gphash::kMaxLevels) {
      return Bad(set_field, which + "level count " + std::to_string(set.level_count) +
                                " is not 1.." + std::to_string(gphash::kMaxLevels));
    }
    if ((set.flags & ~gphash::kLevelSetResizing) != 0) {
      return Bad(set_field + 4, which + "unknown flags " + HexOffset(set.flags));
    }
    if ((set.flags & gphash::kLevelSetResizing) != 0 && set.level_count < 2) {
      return Bad(set_field + 4, which + "resizing with a single level");
    }
    view->levelset = set;
    view->resizing = (set.flags & gphash::kLevelSetResizing) != 0;
    const uint64_t top = set.levels[0].bucket_count;
    for (uint32_t i = 0; i < set.level_count; ++i) {
      const gphash::LevelDesc& desc = set.levels[i];
      uint64_t field = set_field + offsetof(LevelSet, levels) + i * sizeof(gphash::LevelDesc);
      std::string level = which + "level " + std::to_string(i) + ": ";
      if (!format::IsPowerOfTwo(desc.bucket_count) || desc.bucket_count > gphash::kMaxBucketCount ||
          desc.bucket_count != (top >> i)) {
        return Bad(field + 8, level + "bucket count " + std::to_string(desc.bucket_count) +
                                  " is not a power of two half the level above");
      }
      if (desc.offset % format::kExtentAlignment != 0) {
        return Bad(field, level + "offset " + HexOffset(desc.offset) + " is not 4 KiB aligned");
      }
      if (desc.level_id >= set.next_level_id ||
          (i > 0 && desc.level_id >= set.levels[i - 1].level_id)) {
        return Bad(field + 16,
                   level + "level id " + std::to_string(desc.level_id) + " is out of order");
      }
      uint64_t bytes = desc.bucket_count * root_.bucket_bytes;
      Status in_heap =
          pool_.CheckRange(desc.offset, bytes, "table '" + table_ + "' level " + std::to_string(i));
      if (!in_heap.ok()) return in_heap;
      ranges_.push_back({desc.offset, bytes, "level " + std::to_string(i), field});
      view->levels.push_back({desc.offset, desc.bucket_count, desc.level_id});
    }
    return Status::OK();
  }

  Status CheckChunks(GphashView* view) {
    uint64_t count = root_.value_chunk_count;
    if (root_.value_mode == gphash::kValueInline) {
      if (count != 0) return Bad(80, "inline values with value chunks");
      return Status::OK();
    }
    if (count > gphash::kMaxValueChunks) {
      return Bad(80, "value chunk count " + std::to_string(count) + " exceeds " +
                         std::to_string(gphash::kMaxValueChunks));
    }
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t offset = root_.value_chunks[i];
      uint64_t field = offsetof(GphashRoot, value_chunks) + i * 8;
      if (offset % format::kExtentAlignment != 0) {
        return Bad(field, "value chunk " + std::to_string(i) + " offset " + HexOffset(offset) +
                              " is not 4 KiB aligned");
      }
      GPKV_RETURN_IF_ERROR(pool_.CheckRange(
          offset, view->chunk_bytes, "table '" + table_ + "' value chunk " + std::to_string(i)));
      ranges_.push_back({offset, view->chunk_bytes, "value chunk " + std::to_string(i), field});
      view->chunks.push_back(offset);
    }
    return Status::OK();
  }

  Status CheckOverlaps() {
    std::vector<Range> sorted = ranges_;
    std::sort(sorted.begin(), sorted.end(),
              [](const Range& a, const Range& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i - 1].offset + sorted[i - 1].length > sorted[i].offset) {
        return Bad(sorted[i].field_offset, sorted[i].what + " at " + HexOffset(sorted[i].offset) +
                                               " overlaps " + sorted[i - 1].what + " at " +
                                               HexOffset(sorted[i - 1].offset));
      }
    }
    return Status::OK();
  }

  // Every range must be an allocated extent of its own: catches a flipped
  // level or chunk offset (LevelSets and the chunk list carry no checksum of
  // their own beyond the LevelSet's) that still lands aligned inside the heap.
  Status CheckAllocated() {
    const format::PoolHeader& header = pool_.header();
    std::vector<std::pair<uint64_t, uint64_t>> extents;  // (offset, length)
    const auto* entries = pool_.At<format::ExtentEntry>(header.extent_table_offset);
    for (uint64_t i = 0; i < header.extent_capacity; ++i) {
      format::ExtentEntry entry;
      std::memcpy(&entry, &entries[i], sizeof(entry));
      if (entry.state == format::kExtentAllocated) extents.emplace_back(entry.offset, entry.length);
    }
    std::sort(extents.begin(), extents.end());
    for (const Range& range : ranges_) {
      auto it = std::lower_bound(extents.begin(), extents.end(),
                                 std::make_pair(range.offset, uint64_t{0}));
      if (it == extents.end() || it->first != range.offset || it->second < range.length) {
        return Bad(range.field_offset, range.what + " at " + HexOffset(range.offset) +
                                           " is not an allocated extent of " +
                                           std::to_string(range.length) + " bytes");
      }
    }
    return Status::OK();
  }

  GphashRoot root_{};
  std::vector<Range> ranges_;
};

}  // namespace

std::string HexOffset(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIx64, value);
  return buffer;
}

std::string GphashView::BucketRegion(uint32_t level, uint64_t bucket) const {
  return "table '" + table_name + "' level " + std::to_string(level) + " bucket " +
         std::to_string(bucket);
}

uint64_t GphashView::TotalSlots() const {
  uint64_t slots = 0;
  for (const GphashLevel& level : levels) slots += level.bucket_count * geo.slots_per_bucket;
  return slots;
}

Result<GphashView> ReadGphash(const pm::Pool& pool, const std::string& table_name,
                              uint64_t root_offset, bool require_allocated) {
  GphashView view;
  RootChecker checker(pool, table_name, root_offset, require_allocated);
  GPKV_RETURN_IF_ERROR(checker.Read(&view));
  return view;
}

CellIndex::CellIndex(const GphashView& view)
    : chunk_offsets_(view.chunks),
      cell_size_(view.geo.cell_size),
      cells_per_chunk_(view.cells_per_chunk),
      chunk_bytes_(view.chunk_bytes) {
  for (size_t i = 0; i < view.chunks.size(); ++i) {
    sorted_.push_back({view.chunks[i], i * view.cells_per_chunk});
  }
  std::sort(sorted_.begin(), sorted_.end(),
            [](const Chunk& a, const Chunk& b) { return a.offset < b.offset; });
}

int64_t CellIndex::Lookup(uint64_t offset) const {
  if (cell_size_ == 0) return -1;
  auto it = std::upper_bound(sorted_.begin(), sorted_.end(), offset,
                             [](uint64_t value, const Chunk& c) { return value < c.offset; });
  if (it == sorted_.begin()) return -1;
  --it;
  uint64_t within = offset - it->offset;
  if (within >= chunk_bytes_ || within % cell_size_ != 0) return -1;
  return static_cast<int64_t>(it->first_cell + within / cell_size_);
}

uint64_t CellIndex::OffsetOf(uint64_t cell) const {
  return chunk_offsets_[cell / cells_per_chunk_] + (cell % cells_per_chunk_) * cell_size_;
}

}  // namespace gpkv::gphash
