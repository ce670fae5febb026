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
  log_halves_ = view->log_halves();
  half_capacity_ = view->half_capacity;
  publish_batch_ = CheckpointPublishBatch(view->log_batches);
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
    auto run = ReadRun(pool_, *view, level, RunCheck::kChecksum, nullptr, threads_);
    if (!run.ok()) return run.status();
  }

  // The log: every published record, oldest first, into the write buffer;
  // the records of a checkpoint's other half (a crash while it was in
  // flight) into a buffer of their own when the pool is writable: the
  // checkpoint is done again here before them.
  const bool resume = view->log_segment_count == 2 && !pool_.read_only();
  ReplayedLog log;
  GPKV_RETURN_IF_ERROR(ReplayLog(pool_, *view, threads_, resume, &log));
  if (report != nullptr && log.records != 0) {
    report->findings.push_back(ReplayedLogFinding(pool_, *view, log.records));
  }
  const LsmView::LogSegment& first = view->log_segments[0];
  log_half_ = first.half;
  log_epoch_ = first.epoch;
  log_bytes_ = first.bytes;
  log_entries_ = log.entries[0];
  next_seq_ = log.last_seq[1] + 1;
  version_ = VersionOf(manifest_, std::move(log.buffers[0]));
  UpdateLevelTombstones();
  if (resume) {
    GPKV_RETURN_IF_ERROR(StartCheckpoint(log.last_seq[0]));
    version_->buffer = std::move(log.buffers[1]);
    log_bytes_ = view->log_segments[1].bytes;
    log_entries_ = log.entries[1];
    GPKV_RETURN_IF_ERROR(PublishCheckpoint());
    GPKV_RETURN_IF_ERROR(pool_.Sync());
    if (report != nullptr) report->findings.push_back(CompletedCheckpointFinding(pool_, *view));
  }
  return Status::OK();
}

Status LsmCpu::Close() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  if (pending_ == nullptr) return Status::OK();
  GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  return pool_.Sync();
}

LsmCpu::~LsmCpu() {
  Close().IgnoreError();  // an error leaves the checkpoint to the next open
}

void LsmCpu::UpdateLevelTombstones() {
  const Manifest& levels = Levels();
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    const RunRef& ref = levels.levels[level];
    level_tombstones_[level] = ref.offset == 0 ? 0 : pool_.At<RunHeader>(ref.offset)->tombstones;
  }
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
  const WritePlan plan = PlanWrite(pending_ != nullptr, pending_ != nullptr ? pending_->batches : 0,
                                   publish_batch_, log_halves_, log_entries_, log_bytes_,
                                   batch.count(), record_bytes, buffer_entries_, half_capacity_);
  if (plan.publish_first) GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  if (plan.step == WriteStep::kCheckpoint) {
    // The half is full: its records go to the levels behind the batches,
    // the batch opens the other half.
    GPKV_RETURN_IF_ERROR(StartCheckpoint(next_seq_ - 1));
  }
  GPKV_RETURN_IF_ERROR(plan.step == WriteStep::kFlush ? Flush(std::move(batch))
                                                      : AppendToLog(std::move(batch)));
  ++next_seq_;
  GPKV_RETURN_IF_ERROR(MaybeCompact());
  return pool_.Sync();
}

Status LsmCpu::AppendToLog(RunData batch) {
  const uint64_t half_offset = log_offset_ + log_half_ * half_capacity_;
  const uint64_t record_bytes = WriteLogRecord(pool_, half_offset + log_bytes_, log_epoch_,
                                               next_seq_, shape_, batch.View(), threads_);
  PublishLogWord(pool_, root_offset_, log_half_, log_epoch_, log_bytes_ + record_bytes);
  log_bytes_ += record_bytes;
  log_entries_ += batch.count();
  if (pending_ != nullptr) ++pending_->batches;

  auto next = std::make_unique<Version>();
  next->runs = version_->runs;
  next->levels = version_->levels;
  next->fences = version_->fences;
  next->buffer = version_->buffer.With(std::move(batch), shape_, threads_);
  std::unique_lock<std::shared_mutex> lock(version_mutex_);
  version_.swap(next);
  return Status::OK();
}

