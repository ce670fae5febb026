#include "tables/lsm/cpu/backend.h"

#include <algorithm>
#include <cstring>

#include "pm/extent_allocator.h"
#include "tables/lsm/cpu/merge.h"
#include "tables/lsm/reader.h"
#include "tables/lsm/root.h"

namespace gpkv::lsm::cpu {
namespace {

// A batch of at least this many operations looks up its keys on threads.
constexpr size_t kParallelOps = 2048;

}  // namespace

LsmCpu::LsmCpu(pm::Pool& pool, std::string table_name, uint64_t root_offset, int threads)
    : pool_(pool),
      table_name_(std::move(table_name)),
      root_offset_(root_offset),
      threads_(std::max(1, threads)) {}

Result<std::unique_ptr<LsmCpu>> LsmCpu::Open(pm::Pool& pool, const std::string& table_name,
                                             uint64_t root_offset, const TableOptions& options,
                                             int threads, recovery::Report* report) {
  std::unique_ptr<LsmCpu> table(new LsmCpu(pool, table_name, root_offset, threads));
  GPKV_RETURN_IF_ERROR(table->Recover(options, report));
  return table;
}

Status LsmCpu::Recover(const TableOptions& options, recovery::Report* report) {
  auto view = ReadLsmRoot(pool_, table_name_, root_offset_);
  if (!view.ok()) return view.status();
  table_id_ = view->table_id;
  shape_ = view->shape();
  log2_batch_ = view->log2_batch;
  log_offset_ = view->log_offset;
  log_capacity_ = view->log_capacity;
  buffer_entries_ = view->buffer_entries();
  max_dead_percent_ = options.ordered.max_dead_percent;
  manifest_ = view->manifest;
  log_bytes_ = view->log_bytes;
  level_tombstones_.assign(kMaxLevels, 0);

  // Every run whole: a run is read in place by every query, so its bytes are
  // checked once here (the GPU backend checks its copy on the device).
  std::vector<uint32_t> levels;
  for (uint32_t level = 0; level < manifest_.level_count; ++level) {
    if (manifest_.levels[level].offset != 0) levels.push_back(level);
  }
  // One run at a time, its checksum summed on all threads (the largest run
  // holds about half the entries).
  for (uint32_t level : levels) {
    RunSummary summary;
    auto run = ReadRun(pool_, *view, level, RunCheck::kChecksum, &summary, threads_);
    if (!run.ok()) return run.status();
    level_tombstones_[level] = summary.tombstones;
  }

  // The log: every published record, oldest first, into the write buffer.
  WriteBuffer buffer;
  uint64_t last_seq = 0;
  uint64_t records = 0;
  GPKV_RETURN_IF_ERROR(
      ReplayLog(pool_, *view, threads_, &buffer, &last_seq, &records, &log_entries_));
  if (report != nullptr && records != 0) {
    report->findings.push_back(
        {recovery::Finding::Severity::kInfo, view->TableRegion() + " log", log_offset_,
         pool_.Where(view->TableRegion() + " log", log_offset_) + ": replayed " +
             std::to_string(records) + " log records into the write buffer"});
  }
  next_seq_ = last_seq + 1;
  version_ = VersionOf(manifest_, std::move(buffer));
  return Status::OK();
}

std::unique_ptr<LsmCpu::Version> LsmCpu::VersionOf(const Manifest& manifest, WriteBuffer buffer) {
  auto version = std::make_unique<Version>();
  std::map<uint64_t, std::shared_ptr<const std::vector<uint64_t>>> cache;
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    const RunRef& ref = manifest.levels[level];
    if (ref.offset == 0) continue;
    RunView run = PoolRunView(pool_, ref.offset, ref.entries, shape_);
    auto cached = fence_cache_.find(ref.offset);
    std::shared_ptr<const std::vector<uint64_t>> fences;
    if (cached != fence_cache_.end()) {
      fences = cached->second;
    } else {
      fences = std::make_shared<const std::vector<uint64_t>>(FenceKeys(run, shape_.key_words));
    }
    run.fences = fences->data();
    run.fence_count = fences->size() / shape_.key_words;
    cache[ref.offset] = fences;
    version->runs.push_back(run);
    version->levels.push_back(level);
    version->fences.push_back(std::move(fences));
  }
  fence_cache_.swap(cache);  // runs no longer published drop out
  version->buffer = std::move(buffer);
  return version;
}

