#include "tables/lsm/reader.h"

#include <algorithm>
#include <cstring>

#include "format/checksum.h"
#include "pm/extent_allocator.h"
#include "tables/log/slots.h"

namespace gpkv::lsm {

Status ReadDecodedLog(const pm::Pool& pool, const LsmView& view, const DecodedLogVisitor& visit,
                      BadLogRecord* bad_record, log::Cut* cut, int threads) {
  const EntryShape shape = view.shape();
  return ReadLog(
      pool, view,
      [&](uint32_t segment, const log::RecordHeader& header, uint64_t offset,
          const uint8_t* entries) {
        if (!bad_record->status.ok()) return;
        RunData record(shape);
        Status decoded = DecodeLogRecord(pool, view, header, offset, entries, &record);
        if (!decoded.ok()) {
          *bad_record = {
              std::move(decoded), offset, {segment, offset - view.log_segment(segment).offset}};
          return;
        }
        visit(segment, header, std::move(record));
      },
      cut, threads);
}

recovery::Finding ReplayedLogFinding(const pm::Pool& pool, const LsmView& view, uint64_t records) {
  const std::string region = view.TableRegion() + " log";
  return {recovery::Finding::Severity::kInfo, region, view.log_offset,
          pool.Where(region, view.log_offset) + ": replayed " + std::to_string(records) +
              " log records into the write buffer"};
}

recovery::Finding CompletedCheckpointFinding(const pm::Pool& pool, const LsmView& view) {
  const std::string region = view.TableRegion() + " log";
  const log::Segment& first = view.log_segment(0);
  return {recovery::Finding::Severity::kInfo, region, first.offset,
          pool.Where(region, first.offset) +
              ": completed the checkpoint in flight (the records of log half " +
              std::to_string(first.half) + " merged into the levels)"};
}

std::string LsmView::RunRegion(uint32_t level) const {
  return TableRegion() + " level " + std::to_string(level) + " run";
}

namespace {

struct Range {
  uint64_t offset;
  uint64_t length;
  std::string what;
};

class RootChecker : tables::RootReader {
 public:
  using RootReader::RootReader;

  Status Read(LsmView* view) {
    GPKV_RETURN_IF_ERROR(CopyRoot(kLsmRootSize, &root_));
    GPKV_RETURN_IF_ERROR(CheckFixedPart());
    Fill(view);
    GPKV_RETURN_IF_ERROR(CheckManifest(view));
    GPKV_RETURN_IF_ERROR(CheckLogWord(view));
    GPKV_RETURN_IF_ERROR(CheckOverlaps());
    return require_allocated_ ? CheckAllocated() : Status::OK();
  }

 private:
  Status CheckFixedPart() {
    GPKV_RETURN_IF_ERROR(CheckMagicChecksumAndKeySize(root_, kLsmRootMagic, "an ordered table"));
    if (!format::IsValidValueSize(root_.value_size)) {
      return Bad(20, "value size " + std::to_string(root_.value_size) + " is out of range");
    }
    if (root_.log2_batch < kMinLog2Batch || root_.log2_batch > kMaxLog2Batch) {
      return Bad(24, "batch entries 2^" + std::to_string(root_.log2_batch) + " is out of range");
    }
    if (root_.log_batches > kMaxLogBatches) {
      return Bad(28, "log batches " + std::to_string(root_.log_batches) + " is over " +
                         std::to_string(kMaxLogBatches));
    }
    if ((root_.flags & ~kRootTwoHalfLog) != 0) {
      return Bad(48, "unknown root flags " + Hex(root_.flags));
    }
    const uint64_t capacity = LogExtentBytes(root_.log2_batch, root_.key_size, root_.value_size,
                                             root_.log_batches, root_.flags);
    if (root_.log_capacity != capacity) {
      return Bad(40, "log capacity " + std::to_string(root_.log_capacity) + " is not " +
                         std::to_string(capacity));
    }
    if (root_.log_offset % format::kExtentAlignment != 0) {
      return Bad(32, "log offset " + Hex(root_.log_offset) + " is not 4 KiB aligned");
    }
    Status range =
        pool_.CheckRange(root_.log_offset, root_.log_capacity, "table '" + table_ + "' log");
    if (!range.ok()) return Bad(32, range.message());
    ranges_.push_back({root_offset_, kLsmRootSize, "root"});
    ranges_.push_back({root_.log_offset, root_.log_capacity, "log"});
    return Status::OK();
  }

