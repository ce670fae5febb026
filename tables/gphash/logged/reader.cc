#include "tables/gphash/logged/reader.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "pm/extent_allocator.h"
#include "tables/log/checksum.h"
#include "tables/log/slots.h"

namespace gpkv::gphash::logged {

using tables::Hex;

bool IsLoggedRoot(const pm::Pool& pool, uint64_t root_offset) {
  if (!pool.CheckRange(root_offset, sizeof(uint64_t), "root").ok()) return false;
  uint64_t magic = 0;
  std::memcpy(&magic, pool.At<uint8_t>(root_offset), sizeof(magic));
  return magic == kLoggedRootMagic || magic == kOneHalfRootMagic;
}

namespace {

class RootChecker : public tables::RootReader {
 public:
  using RootReader::RootReader;

  Status Read(LoggedView* view) {
    GPKV_RETURN_IF_ERROR(CopyRoot(kLoggedRootSize, &root_));
    if (root_.magic == kOneHalfRootMagic) {
      return Status::Unsupported(
          pool_.Where("table '" + table_ + "' root", root_offset_) +
          ": a logged hash table of the one-half log format (root magic \"GPKVHLGR\"), which "
          "this gpkv does not read; it reads the two-half log format (\"GPKVHLG2\") only: "
          "dump the table with the gpkv that wrote it and load it into a new table");
    }
    GPKV_RETURN_IF_ERROR(CheckFixedPart());
    Fill(view);
    GPKV_RETURN_IF_ERROR(CheckCheckpoint(view));
    const uint64_t words[log::kMaxHalves] = {root_.log_word, root_.second_log_word};
    GPKV_RETURN_IF_ERROR(log::FindSegments(
        view->log_place, words, static_cast<uint32_t>(view->checkpoint.log_half),
        view->checkpoint.log_epoch,
        [&](uint64_t word_offset, const std::string& why) {
          return Bad(word_offset - root_offset_, why);
        },
        &view->log_segments));
    return require_allocated_ ? CheckAllocated(*view) : Status::OK();
  }

 private:
  Status CheckFixedPart() {
    GPKV_RETURN_IF_ERROR(
        CheckMagicChecksumAndKeySize(root_, kLoggedRootMagic, "a logged hash table"));
    if (!format::IsValidValueSize(root_.value_size)) {
      return Bad(20, "value size " + std::to_string(root_.value_size) + " is out of range");
    }
    if (root_.log2_batch < kMinLog2Batch || root_.log2_batch > kMaxLog2Batch) {
      return Bad(24, "batch entries 2^" + std::to_string(root_.log2_batch) + " is out of range");
    }
    if (root_.log_batches < 1 || root_.log_batches > kMaxLogBatches) {
      return Bad(28, "log batches " + std::to_string(root_.log_batches) + " is not 1.." +
                         std::to_string(kMaxLogBatches));
    }
    const uint64_t capacity =
        LogCapacity(root_.log2_batch, root_.key_size, root_.value_size, root_.log_batches);
    if (root_.log_capacity != capacity) {
      return Bad(40, "log capacity " + std::to_string(root_.log_capacity) + " is not " +
                         std::to_string(capacity));
    }
    if (root_.log_offset % format::kExtentAlignment != 0) {
      return Bad(32, "log offset " + Hex(root_.log_offset) + " is not 4 KiB aligned");
    }
    Status range = pool_.CheckRange(root_.log_offset, LogExtentBytes(root_.log_capacity),
                                    "table '" + table_ + "' log");
    if (!range.ok()) return Bad(32, range.message());
    if (Overlaps(root_.log_offset, LogExtentBytes(root_.log_capacity), root_offset_,
                 kLoggedRootSize)) {
      return Bad(32, "log at " + Hex(root_.log_offset) + " overlaps the root");
    }
    return Status::OK();
  }

  void Fill(LoggedView* view) {
    FillIdentity(root_, view);
    view->log2_batch = root_.log2_batch;
    view->log_batches = root_.log_batches;
    view->log_offset = root_.log_offset;
    view->log_capacity = root_.log_capacity;
    view->expected_keys = root_.expected_keys;
    view->log_place.offset = root_.log_offset;
    view->log_place.halves = kLogHalves;
    view->log_place.half_capacity = root_.log_capacity;
    view->log_place.word_offsets[0] = root_offset_ + offsetof(LoggedRoot, log_word);
    view->log_place.word_offsets[1] = root_offset_ + offsetof(LoggedRoot, second_log_word);
  }

  Status CheckCheckpoint(LoggedView* view) {
    view->active_word = root_.active_checkpoint;
    uint64_t at = 0;
    auto active = log::CheckActiveSlot(
        root_.active_checkpoint, root_.checkpoints, offsetof(LoggedRoot, active_checkpoint),
        offsetof(LoggedRoot, checkpoints), "checkpoint",
        [&](uint64_t field, const std::string& why) { return Bad(field, why); }, &at);
    if (!active.ok()) return active.status();
    const Checkpoint& checkpoint = *active;
    if (checkpoint.log_epoch > log::kEpochMask || checkpoint.applied_seq > log::kMaxSeq) {
      return Bad(at + offsetof(Checkpoint, applied_seq),
                 "checkpoint sequence number or log epoch out of range");
    }
    if (checkpoint.log_half >= kLogHalves) {
      return Bad(at + offsetof(Checkpoint, log_half),
                 "checkpoint log half " + std::to_string(checkpoint.log_half) + " is not 0 or 1");
    }
    const uint64_t field = at + offsetof(Checkpoint, image_offset);
    if (checkpoint.image_offset == 0) {
      if (checkpoint.image_entries != 0) return Bad(field, "no image but image entries");
    } else {
      if (checkpoint.image_offset % format::kExtentAlignment != 0) {
        return Bad(field, "image offset " + Hex(checkpoint.image_offset) + " is not 4 KiB aligned");
      }
      const uint64_t bytes = ImageBytes(checkpoint.image_entries, root_.key_size, root_.value_size);
      if (checkpoint.image_entries > pool_.size() / root_.key_size) {
        return Bad(field, "image of " + std::to_string(checkpoint.image_entries) +
                              " entries cannot fit the pool");
      }
      Status range = pool_.CheckRange(checkpoint.image_offset, bytes, view->ImageRegion());
      if (!range.ok()) return Bad(field, range.message());
      if (Overlaps(checkpoint.image_offset, bytes, root_offset_, kLoggedRootSize) ||
          Overlaps(checkpoint.image_offset, bytes, root_.log_offset,
                   LogExtentBytes(root_.log_capacity))) {
        return Bad(field, "image at " + Hex(checkpoint.image_offset) + " overlaps the root or log");
      }
    }
    view->checkpoint = checkpoint;
    return Status::OK();
  }