Sources LsmCpu::SourcesOf(const Version& version) const {
  Sources sources;
  for (size_t i = 0; i < version.buffer.runs().size(); ++i) {
    sources.runs[sources.count++] = version.buffer.View(i);
  }
  for (const RunView& run : version.runs) sources.runs[sources.count++] = run;
  return sources;
}

Status LsmCpu::Put(const uint8_t* keys, const uint8_t* values, size_t n) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  return Write(SortBatch(keys, values, n, MakeMeta(next_seq_, false), shape_, threads_, nullptr));
}

Status LsmCpu::Erase(const uint8_t* keys, uint8_t* erased, size_t n) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  std::vector<uint8_t> first;
  RunData sorted = SortBatch(keys, nullptr, n, MakeMeta(next_seq_, true), shape_, threads_, &first);
  // Only keys that are live get a tombstone: erasing an absent key changes
  // nothing, so it writes nothing. Writers are serialised: version_ is ours.
  const Sources sources = SourcesOf(*version_);
  const RunView view = sorted.View();
  std::vector<uint8_t> live(view.count);
  DispatchKeyWords(shape_.key_words, [&](auto words) {
    constexpr uint32_t W = decltype(words)::value;
#pragma omp parallel for num_threads(threads_) if (view.count >= kParallelOps)
    for (uint64_t i = 0; i < view.count; ++i) {
      const Hit hit = FindNewest<W>(sources, view.keys + i * W);
      live[i] = hit.source >= 0 && !IsTombstone(sources.runs[hit.source].meta[hit.index]);
    }
    if (erased != nullptr) {
      // Input i erased its key when it is the key's first occurrence and the
      // key was live.
#pragma omp parallel for num_threads(threads_) if (n >= kParallelOps)
      for (size_t i = 0; i < n; ++i) {
        uint64_t key[W];
        std::memcpy(key, keys + i * W * 8, W * 8);
        const uint64_t index = LowerBound<W>(view, key);
        erased[i] = first[i] && live[index];
      }
    }
  });
  RunData tombstones(shape_);
  tombstones.Reserve(view.count);
  for (uint64_t i = 0; i < view.count; ++i) {
    if (live[i]) tombstones.Append(view, i);
  }
  return Write(std::move(tombstones));
}

Status LsmCpu::Write(RunData batch) {
  if (batch.empty()) return Status::OK();
  const bool tombstones = IsTombstone(batch.View().meta[0]);
  const uint64_t record_bytes =
      ColumnarRecordBytes(batch.count(), shape_.key_size(), shape_.value_size, tombstones);
  // The logged entries decide (not the buffer's, which merges duplicates as
  // its runs happen to meet): the GPU backend decides the same, flushes at
  // the same batch and writes the same runs.
  const bool fits_buffer = GoesToLog(log_entries_, log_bytes_, batch.count(), record_bytes,
                                     buffer_entries_, log_capacity_);
  GPKV_RETURN_IF_ERROR(fits_buffer ? AppendToLog(std::move(batch)) : Flush(std::move(batch)));
  ++next_seq_;
  GPKV_RETURN_IF_ERROR(MaybeCompact());
  return pool_.Sync();
}

Status LsmCpu::AppendToLog(RunData batch) {
  const uint64_t record_bytes = WriteLogRecord(pool_, log_offset_ + log_bytes_, manifest_.log_epoch,
                                               next_seq_, shape_, batch.View(), threads_);
  PublishLogWord(pool_, root_offset_, manifest_.log_epoch, log_bytes_ + record_bytes);
  log_bytes_ += record_bytes;
  log_entries_ += batch.count();

  auto next = std::make_unique<Version>();
  next->runs = version_->runs;
  next->levels = version_->levels;
  next->fences = version_->fences;
  next->buffer = version_->buffer.With(std::move(batch), shape_, threads_);
  std::unique_lock<std::shared_mutex> lock(version_mutex_);
  version_.swap(next);
  return Status::OK();
}