  void Fill(LsmView* view) {
    FillIdentity(root_, view);
    view->log2_batch = root_.log2_batch;
    view->log_batches = root_.log_batches == 0 ? 1 : root_.log_batches;
    view->log_offset = root_.log_offset;
    view->log_capacity = root_.log_capacity;
    view->root_flags = root_.flags;
    view->log_place.offset = root_.log_offset;
    view->log_place.halves = LogHalves(root_.flags);
    view->log_place.half_capacity = root_.log_capacity / view->log_place.halves;
    view->log_place.word_offsets[0] = root_offset_ + offsetof(LsmRoot, log_word);
    view->log_place.word_offsets[1] = root_offset_ + offsetof(LsmRoot, second_log_word);
  }

  Status CheckManifest(LsmView* view) {
    view->active_word = root_.active_manifest;
    uint64_t at = 0;
    auto active = log::CheckActiveSlot(
        root_.active_manifest, root_.manifests, offsetof(LsmRoot, active_manifest),
        offsetof(LsmRoot, manifests), "manifest",
        [&](uint64_t field, const std::string& why) { return Bad(field, why); }, &at);
    if (!active.ok()) return active.status();
    const Manifest& manifest = *active;
    if (manifest.level_count > kMaxLevels || manifest.flags != 0 ||
        manifest.log_epoch > log::kEpochMask) {
      return Bad(at + 16, "manifest level count, flags or log epoch out of range");
    }
    if (manifest.log_half >= LogHalves(root_.flags)) {
      return Bad(at + offsetof(Manifest, log_half),
                 "manifest log half " + std::to_string(manifest.log_half) + " of a log of " +
                     std::to_string(LogHalves(root_.flags)));
    }
    for (uint32_t level = 0; level < kMaxLevels; ++level) {
      const RunRef& run = manifest.levels[level];
      const uint64_t field = at + offsetof(Manifest, levels) + level * sizeof(RunRef);
      const bool top = manifest.level_count != 0 && level == manifest.level_count - 1;
      if (run.offset == 0) {
        if (run.entries != 0 || top) {
          return Bad(field, "level " + std::to_string(level) + " is empty but claims entries");
        }
        continue;
      }
      if (level >= manifest.level_count) {
        return Bad(field, "level " + std::to_string(level) + " lies past the level count " +
                              std::to_string(manifest.level_count));
      }
      if (run.entries == 0 || run.entries > LevelCapacity(root_.log2_batch, level)) {
        return Bad(field, "level " + std::to_string(level) + " run of " +
                              std::to_string(run.entries) + " entries (capacity " +
                              std::to_string(LevelCapacity(root_.log2_batch, level)) + ")");
      }
      if (run.offset % format::kExtentAlignment != 0) {
        return Bad(field, "level " + std::to_string(level) + " run offset " + Hex(run.offset) +
                              " is not 4 KiB aligned");
      }
      const uint64_t bytes = RunExtentBytes(run.entries, root_.key_size, root_.value_size);
      Status range = pool_.CheckRange(run.offset, bytes, view->RunRegion(level));
      if (!range.ok()) return Bad(field, range.message());
      ranges_.push_back({run.offset, bytes, view->RunRegion(level)});
    }
    view->manifest = manifest;
    return Status::OK();
  }

  Status CheckLogWord(LsmView* view) {
    const uint64_t words[log::kMaxHalves] = {root_.log_word, root_.second_log_word};
    return log::FindSegments(
        view->log_place, words, static_cast<uint32_t>(view->manifest.log_half),
        view->manifest.log_epoch,
        [&](uint64_t word_offset, const std::string& why) {
          return Bad(word_offset - root_offset_, why);
        },
        &view->log_segments);
  }

  Status CheckOverlaps() {
    std::vector<Range> sorted = ranges_;
    std::sort(sorted.begin(), sorted.end(),
              [](const Range& a, const Range& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i - 1].offset + sorted[i - 1].length > sorted[i].offset) {
        return Bad(0, sorted[i - 1].what + " at " + Hex(sorted[i - 1].offset) + " overlaps " +
                          sorted[i].what + " at " + Hex(sorted[i].offset));
      }
    }
    return Status::OK();
  }

  Status CheckAllocated() {
    for (const Range& range : ranges_) {
      if (!pool_.allocator().IsAllocated(range.offset, range.length)) {
        return Status::Corruption(
            pool_.Where("table '" + table_ + "' " + range.what, range.offset) +
            ": not an allocated extent of " + std::to_string(range.length) + " bytes");
      }
    }
    return Status::OK();
  }

  LsmRoot root_{};
  std::vector<Range> ranges_;
};

}  // namespace

Result<LsmView> ReadLsmRoot(const pm::Pool& pool, const std::string& table_name,
                            uint64_t root_offset, bool require_allocated) {
  LsmView view;
  RootChecker checker(pool, table_name, root_offset, require_allocated);
  GPKV_RETURN_IF_ERROR(checker.Read(&view));
  return view;
}

