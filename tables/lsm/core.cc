#include "tables/lsm/core.h"

#include <utility>

#include "pm/extent_allocator.h"
#include "tables/lsm/phase_timer.h"
#include "tables/lsm/reader.h"
#include "tables/lsm/root.h"
#include "tables/lsm/run.h"

namespace gpkv::lsm {

Core::Core(pm::Pool& pool, std::string table_name, uint64_t root_offset,
           std::unique_ptr<Backend> backend)
    : pool_(pool),
      table_name_(std::move(table_name)),
      root_offset_(root_offset),
      backend_(std::move(backend)) {}

Result<std::unique_ptr<Core>> Core::Open(pm::Pool& pool, const std::string& table_name,
                                         uint64_t root_offset, const TableOptions& options,
                                         std::unique_ptr<Backend> backend,
                                         recovery::Report* report) {
  std::unique_ptr<Core> core(new Core(pool, table_name, root_offset, std::move(backend)));
  GPKV_RETURN_IF_ERROR(core->Recover(options, report));
  return core;
}

std::string Core::Where() const { return pool_.path() + ": table '" + table_name_ + "'"; }

Status Core::Recover(const TableOptions& options, recovery::Report* report) {
  auto view = ReadLsmRoot(pool_, table_name_, root_offset_);
  if (!view.ok()) return view.status();
  shape_ = view->shape();
  log2_batch_ = view->log2_batch;
  log_capacity_ = view->log_capacity;
  buffer_entries_ = view->buffer_entries();
  max_dead_percent_ = options.ordered.max_dead_percent;
  manifest_ = view->manifest;
  log_halves_ = view->log_halves();
  log_ = log::Appender(view->log_place);
  publish_batch_ = CheckpointPublishBatch(view->log_batches);
  GPKV_RETURN_IF_ERROR(backend_->Attach(*view));

  // Every run whole: the backend reads it and checks its data checksum.
  auto version = std::make_shared<Version>();
  for (uint32_t level = 0; level < manifest_.level_count; ++level) {
    if (manifest_.levels[level].offset == 0) continue;
    auto run = backend_->ReadRun(*view, level);
    if (!run.ok()) return run.status();
    level_tombstones_[level] = (*run)->tombstones;
    version->levels[level] = std::move(*run);
  }

  // The log: every published record, oldest first, into the write buffer;
  // the records of a checkpoint's other half (a crash while it was in
  // flight) into a buffer of their own when the pool is writable: the
  // checkpoint is done again here before them.
  const bool resume = view->log_segments.count == 2 && !pool_.read_only();
  ReplayedRecords replayed;
  GPKV_RETURN_IF_ERROR(backend_->ReplayLog(*view, resume, &replayed));
  if (report != nullptr && replayed.records != 0) {
    report->findings.push_back(ReplayedLogFinding(pool_, *view, replayed.records));
  }
  const log::Segment& first = view->log_segment(0);
  log_.Enter(first.half, first.epoch, first.bytes);
  log_entries_ = replayed.entries[0];
  next_seq_ = replayed.last_seq[1] + 1;
  version->buffer = std::move(replayed.buffers[0]);
  SetVersion(std::move(version));
  if (resume) {
    GPKV_RETURN_IF_ERROR(StartCheckpoint(replayed.last_seq[0]));
    auto with_second = std::make_shared<Version>(*version_);
    with_second->buffer = std::move(replayed.buffers[1]);
    SetVersion(std::move(with_second));
    const log::Segment& second = view->log_segment(1);
    log_.Enter(second.half, second.epoch, second.bytes);
    log_entries_ = replayed.entries[1];
    GPKV_RETURN_IF_ERROR(PublishCheckpoint());
    GPKV_RETURN_IF_ERROR(pool_.Sync());
    if (report != nullptr) report->findings.push_back(CompletedCheckpointFinding(pool_, *view));
  }
  return backend_->FinishOpen();
}

Core::~Core() {
  // Best effort: an error here leaves the checkpoint to the next open
  // (DB::Close reports it through Close).
  Close().IgnoreError();
}

Status Core::Close() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  if (pending_ == nullptr) return Status::OK();
  GPKV_RETURN_IF_ERROR(backend_->BindThread());
  GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  return pool_.Sync();
}

Status Core::Put(const uint8_t* keys, const uint8_t* values, size_t n) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  if (n == 0) return Status::OK();
  GPKV_RETURN_IF_ERROR(backend_->BindThread());
  auto batch = backend_->SortPuts(keys, values, n, next_seq_);
  Status status = batch.ok() ? Apply(std::move(*batch), nullptr) : batch.status();
  backend_->EndWrite();
  return status;
}