Status LsmCpu::Cascade(std::vector<RunView> sources, uint64_t incoming, Manifest* next,
                       std::vector<uint64_t>* replaced) {
  const CascadePlan plan = PlanCascade(manifest_, log2_batch_, incoming);
  if (plan.target >= kMaxLevels) {
    return Status::PoolFull(pool_.Where("table '" + table_name_ + "' root", root_offset_) +
                            ": the levels cannot grow past " + std::to_string(kMaxLevels));
  }
  for (uint32_t i = 0; i < plan.merged_count; ++i) {
    const RunRef& ref = manifest_.levels[plan.merged[i]];
    sources.push_back(PoolRunView(pool_, ref.offset, ref.entries, shape_));
    replaced->push_back(ref.offset);
    next->levels[plan.merged[i]] = {0, 0};
  }
  RunData merged = MergeRuns(sources, shape_, /*drop_tombstones=*/!plan.older_levels, threads_);
  if (!merged.empty()) {
    auto offset = WriteRun(pool_, table_id_, shape_, merged.View(), threads_);
    if (!offset.ok()) return offset.status();
    next->levels[plan.target] = {*offset, merged.count()};
  }
  return Status::OK();
}

Status LsmCpu::Flush(RunData batch) {
  std::vector<RunView> sources = {batch.View()};
  for (const auto& run : version_->buffer.runs()) sources.push_back(run->View());
  Manifest next = manifest_;
  std::vector<uint64_t> replaced;
  GPKV_RETURN_IF_ERROR(Cascade(std::move(sources), batch.count() + log_entries_, &next, &replaced));
  next.applied_seq = next_seq_;
  return Install(next, replaced);
}

Status LsmCpu::StartCheckpoint(uint64_t applied_seq) {
  Manifest next = CheckpointManifest(manifest_, applied_seq);
  std::vector<uint64_t> replaced;
  if (!version_->buffer.empty()) {
    std::vector<RunView> sources;
    for (const auto& run : version_->buffer.runs()) sources.push_back(run->View());
    GPKV_RETURN_IF_ERROR(Cascade(std::move(sources), log_entries_, &next, &replaced));
  }
  SetLevelCount(&next);
  pending_ = std::make_unique<Pending>(Pending{next, std::move(replaced), 0});
  EnterLogHalf(next);
  // Queries read the new run from here on (it is in the pool, persisted);
  // the replaced runs stay allocated until the manifest is published.
  InstallLevels(next);
  return Status::OK();
}

void LsmCpu::EnterLogHalf(const Manifest& manifest) {
  log_half_ = static_cast<uint32_t>(manifest.log_half);
  log_epoch_ = manifest.log_epoch;
  log_bytes_ = 0;
  log_entries_ = 0;
}

void LsmCpu::InstallLevels(const Manifest& manifest) {
  UpdateLevelTombstones();
  auto version = VersionOf(manifest, WriteBuffer());
  std::unique_lock<std::shared_mutex> lock(version_mutex_);
  version_.swap(version);
}

Status LsmCpu::PublishCheckpoint() {
  std::unique_ptr<Pending> pending = std::move(pending_);
  PublishManifest(pool_, root_offset_, &pending->next);
  manifest_ = pending->next;
  // No query reads the replaced runs: the version installed at the
  // checkpoint's start no longer names them, and queries hold version_mutex_
  // shared for their whole call.
  return FreeRuns(pool_, pending->replaced);
}

Status LsmCpu::Compact() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(CompactLocked());
  return pool_.Sync();
}

Status LsmCpu::CompactLocked() {
  if (pending_ != nullptr) GPKV_RETURN_IF_ERROR(PublishCheckpoint());
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
  if (!NeedsCompaction(Levels(), level_tombstones_.data(), max_dead_percent_)) {
    return Status::OK();
  }
  return CompactLocked();
}

Status LsmCpu::Install(Manifest next, const std::vector<uint64_t>& replaced) {
  EmptyLogHalf(manifest_, &next);
  PublishManifest(pool_, root_offset_, &next);
  // The log half is empty in the new epoch; a crash before this store
  // leaves the word one epoch behind, which readers take as an empty half.
  PublishLogWord(pool_, root_offset_, static_cast<uint32_t>(next.log_half), next.log_epoch, 0);
  manifest_ = next;
  EnterLogHalf(next);
  InstallLevels(next);
  // No query reads the replaced runs any more: queries hold version_mutex_
  // shared for their whole call, and the new version is installed.
  return FreeRuns(pool_, replaced);
}

}  // namespace gpkv::lsm::cpu