Status ReadRunHeader(const pm::Pool& pool, const LsmView& view, uint32_t level,
                     RunHeader* header_out) {
  const RunRef& ref = view.manifest.levels[level];
  const std::string region = view.RunRegion(level);
  auto bad = [&](uint64_t offset, const std::string& why) {
    return Status::Corruption(pool.Where(region, offset) + ": " + why);
  };
  RunHeader header;
  std::memcpy(&header, pool.At<uint8_t>(ref.offset), sizeof(header));
  if (header.magic != kRunMagic) return bad(ref.offset, "bad run magic " + Hex(header.magic));
  const uint64_t checksum = format::Checksum64(&header, offsetof(RunHeader, checksum));
  if (checksum != header.checksum) {
    return bad(ref.offset + offsetof(RunHeader, checksum), "run header checksum mismatch (stored " +
                                                               Hex(header.checksum) +
                                                               ", computed " + Hex(checksum) + ")");
  }
  if (header.table_id != view.table_id || header.entries != ref.entries ||
      header.key_size != view.key_size || header.value_size != view.value_size) {
    return bad(ref.offset, "run header (table " + std::to_string(header.table_id) + ", " +
                               std::to_string(header.entries) +
                               " entries) does not match the manifest's (table " +
                               std::to_string(view.table_id) + ", " + std::to_string(ref.entries) +
                               " entries)");
  }
  if (header.max_seq > view.manifest.applied_seq || header.tombstones > header.entries) {
    return bad(ref.offset + 32, "run sequence numbers or tombstone count out of range");
  }
  *header_out = header;
  return Status::OK();
}

Status RunChecksumMismatch(const pm::Pool& pool, const LsmView& view, uint32_t level,
                           uint64_t stored, uint64_t computed) {
  return Status::Corruption(
      pool.Where(view.RunRegion(level), view.manifest.levels[level].offset + RunKeysOffset()) +
      ": run data checksum mismatch (stored " + Hex(stored) + ", computed " + Hex(computed) + ")");
}

Result<RunView> ReadRun(const pm::Pool& pool, const LsmView& view, uint32_t level, RunCheck check,
                        RunSummary* summary, int threads) {
  auto run = ReadRunData(pool, view, level, check, summary, threads);
  if (!run.ok()) return run;
  GPKV_RETURN_IF_ERROR(CheckRunFilter(pool, view, level, *run, check, threads));
  return run;
}

Status CheckRunFilter(const pm::Pool& pool, const LsmView& view, uint32_t level, const RunView& run,
                      RunCheck check, int threads) {
  if (check == RunCheck::kHeader) return Status::OK();
  const RunRef& ref = view.manifest.levels[level];
  const uint64_t filter_offset =
      ref.offset + RunFilterOffset(ref.entries, view.key_size, view.value_size);
  auto bad = [&](uint64_t offset, const std::string& why) {
    return Status::Corruption(pool.Where(view.RunRegion(level) + " filter", offset) + ": " + why);
  };
  uint64_t stored;
  std::memcpy(&stored, run.filter + run.filter_words, sizeof(stored));
  const uint64_t computed = RunFilterChecksum(view.table_id, run.filter, run.filter_words, threads);
  if (stored != computed) {
    return bad(filter_offset + run.filter_words * 8, "run filter checksum mismatch (stored " +
                                                         Hex(stored) + ", computed " +
                                                         Hex(computed) + ")");
  }
  if (check == RunCheck::kChecksum) return Status::OK();
  const uint32_t words = view.shape().key_words;
  for (uint64_t i = 0; i < run.count; ++i) {
    const uint64_t hash = FilterHash(run.keys + i * words, words);
    if (!FilterMayContain(run.filter, run.filter_words, hash)) {
      return bad(
          filter_offset + FilterWordOf(hash, run.filter_words) * 8,
          "the filter misses the key of entry " + std::to_string(i) + " (a get would not find it)");
    }
  }
  return Status::OK();
}