Status LsmCpu::Flush(RunData batch) {
  // The cascade: the batch and the buffer merge with each occupied level
  // from 0 up, into the first free level that can hold the result (counted
  // before merges drop stale entries, so it always fits).
  std::vector<RunView> sources = {batch.View()};
  for (const auto& run : version_->buffer.runs()) sources.push_back(run->View());
  uint64_t upper = batch.count() + log_entries_;
  std::vector<uint64_t> replaced;
  std::vector<uint32_t> merged_levels;
  uint32_t target = 0;
  for (;; ++target) {
    if (target >= kMaxLevels) {
      return Status::PoolFull(pool_.Where("table '" + table_name_ + "' root", root_offset_) +
                              ": the levels cannot grow past " + std::to_string(kMaxLevels));
    }
    const RunRef& ref = manifest_.levels[target];
    if (ref.offset != 0) {
      sources.push_back(PoolRunView(pool_, ref.offset, ref.entries, shape_));
      upper += ref.entries;
      replaced.push_back(ref.offset);
      merged_levels.push_back(target);
      continue;
    }
    if (upper <= LevelCapacity(log2_batch_, target)) break;
  }
  bool older_levels = false;
  for (uint32_t level = target + 1; level < kMaxLevels; ++level) {
    older_levels |= manifest_.levels[level].offset != 0;
  }
  RunData merged = MergeRuns(sources, shape_, /*drop_tombstones=*/!older_levels, threads_);
  Manifest next = manifest_;
  for (uint32_t level : merged_levels) next.levels[level] = {0, 0};
  if (!merged.empty()) {
    auto offset = WriteRun(pool_, table_id_, shape_, merged.View(), threads_);
    if (!offset.ok()) return offset.status();
    next.levels[target] = {*offset, merged.count()};
  }
  next.applied_seq = next_seq_;
  return Install(next, replaced);
}

Status LsmCpu::Compact() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(CompactLocked());
  return pool_.Sync();
}

Status LsmCpu::CompactLocked() {
  std::vector<RunView> sources;
  for (const auto& run : version_->buffer.runs()) sources.push_back(run->View());
  std::vector<uint64_t> replaced;
  for (size_t i = 0; i < version_->runs.size(); ++i) {
    sources.push_back(version_->runs[i]);
    replaced.push_back(manifest_.levels[version_->levels[i]].offset);
  }
  if (sources.empty()) return Status::OK();
  RunData merged = MergeRuns(sources, shape_, /*drop_tombstones=*/true, threads_);
  Manifest next = manifest_;
  for (RunRef& ref : next.levels) ref = {0, 0};
  if (!merged.empty()) {
    uint32_t target = 0;
    while (LevelCapacity(log2_batch_, target) < merged.count()) ++target;
    auto offset = WriteRun(pool_, table_id_, shape_, merged.View(), threads_);
    if (!offset.ok()) return offset.status();
    next.levels[target] = {*offset, merged.count()};
  }
  next.applied_seq = next_seq_ - 1;
  next.compactions += 1;
  return Install(next, replaced);
}

Status LsmCpu::MaybeCompact() {
  if (!NeedsCompaction(manifest_, level_tombstones_.data(), max_dead_percent_)) {
    return Status::OK();
  }
  return CompactLocked();
}

Status LsmCpu::Install(Manifest next, const std::vector<uint64_t>& replaced) {
  next.log_epoch = (manifest_.log_epoch + 1) & kLogEpochMask;
  PublishManifest(pool_, root_offset_, &next);
  // The log is empty in the new epoch; a crash before this store leaves the
  // word one epoch behind, which readers take as an empty log.
  PublishLogWord(pool_, root_offset_, next.log_epoch, 0);
  manifest_ = next;
  log_bytes_ = 0;
  log_entries_ = 0;
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    const RunRef& ref = manifest_.levels[level];
    level_tombstones_[level] = ref.offset == 0 ? 0 : pool_.At<RunHeader>(ref.offset)->tombstones;
  }
  auto version = VersionOf(manifest_, WriteBuffer());
  {
    std::unique_lock<std::shared_mutex> lock(version_mutex_);
    version_.swap(version);
  }
  // No query reads the replaced runs any more: queries hold version_mutex_
  // shared for their whole call, and the new version is installed.
  Status first;
  for (uint64_t offset : replaced) {
    Status freed = pool_.allocator().Free(offset);
    if (first.ok() && !freed.ok()) first = freed;
  }
  return first;
}

}  // namespace gpkv::lsm::cpu
