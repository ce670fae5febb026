#include "tables/lsm/cpu/backend.h"

#include <algorithm>
#include <cstring>

#include "tables/log/cpu/record_writer.h"
#include "tables/log/record.h"
#include "tables/lsm/cpu/merge.h"
#include "tables/lsm/reader.h"

namespace gpkv::lsm::cpu {
namespace {

// A batch of at least this many operations looks up its keys on threads.
constexpr size_t kParallelOps = 2048;

const CpuRun& AsCpu(const Run& run) { return static_cast<const CpuRun&>(run); }

}  // namespace

// ------------------------------------------------------------------ runs

CpuRun::CpuRun(std::shared_ptr<const RunData> data) : data_(std::move(data)) {
  view_ = data_->View();
  count = data_->count();
}

CpuRun::CpuRun(const pm::Pool& pool, uint64_t offset, uint64_t entries, const EntryShape& shape) {
  count = entries;
  MoveToPool(pool, offset, shape);
}

void CpuRun::MoveToPool(const pm::Pool& pool, uint64_t offset, const EntryShape& shape) {
  view_ = PoolRunView(pool, offset, count, shape);
  fences_ = FenceKeys(view_, shape.key_words);
  view_.fences = fences_.data();
  view_.fence_count = fences_.size() / shape.key_words;
  tombstones = pool.At<RunHeader>(offset)->tombstones;
  data_.reset();
}

std::vector<RunPtr> CpuBuffer::Runs() const {
  std::vector<RunPtr> runs;
  runs.reserve(buffer_.runs().size());
  for (const auto& run : buffer_.runs()) runs.push_back(std::make_shared<CpuRun>(run));
  return runs;
}

// ------------------------------------------------------------------ open

CpuBackend::CpuBackend(pm::Pool& pool, int threads) : pool_(pool), threads_(std::max(1, threads)) {}

Status CpuBackend::Attach(const LsmView& view) {
  table_id_ = view.table_id;
  shape_ = view.shape();
  return Status::OK();
}

Result<RunPtr> CpuBackend::ReadRun(const LsmView& view, uint32_t level) {
  // A run is read in place by every query, so its bytes are checked once
  // here, its checksum summed on all threads (the largest run holds about
  // half the entries).
  auto run = lsm::ReadRun(pool_, view, level, RunCheck::kChecksum, nullptr, threads_);
  if (!run.ok()) return run.status();
  const RunRef& ref = view.manifest.levels[level];
  return RunPtr(std::make_shared<CpuRun>(pool_, ref.offset, ref.entries, shape_));
}

Status CpuBackend::ReplayLog(const LsmView& view, bool split, ReplayedRecords* out) {
  ReplayedLog log;
  GPKV_RETURN_IF_ERROR(cpu::ReplayLog(pool_, view, threads_, split, &log));
  for (int segment = 0; segment < 2; ++segment) {
    out->buffers[segment] = std::make_shared<CpuBuffer>(std::move(log.buffers[segment]));
    out->entries[segment] = log.entries[segment];
    out->last_seq[segment] = log.last_seq[segment];
  }
  out->records = log.records;
  return Status::OK();
}

BufferPtr CpuBackend::EmptyBuffer() { return std::make_shared<CpuBuffer>(WriteBuffer()); }

// ------------------------------------------------------------------ writes

Result<RunPtr> CpuBackend::SortPuts(const uint8_t* keys, const uint8_t* values, size_t n,
                                    uint64_t seq) {
  auto sorted = std::make_shared<const RunData>(
      SortBatch(keys, values, n, MakeMeta(seq, false), shape_, threads_, nullptr));
  return RunPtr(std::make_shared<CpuRun>(std::move(sorted)));
}

Result<RunPtr> CpuBackend::SortErases(const uint8_t* keys, uint8_t* erased, size_t n, uint64_t seq,
                                      const Version& current) {
  std::vector<uint8_t> first;
  RunData sorted = SortBatch(keys, nullptr, n, MakeMeta(seq, true), shape_, threads_, &first);
  const Sources sources = SourcesOf(current);
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
  auto tombstones = std::make_shared<RunData>(shape_);
  tombstones->Reserve(view.count);
  for (uint64_t i = 0; i < view.count; ++i) {
    if (live[i]) tombstones->Append(view, i);
  }
  return RunPtr(std::make_shared<CpuRun>(std::move(tombstones)));
}

Result<BufferPtr> CpuBackend::CarryIntoBuffer(const BufferPtr& buffer, const RunPtr& batch) {
  const WriteBuffer& from = static_cast<const CpuBuffer&>(*buffer).buffer();
  return BufferPtr(std::make_shared<CpuBuffer>(from.With(AsCpu(*batch).data(), shape_, threads_)));
}

Status CpuBackend::StartLogRecord(const Run& batch, bool tombstones, uint64_t record_offset,
                                  uint64_t epoch, uint64_t seq) {
  const RunView view = AsCpu(batch).view();
  record_offset_ = record_offset;
  record_header_ = log::cpu::WriteRecordArrays(
      pool_, record_offset, epoch, seq, {view.keys, tombstones ? nullptr : view.values, view.count},
      shape_.key_size(), shape_.value_size, threads_);
  return Status::OK();
}

Result<uint64_t> CpuBackend::FinishLogRecord(bool complete) {
  if (!complete) return uint64_t{0};
  return log::FinishRecord(pool_, record_offset_, record_header_, shape_.key_size(),
                           shape_.value_size);
}

Result<RunPtr> CpuBackend::Merge(const std::vector<RunPtr>& newest_first, bool drop_tombstones) {
  std::vector<RunView> sources;
  sources.reserve(newest_first.size());
  for (const RunPtr& run : newest_first) sources.push_back(AsCpu(*run).view());
  auto merged =
      std::make_shared<const RunData>(MergeRuns(sources, shape_, drop_tombstones, threads_));
  return RunPtr(std::make_shared<CpuRun>(std::move(merged)));
}

Result<uint64_t> CpuBackend::WriteRun(Run& run, RunAge age) {
  auto& cpu_run = static_cast<CpuRun&>(run);
  auto offset =
      lsm::WriteRun(pool_, table_id_, shape_, cpu_run.view(), threads_,
                    age == RunAge::kOldest ? RunFilterSource::kAllSet : RunFilterSource::kFromKeys);
  if (!offset.ok()) return offset.status();
  // Queries read it in the pool from here on.
  cpu_run.MoveToPool(pool_, *offset, shape_);
  return offset;
}

void CpuBackend::Install(std::shared_ptr<const Version> version) {
  std::unique_lock<std::shared_mutex> lock(version_mutex_);
  version_.swap(version);
}

Sources CpuBackend::SourcesOf(const Version& version) const {
  Sources sources;
  const WriteBuffer& buffer = static_cast<const CpuBuffer&>(*version.buffer).buffer();
  for (size_t i = 0; i < buffer.runs().size(); ++i) {
    sources.runs[sources.count++] = buffer.View(i);
  }
  for (const RunPtr& run : version.levels) {
    if (run != nullptr) sources.runs[sources.count++] = AsCpu(*run).view();
  }
  return sources;
}

}  // namespace gpkv::lsm::cpu