Status Core::Erase(const uint8_t* keys, uint8_t* erased, size_t n) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  if (n == 0) return Status::OK();
  GPKV_RETURN_IF_ERROR(backend_->BindThread());
  // Only keys that are live get a tombstone: erasing an absent key changes
  // nothing, so it writes nothing. Writers are serialised: version_ is ours.
  auto batch = backend_->SortErases(keys, erased, n, next_seq_, *version_);
  Status status = batch.ok() ? Apply(nullptr, std::move(*batch)) : batch.status();
  backend_->EndWrite();
  return status;
}

Status Core::Write(const tables::ResolvedWrite& batch, uint8_t* probe_found) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  GPKV_RETURN_IF_ERROR(backend_->BindThread());
  auto apply = [&]() -> Status {
    if (batch.probes != 0) {
      // The installed version is the writer's (writers are serialised).
      std::vector<uint8_t> values(batch.probes * shape_.value_size);
      GPKV_RETURN_IF_ERROR(
          backend_->Get(batch.probe_keys.data(), values.data(), probe_found, batch.probes));
    }
    RunPtr puts, tombstones;
    if (batch.puts != 0) {
      auto sorted =
          backend_->SortPuts(batch.put_keys.data(), batch.put_values.data(), batch.puts, next_seq_);
      if (!sorted.ok()) return sorted.status();
      puts = std::move(*sorted);
    }
    if (batch.erases != 0) {
      auto sorted = backend_->SortErases(batch.erase_keys.data(), nullptr, batch.erases,
                                         next_seq_ + (puts != nullptr ? 1 : 0), *version_);
      if (!sorted.ok()) return sorted.status();
      tombstones = std::move(*sorted);
    }
    return Apply(std::move(puts), std::move(tombstones));
  };
  Status status = apply();
  backend_->EndWrite();
  return status;
}

Status Core::Apply(RunPtr puts, RunPtr tombstones) {
  if (puts != nullptr && puts->count == 0) puts = nullptr;
  if (tombstones != nullptr && tombstones->count == 0) tombstones = nullptr;
  if (puts == nullptr && tombstones == nullptr) return Status::OK();
  uint64_t count = 0, record_bytes = 0;
  for (const RunPtr* part : {&puts, &tombstones}) {
    if (*part == nullptr) continue;
    count += (*part)->count;
    record_bytes += log::ColumnarRecordBytes((*part)->count, shape_.key_size(), shape_.value_size,
                                             part == &tombstones);
  }
  // The logged entries decide (not the buffer's, which merges duplicates as
  // its runs happen to meet), so that both backends flush at the same batch
  // and write the same runs.
  const WritePlan plan = PlanWrite(pending_ != nullptr, pending_ != nullptr ? pending_->batches : 0,
                                   publish_batch_, log_halves_, log_entries_, log_.bytes(), count,
                                   record_bytes, buffer_entries_, log_.place().half_capacity);
  if (plan.publish_first) GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  if (plan.step == WriteStep::kCheckpoint) {
    // The half is full: its records go to the levels behind the batches,
    // the batch opens the other half.
    GPKV_RETURN_IF_ERROR(StartCheckpoint(next_seq_ - 1));
  }
  const uint64_t last_seq = next_seq_ + (puts != nullptr && tombstones != nullptr ? 1 : 0);
  if (plan.step == WriteStep::kFlush) {
    ++counters_.flushes;
    RunPtr batch = puts == nullptr ? std::move(tombstones) : std::move(puts);
    if (tombstones != nullptr) {
      // Disjoint keys: the merge keeps every entry, the run holds both.
      auto both = backend_->Merge({tombstones, batch}, /*drop_tombstones=*/false);
      if (!both.ok()) return both.status();
      batch = std::move(*both);
    }
    GPKV_RETURN_IF_ERROR(Flush(std::move(batch), last_seq));
  } else {
    ++counters_.log_appends;
    GPKV_RETURN_IF_ERROR(AppendToLog(puts, tombstones));
  }
  next_seq_ = last_seq + 1;
  ++counters_.batches;
  {
    PhaseTimer timer(&counters_.compact);
    GPKV_RETURN_IF_ERROR(MaybeCompact());
  }
  PhaseTimer timer(&counters_.sync);
  return pool_.Sync();
}

