// Batch drivers of cpu::CpuBackend: locking, epochs, partitioning among workers,
// the exclusive round for puts that found no room, and reclamation.
#include <omp.h>

#include <algorithm>
#include <thread>

#include "pm/atomic_word.h"
#include "tables/gphash/cpu/backend_impl.h"

namespace gpkv::gphash::cpu {
namespace {

// Batches smaller than this per worker run on fewer workers.
constexpr size_t kMinOpsPerWorker = 256;
// Free value cells a batch scratch keeps for its next batches.
constexpr size_t kMaxCachedCells = 256;

uint16_t PartitionOf(const format::KeyHash& hash, uint32_t partitions) {
  return static_cast<uint16_t>(((hash.primary >> 32) * partitions) >> 32);
}

bool Pending(const BatchScratch& batch) {
  for (const WorkerScratch& worker : batch.workers) {
    if (!worker.deferred.empty() || worker.cursor < worker.ops.size()) return true;
  }
  return false;
}

}  // namespace

void CpuBackend::Impl::LockShared() const {
  while (writers_waiting_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  mutex_.lock_shared();
}

void CpuBackend::Impl::LockExclusive() const {
  writers_waiting_.fetch_add(1, std::memory_order_acq_rel);
  mutex_.lock();
  writers_waiting_.fetch_sub(1, std::memory_order_acq_rel);
}

uint32_t CpuBackend::Impl::PartitionsFor(size_t count) const {
  size_t by_size = std::max<size_t>(1, count / kMinOpsPerWorker);
  return static_cast<uint32_t>(std::min<size_t>(static_cast<size_t>(threads_), by_size));
}

BatchScratch* CpuBackend::Impl::AcquireScratch(size_t count, uint32_t partitions) {
  std::unique_ptr<BatchScratch> scratch;
  {
    std::lock_guard<std::mutex> lock(scratch_mutex_);
    if (!scratch_free_.empty()) {
      scratch = std::move(scratch_free_.back());
      scratch_free_.pop_back();
    }
  }
  if (!scratch) scratch = std::make_unique<BatchScratch>();
  scratch->hashes.resize(count);
  scratch->owner.resize(count);
  if (scratch->workers.size() < partitions) scratch->workers.resize(partitions);
  for (WorkerScratch& worker : scratch->workers) {
    worker.ops.clear();
    worker.cursor = 0;
    worker.deferred.clear();
    worker.retired.clear();
    worker.key_delta = 0;
    worker.status = Status::OK();
  }
  scratch->abort.store(false, std::memory_order_relaxed);
  return scratch.release();
}

void CpuBackend::Impl::ReleaseScratch(BatchScratch* scratch) {
  std::lock_guard<std::mutex> lock(scratch_mutex_);
  scratch_free_.emplace_back(scratch);
}

template <typename Worker>
void CpuBackend::Impl::RunPartitioned(BatchScratch& batch, const BatchInput& input,
                                      uint32_t partitions, const Worker& worker, bool first_round) {
  const size_t count = input.count;
  if (partitions == 1) {
    WorkerScratch& only = batch.workers[0];
    if (first_round) {
      for (size_t i = 0; i < count; ++i) batch.hashes[i] = Hash(input.keys + i * geo_.key_size);
      only.ops.resize(count);
      for (size_t i = 0; i < count; ++i) only.ops[i] = static_cast<uint32_t>(i);
    }
    worker(only);
    return;
  }
  if (!first_round) {
#pragma omp parallel for num_threads(static_cast <int>(partitions)) schedule(static, 1)
    for (uint32_t p = 0; p < partitions; ++p) {
      if (batch.workers[p].cursor < batch.workers[p].ops.size()) worker(batch.workers[p]);
    }
    return;
  }
#pragma omp parallel num_threads(static_cast <int>(partitions))
  {
#pragma omp for schedule(static)
    for (size_t i = 0; i < count; ++i) {
      batch.hashes[i] = Hash(input.keys + i * geo_.key_size);
      batch.owner[i] = PartitionOf(batch.hashes[i], partitions);
    }
#pragma omp for schedule(static, 1)
    for (uint32_t p = 0; p < partitions; ++p) {
      WorkerScratch& mine = batch.workers[p];
      for (size_t i = 0; i < count; ++i) {
        if (batch.owner[i] == p) mine.ops.push_back(static_cast<uint32_t>(i));
      }
      worker(mine);
    }
  }
}

Status CpuBackend::Impl::Put(const uint8_t* keys, const uint8_t* values, size_t count) {
  BatchInput input;
  input.keys = keys;
  input.values = values;
  input.count = count;
  return RunWriteBatch(input, kernels_->put_worker);
}

Status CpuBackend::Impl::Erase(const uint8_t* keys, uint8_t* erased, size_t count) {
  BatchInput input;
  input.keys = keys;
  input.flags_out = erased;
  input.count = count;
  return RunWriteBatch(input, kernels_->erase_worker);
}

Status CpuBackend::Impl::RunWriteBatch(const BatchInput& input, WorkerFn worker_fn) {
  if (pool_.read_only()) {
    return Status::InvalidArgument(pool_.path() + ": table '" + table_name_ +
                                   "': the pool is open read-only");
  }
  const size_t count = input.count;
  if (count == 0) return Status::OK();
  const uint32_t partitions = PartitionsFor(count);
  BatchScratch* batch = AcquireScratch(count, partitions);
  auto run = [&](WorkerScratch& worker) { worker_fn(*this, input, *batch, worker); };

  Status status;
  LockShared();
  int ticket = epochs_.Enter();
  RunPartitioned(*batch, input, partitions, run, /*first_round=*/true);
  while (!batch->abort.load() && Pending(*batch)) {
    // Some puts found no free candidate slot: place them alone, then resume.
    // What this batch retired so far goes to the limbo first: placement may
    // resize, which drains the limbo and then frees the bottom level, and a
    // tombstone still held here would later be "reclaimed" by a store into
    // that freed (and perhaps reused) extent.
    epochs_.Leave(ticket);
    RetireToLimbo(*batch);
    UnlockShared();
    LockExclusive();
    status = PlaceDeferred(*batch, input);
    UnlockExclusive();
    LockShared();
    ticket = epochs_.Enter();
    if (!status.ok()) break;
    RunPartitioned(*batch, input, partitions, run, /*first_round=*/false);
  }
  epochs_.Leave(ticket);
  for (const WorkerScratch& worker : batch->workers) {
    if (status.ok() && !worker.status.ok()) status = worker.status;
  }
  FinishBatch(*batch);
  Status synced = pool_.Sync();
  UnlockShared();
  ReleaseScratch(batch);
  return status.ok() ? synced : status;
}

Status CpuBackend::Impl::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count) {
  if (count == 0) return Status::OK();
  BatchInput input;
  input.keys = keys;
  input.values_out = values;
  input.flags_out = found;
  input.count = count;
  const uint32_t partitions = PartitionsFor(count);
  BatchScratch* batch = AcquireScratch(count, 1);
  {
    LockShared();
    int ticket = epochs_.Enter();
    if (partitions == 1) {
      kernels_->get_range(*this, input, *batch, 0, count);
    } else {
#pragma omp parallel for num_threads(static_cast <int>(partitions)) schedule(static, 1)
      for (uint32_t p = 0; p < partitions; ++p) {
        size_t begin = count * p / partitions;
        size_t end = count * (p + 1) / partitions;
        kernels_->get_range(*this, input, *batch, begin, end);
      }
    }
    epochs_.Leave(ticket);
    UnlockShared();
  }
  ReleaseScratch(batch);
  return Status::OK();
}

void CpuBackend::Impl::FinishBatch(BatchScratch& batch) {
  int64_t delta = 0;
  size_t retired = 0;
  for (WorkerScratch& worker : batch.workers) {
    delta += worker.key_delta;
    worker.key_delta = 0;
    retired += worker.retired.size();
  }
  keys_.fetch_add(delta, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(limbo_mutex_);
  if (retired != 0) RetireToLimboLocked(batch);
  if (limbo_.empty()) return;
  const uint64_t safe = epochs_.SafeBound();
  std::vector<uint64_t>& cells = batch.workers[0].cells;  // the batch's own cache
  while (!limbo_.empty() && limbo_.front().tag < safe) {
    Reclaim(limbo_.front().item, &cells);
    limbo_.pop_front();
  }
  if (cells.size() > kMaxCachedCells) {  // the rest to the shared heap, in one go
    heap_.Give(cells.data() + kMaxCachedCells, cells.size() - kMaxCachedCells);
    cells.resize(kMaxCachedCells);
  }
}

void CpuBackend::Impl::RetireToLimbo(BatchScratch& batch) {
  std::lock_guard<std::mutex> lock(limbo_mutex_);
  RetireToLimboLocked(batch);
}

void CpuBackend::Impl::RetireToLimboLocked(BatchScratch& batch) {
  const uint64_t tag = epochs_.Current();
  bool any = false;
  for (WorkerScratch& worker : batch.workers) {
    for (const RetiredItem& item : worker.retired) limbo_.push_back({tag, item});
    any |= !worker.retired.empty();
    worker.retired.clear();
  }
  if (any) epochs_.Advance();
}

void CpuBackend::Impl::Reclaim(const RetiredItem& item, std::vector<uint64_t>* cells) {
  if (item.word == 0) {
    cells->push_back(item.offset);
    return;
  }
  // The tombstone stays until now; only its owner (us) changes it. A slot
  // outside every current level would mean a level was freed under a retired
  // tombstone: storing there could destroy whatever reuses the extent, so it
  // is counted (tests check the count) and left alone.
  if (!InCurrentLevel(item.offset)) {
    stray_reclaims_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  pool_.Publish(pool_.At<uint64_t>(item.offset), gphash::EmptyWord(item.word));
}

bool CpuBackend::Impl::InCurrentLevel(uint64_t offset) const {
  for (uint32_t level = 0; level < level_count_; ++level) {
    const LevelRef& ref = levels_[level];
    if (offset >= ref.offset && offset - ref.offset < ref.bucket_count * geo_.bucket_bytes)
      return true;
  }
  return false;
}

void CpuBackend::Impl::DrainLimbo() {
  std::vector<uint64_t> cells;
  std::lock_guard<std::mutex> lock(limbo_mutex_);
  for (const Limbo& entry : limbo_) Reclaim(entry.item, &cells);
  limbo_.clear();
  if (!cells.empty()) heap_.Give(cells.data(), cells.size());
}

uint32_t CpuBackend::Impl::FindCopies(const uint8_t* key, const format::KeyHash& hash,
                                      SlotCopy* out, uint32_t max) const {
  const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
  uint32_t found = 0;
  for (uint32_t level = 0; level < level_count_; ++level) {
    const gphash::LevelCandidates buckets =
        gphash::CandidateBucketsOfLevel(hash, geo_.hash_locations, levels_[level].bucket_count,
                                        gphash::CandidateOrder::kFirstLocation);
    for (uint32_t i = 0; i < buckets.count; ++i) {
      const uint64_t index = buckets.buckets[i];
      uint8_t* bucket = Bucket(level, index);
      for (uint32_t slot = 0; slot < geo_.slots_per_bucket; ++slot) {
        uint64_t word = pm::LoadAcquire(SlotWord(bucket, slot));
        if (!gphash::SlotMatches(word, fingerprint)) continue;
        if (std::memcmp(SlotKey(bucket, slot), key, geo_.key_size) != 0) continue;
        SlotCopy copy{level, index, bucket, slot, word};
        if (found < max) {
          out[found] = copy;
          // Keep the winner first.
          if (found > 0 && gphash::SlotOutranks(level, index, slot, out[0].level,
                                                out[0].bucket_index, out[0].slot)) {
            std::swap(out[0], out[found]);
          }
        }
        ++found;
      }
    }
  }
  return std::min(found, max);
}

}  // namespace gpkv::gphash::cpu