  Status CheckAllocated(const LoggedView& view) {
    struct Range {
      uint64_t offset, length;
      const char* what;
    };
    std::vector<Range> ranges = {{root_offset_, kLoggedRootSize, "root"},
                                 {root_.log_offset, LogExtentBytes(root_.log_capacity), "log"}};
    if (view.checkpoint.image_offset != 0) {
      ranges.push_back({view.checkpoint.image_offset,
                        ImageBytes(view.checkpoint.image_entries, root_.key_size, root_.value_size),
                        "image"});
    }
    for (const Range& range : ranges) {
      if (!pool_.allocator().IsAllocated(range.offset, range.length)) {
        return Status::Corruption(
            pool_.Where("table '" + table_ + "' " + range.what, range.offset) +
            ": not an allocated extent of " + std::to_string(range.length) + " bytes");
      }
    }
    return Status::OK();
  }

  static bool Overlaps(uint64_t a, uint64_t a_length, uint64_t b, uint64_t b_length) {
    return a < b + b_length && b < a + a_length;
  }

  LoggedRoot root_{};
};

}  // namespace

Result<LoggedView> ReadLoggedRoot(const pm::Pool& pool, const std::string& table_name,
                                  uint64_t root_offset, bool require_allocated) {
  LoggedView view;
  RootChecker checker(pool, table_name, root_offset, require_allocated);
  GPKV_RETURN_IF_ERROR(checker.Read(&view));
  return view;
}

ImageArrays ImageOf(const pm::Pool& pool, const LoggedView& view) {
  const Checkpoint& checkpoint = view.checkpoint;
  if (checkpoint.image_offset == 0) return {};
  const uint8_t* image = pool.At<uint8_t>(checkpoint.image_offset);
  return {image + kImageHeaderSize,
          image + ImageValuesOffset(checkpoint.image_entries, view.key_size),
          checkpoint.image_entries};
}

Status CheckImage(const pm::Pool& pool, const LoggedView& view, int threads) {
  const Checkpoint& checkpoint = view.checkpoint;
  if (checkpoint.image_offset == 0) return Status::OK();
  const uint64_t offset = checkpoint.image_offset;
  auto bad = [&](uint64_t at, const std::string& why) {
    return Status::Corruption(pool.Where(view.ImageRegion(), at) + ": " + why);
  };
  ImageHeader header;
  std::memcpy(&header, pool.At<uint8_t>(offset), sizeof(header));
  if (header.magic != kImageMagic) return bad(offset, "bad image magic " + Hex(header.magic));
  const uint64_t checksum = format::Checksum64(&header, offsetof(ImageHeader, checksum));
  if (checksum != header.checksum) {
    return bad(offset + offsetof(ImageHeader, checksum), "image header checksum mismatch (stored " +
                                                             Hex(header.checksum) + ", computed " +
                                                             Hex(checksum) + ")");
  }
  if (header.table_id != view.table_id || header.entries != checkpoint.image_entries ||
      header.key_size != view.key_size || header.value_size != view.value_size ||
      header.generation != checkpoint.generation) {
    return bad(offset,
               "image header (table " + std::to_string(header.table_id) + ", " +
                   std::to_string(header.entries) + " entries, generation " +
                   std::to_string(header.generation) + ") does not match its checkpoint's (table " +
                   std::to_string(view.table_id) + ", " + std::to_string(checkpoint.image_entries) +
                   " entries, generation " + std::to_string(checkpoint.generation) + ")");
  }
  const uint64_t words = ImageDataWords(header.entries, view.key_size, view.value_size);
  const uint64_t seed = ImageSeed(view.table_id, header.generation);
  const uint64_t computed =
      log::PositionChecksum(seed, pool.At<uint8_t>(offset + kImageHeaderSize), words, threads);
  if (computed != header.data_checksum) {
    return bad(offset + kImageHeaderSize, "image data checksum mismatch (stored " +
                                              Hex(header.data_checksum) + ", computed " +
                                              Hex(computed) + ")");
  }
  const ImageArrays image = ImageOf(pool, view);
  const uint32_t key_words = view.key_size / 8;
  for (uint64_t i = 1; i < image.entries; ++i) {
    const auto* previous = reinterpret_cast<const uint64_t*>(image.keys + (i - 1) * view.key_size);
    const auto* key = reinterpret_cast<const uint64_t*>(image.keys + i * view.key_size);
    if (CompareKeys(previous, key, key_words) >= 0) {
      return bad(offset + kImageHeaderSize + i * view.key_size,
                 "image key " + std::to_string(i) + " does not follow the one before");
    }
  }
  return Status::OK();
}

}  // namespace gpkv::gphash::logged