Status Core::AppendToLog(const RunPtr& puts, const RunPtr& tombstones) {
  // Each record first (past the published bytes: nothing reads it until the
  // log word moves); the next buffer is built while it is written (the GPU
  // copies the record beside the buffer's merges). A batch that cannot be
  // carried into the buffer publishes nothing. A mixed batch's second record
  // follows the first, and one store publishes both: a crash before it
  // leaves neither, after it both.
  BufferPtr buffer = version_->buffer;
  uint64_t written = 0, entries = 0, seq = next_seq_;
  for (const RunPtr* part : {&puts, &tombstones}) {
    if (*part == nullptr) continue;
    GPKV_RETURN_IF_ERROR(backend_->StartLogRecord(
        **part, part == &tombstones, log_.RecordOffset() + written, log_.epoch(), seq++));
    auto next_buffer = backend_->CarryIntoBuffer(buffer, *part);
    auto record_bytes = backend_->FinishLogRecord(next_buffer.ok());
    if (!record_bytes.ok()) return record_bytes.status();
    if (!next_buffer.ok()) return next_buffer.status();
    written += *record_bytes;
    entries += (*part)->count;
    buffer = std::move(*next_buffer);
  }
  log_.Publish(pool_, written);
  log_entries_ += entries;
  if (pending_ != nullptr) ++pending_->batches;

  auto next = std::make_shared<Version>(*version_);
  next->buffer = std::move(buffer);
  SetVersion(std::move(next));
  return Status::OK();
}

std::shared_ptr<Version> Core::LevelsOnly() const {
  auto version = std::make_shared<Version>(*version_);
  version->buffer = backend_->EmptyBuffer();
  return version;
}

Result<RunPtr> Core::CascadeMerge(std::vector<RunPtr> sources, uint64_t incoming, Manifest* next,
                                  Version* next_version, std::vector<uint64_t>* replaced,
                                  uint32_t* target, RunAge* age) {
  const CascadePlan plan = PlanCascade(manifest_, log2_batch_, incoming);
  if (plan.target >= kMaxLevels) {
    return Status::PoolFull(pool_.Where("table '" + table_name_ + "' root", root_offset_) +
                            ": the levels cannot grow past " + std::to_string(kMaxLevels));
  }
  for (uint32_t i = 0; i < plan.merged_count; ++i) {
    const uint32_t level = plan.merged[i];
    sources.push_back(version_->levels[level]);
    replaced->push_back(manifest_.levels[level].offset);
    next->levels[level] = {0, 0};
    next_version->levels[level] = nullptr;
  }
  *target = plan.target;
  *age = plan.older_levels ? RunAge::kNewer : RunAge::kOldest;
  return backend_->Merge(sources, /*drop_tombstones=*/!plan.older_levels);
}

Status Core::Flush(RunPtr batch, uint64_t last_seq) {
  std::vector<RunPtr> sources = {batch};
  for (RunPtr& run : version_->buffer->Runs()) sources.push_back(std::move(run));
  Manifest next = manifest_;
  std::shared_ptr<Version> next_version = LevelsOnly();
  std::vector<uint64_t> replaced;
  uint32_t target = 0;
  RunAge age = RunAge::kNewer;
  auto merged = CascadeMerge(std::move(sources), batch->count + log_entries_, &next,
                             next_version.get(), &replaced, &target, &age);
  if (!merged.ok()) return merged.status();
  if ((*merged)->count != 0) {
    auto offset = backend_->WriteRun(**merged, age);
    if (!offset.ok()) return offset.status();
    next.levels[target] = {*offset, (*merged)->count};
    next_version->levels[target] = std::move(*merged);
  }
  next.applied_seq = last_seq;
  PhaseTimer timer(&counters_.install);
  return Install(next, replaced, std::move(next_version));
}

Status Core::StartCheckpoint(uint64_t applied_seq) {
  Manifest next = CheckpointManifest(manifest_, applied_seq);
  auto pending = std::make_unique<Pending>();
  std::shared_ptr<Version> next_version = LevelsOnly();
  if (!version_->buffer->empty()) {
    uint32_t target = 0;
    RunAge age = RunAge::kNewer;
    auto merged = CascadeMerge(version_->buffer->Runs(), log_entries_, &next, next_version.get(),
                               &pending->replaced, &target, &age);
    if (!merged.ok()) return merged.status();
    if ((*merged)->count != 0) {
      // The run's write may go on behind the next batches; the manifest
      // that names it is published once it is done (PublishCheckpoint).
      auto offset = backend_->StartRunWrite(*merged, age);
      if (!offset.ok()) return offset.status();
      next.levels[target] = {*offset, (*merged)->count};
      next_version->levels[target] = std::move(*merged);
      pending->run_offset = *offset;
    }
  }
  ++counters_.checkpoints;
  SetLevelCount(&next);
  pending->next = next;
  pending_ = std::move(pending);
  EnterLogHalf(next);
  // Queries read the new run from here on; the pool's manifest names the
  // replaced runs until the publish, so they stay allocated until then.
  InstallLevels(std::move(next_version));
  return Status::OK();
}