Result<RunView> ReadRunData(const pm::Pool& pool, const LsmView& view, uint32_t level,
                            RunCheck check, RunSummary* summary, int threads) {
  const RunRef& ref = view.manifest.levels[level];
  const std::string region = view.RunRegion(level);
  auto bad = [&](uint64_t offset, const std::string& why) {
    return Status::Corruption(pool.Where(region, offset) + ": " + why);
  };
  RunHeader header;
  GPKV_RETURN_IF_ERROR(ReadRunHeader(pool, view, level, &header));
  const EntryShape shape = view.shape();
  RunView run = PoolRunView(pool, ref.offset, ref.entries, shape);
  if (summary != nullptr) {
    summary->entries = header.entries;
    summary->tombstones = header.tombstones;
    summary->max_seq = header.max_seq;
  }
  if (check == RunCheck::kHeader) return run;
  const uint64_t data_checksum = RunDataChecksum(view.table_id, run, shape, threads);
  if (data_checksum != header.data_checksum) {
    return RunChecksumMismatch(pool, view, level, header.data_checksum, data_checksum);
  }
  if (check == RunCheck::kChecksum) return run;
  const uint32_t words = shape.key_words;
  for (uint64_t i = 1; i < run.count; ++i) {
    if (CompareKeys(run.keys + (i - 1) * words, run.keys + i * words, words) >= 0) {
      return bad(ref.offset + RunKeysOffset() + i * view.key_size,
                 "entry " + std::to_string(i) + " is not above its predecessor (run out of order)");
    }
  }
  RunSummary counted = Summarize(run);
  if (counted.tombstones != header.tombstones || counted.max_seq != header.max_seq) {
    return bad(ref.offset + 32, "run meta words disagree with the header's tombstones or max seq");
  }
  for (uint64_t i = 0; i < run.count; ++i) {
    if (SeqOf(run.meta[i]) == 0) {
      return bad(ref.offset + RunMetaOffset(run.count, view.key_size) + i * 8,
                 "entry " + std::to_string(i) + " has sequence number 0");
    }
  }
  return run;
}

Status ReadLog(const pm::Pool& pool, const LsmView& view, const log::RecordVisitor& visit,
               log::Cut* cut, int threads) {
  return log::ReadRecords(pool, view.TableRegion() + " log", view.log_segments, view.key_size,
                          view.value_size, view.manifest.applied_seq, visit, cut, threads);
}

namespace {

Status RecordEntryOutOfOrder(const pm::Pool& pool, const LsmView& view, uint64_t offset,
                             uint64_t entry) {
  return Status::Corruption(pool.Where(view.TableRegion() + " log record", offset) + ": entry " +
                            std::to_string(entry) +
                            " is out of order or has another sequence number");
}

}  // namespace

Status CheckColumnarRecordKeys(const pm::Pool& pool, const LsmView& view,
                               const log::RecordHeader& header, uint64_t offset,
                               const uint8_t* entries) {
  const uint32_t words = view.shape().key_words;
  const auto* keys = reinterpret_cast<const uint64_t*>(entries);
  for (uint64_t i = 1; i < header.count; ++i) {
    if (CompareKeys(keys + (i - 1) * words, keys + i * words, words) >= 0) {
      return RecordEntryOutOfOrder(pool, view, offset, i);
    }
  }
  return Status::OK();
}

Status DecodeLogRecord(const pm::Pool& pool, const LsmView& view, const log::RecordHeader& header,
                       uint64_t offset, const uint8_t* entries, RunData* out) {
  const EntryShape shape = view.shape();
  const uint32_t words = shape.key_words;
  RunData record(shape);
  record.Reserve(header.count);
  auto out_of_order = [&](uint64_t i) { return RecordEntryOutOfOrder(pool, view, offset, i); };
  if (header.flags == 0) {
    const uint64_t entry_bytes = log::RowEntryBytes(view.key_size, view.value_size);
    for (uint64_t i = 0; i < header.count; ++i) {
      const uint8_t* entry = entries + i * entry_bytes;
      uint64_t key[4];
      uint64_t meta;
      std::memcpy(key, entry, shape.key_size());
      std::memcpy(&meta, entry + shape.key_size(), 8);
      const bool ordered =
          i == 0 || CompareKeys(record.View().keys + (i - 1) * words, key, words) < 0;
      if (!ordered || SeqOf(meta) != header.seq) return out_of_order(i);
      record.Append(key, meta, entry + shape.key_size() + 8);
    }
  } else {
    const bool tombstones = (header.flags & log::kRecordTombstones) != 0;
    const uint64_t meta = MakeMeta(header.seq, tombstones);
    const uint8_t* values =
        tombstones ? nullptr : entries + uint64_t{header.count} * shape.key_size();
    GPKV_RETURN_IF_ERROR(CheckColumnarRecordKeys(pool, view, header, offset, entries));
    const auto* keys = reinterpret_cast<const uint64_t*>(entries);
    for (uint64_t i = 0; i < header.count; ++i) {
      record.Append(keys + i * words, meta,
                    values != nullptr ? values + i * shape.value_size : nullptr);
    }
  }
  out->Swap(record);
  return Status::OK();
}

}  // namespace gpkv::lsm