void Core::EnterLogHalf(const Manifest& manifest) {
  log_.Enter(static_cast<uint32_t>(manifest.log_half), manifest.log_epoch);
  log_entries_ = 0;
}

void Core::InstallLevels(std::shared_ptr<Version> next_version) {
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    const RunPtr& run = next_version->levels[level];
    level_tombstones_[level] = run == nullptr ? 0 : run->tombstones;
  }
  SetVersion(std::move(next_version));
}

void Core::SetVersion(std::shared_ptr<const Version> next_version) {
  std::shared_ptr<const Version> previous = std::move(version_);
  version_ = std::move(next_version);
  backend_->Install(version_);
  // The previous version goes last, outside the backend's locks (freeing a
  // device run waits for the device).
  previous.reset();
}

Status Core::PublishCheckpoint() {
  std::unique_ptr<Pending> pending = std::move(pending_);
  if (pending->run_offset != 0) {
    const Status written = backend_->FinishRunWrite();
    if (!written.ok()) {
      pool_.allocator().Free(pending->run_offset).IgnoreError();
      static_cast<void>(
          broken_ = Status(written.code(), written.message() +
                                               " (the table refuses writes until it is reopened; "
                                               "every acknowledged batch is in its log)"));
      return broken_;
    }
  }
  PhaseTimer timer(&counters_.install);
  PublishManifest(pool_, root_offset_, &pending->next);
  manifest_ = pending->next;
  // No query reads the replaced runs: the version installed at the
  // checkpoint's start no longer names them.
  return FreeRuns(pool_, pending->replaced);
}

Status Core::Compact() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  GPKV_RETURN_IF_ERROR(backend_->BindThread());
  GPKV_RETURN_IF_ERROR(CompactLocked());
  return pool_.Sync();
}

Status Core::CompactLocked() {
  if (pending_ != nullptr) GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  std::vector<RunPtr> sources = version_->buffer->Runs();
  std::vector<uint64_t> replaced;
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    if (version_->levels[level] == nullptr) continue;
    sources.push_back(version_->levels[level]);
    replaced.push_back(manifest_.levels[level].offset);
  }
  if (sources.empty()) return Status::OK();
  auto merged = backend_->Merge(sources, /*drop_tombstones=*/true);
  if (!merged.ok()) return merged.status();
  Manifest next = manifest_;
  for (RunRef& ref : next.levels) ref = {0, 0};
  auto next_version = std::make_shared<Version>();
  next_version->buffer = backend_->EmptyBuffer();
  if ((*merged)->count != 0) {
    uint32_t target = 0;
    while (LevelCapacity(log2_batch_, target) < (*merged)->count) ++target;
    // Every level merged: the run is the only one.
    auto offset = backend_->WriteRun(**merged, RunAge::kOldest);
    if (!offset.ok()) return offset.status();
    next.levels[target] = {*offset, (*merged)->count};
    next_version->levels[target] = std::move(*merged);
  }
  next.applied_seq = next_seq_ - 1;
  next.compactions += 1;
  return Install(next, replaced, std::move(next_version));
}

Status Core::MaybeCompact() {
  if (!NeedsCompaction(Levels(), level_tombstones_, max_dead_percent_)) return Status::OK();
  return CompactLocked();
}

Status Core::Install(Manifest next, const std::vector<uint64_t>& replaced,
                     std::shared_ptr<Version> next_version) {
  EmptyLogHalf(manifest_, &next);
  PublishManifest(pool_, root_offset_, &next);
  // The log half is empty in the new epoch; a crash before this store
  // leaves the word one epoch behind, which readers take as an empty half.
  log::PublishWord(pool_, log_.place().word_offsets[next.log_half], next.log_epoch, 0);
  manifest_ = next;
  EnterLogHalf(next);
  InstallLevels(std::move(next_version));
  // No query reads the replaced runs any more (Backend::Install).
  return FreeRuns(pool_, replaced);
}

Result<LsmStats> Core::Stats() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(backend_->BindThread());
  LsmStats stats;
  auto live = backend_->CountLive(*version_);
  if (!live.ok()) return live.status();
  stats.keys = *live;
  stats.buffer_entries = version_->buffer->entries();
  stats.batch_entries = uint64_t{1} << log2_batch_;
  stats.log_batches = buffer_entries_ >> log2_batch_;
  AddManifestStats(Levels(), level_tombstones_, log2_batch_, shape_, &stats);
  stats.dead_entries = stats.entries + stats.buffer_entries - stats.keys;
  stats.log_bytes = log_.bytes();
  stats.log_capacity = log_capacity_;
  stats.log_halves = log_halves_;
  stats.checkpoint_pending = pending_ != nullptr;
  backend_->AddWriteProfile(counters_, &stats);
  return stats;
}

}  // namespace gpkv::lsm
