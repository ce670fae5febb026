// Internals of cpu::CpuBackend shared by the files of tables/gphash/cpu/. Not for use outside cpu/.
//
// Concurrency model:
//  - mutex_ (shared_mutex): batches hold it shared; resizes (and the
//    placement of operations that found no free slot) hold it exclusively.
//    The level array below changes only under the exclusive lock.
//  - Within a batch, operations are partitioned among workers by a hash of the
//    key, and each worker walks the batch in order: all operations on one key
//    run on one worker, in batch order (last occurrence wins).
//  - Slot words change by CAS (EMPTY -> INSERT, VALID -> INSERT tombstone) and
//    by release stores of the owner (INSERT -> VALID, tombstone -> EMPTY once
//    the epoch allows, util/epoch.h). Readers validate with a double collect of
//    the candidate slot words (a seqlock over the slot-word versions).
//  - When a key is VALID in several slots (racing inserts from concurrent
//    batches), every operation acts on the winner (gphash::SlotOutranks);
//    updates also erase the losers, erases erase losers first, then the winner.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "format/hash.h"
#include "tables/gphash/core.h"
#include "tables/gphash/cpu/backend.h"
#include "tables/gphash/layout.h"
#include "tables/gphash/reader.h"
#include "tables/gphash/value_heap.h"
#include "util/epoch.h"

namespace gpkv::gphash::cpu {

// One level of the current LevelSet, as the hot path uses it.
struct LevelRef {
  uint8_t* base = nullptr;
  uint64_t offset = 0;
  uint64_t bucket_count = 0;
  uint64_t level_id = 0;
};

enum class OpResult : uint8_t { kDone, kNoSpace, kError };

// A slot or cell unlinked by a batch, reusable once the epoch allows.
struct RetiredItem {
  uint64_t offset;  // pool offset of a slot word, or of a value cell
  uint64_t word;    // the slot's tombstone word; 0 for a value cell
};

// A worker's share of one batch, reused across batches (no allocation per op).
// Cache-line aligned: workers update their own counters per operation, and
// neighbours on one line would bounce it between cores.
struct alignas(64) WorkerScratch {
  std::vector<uint32_t> ops;       // batch indexes of this worker's operations, in order
  size_t cursor = 0;               // next entry of ops to run
  std::vector<uint32_t> deferred;  // puts that found no free slot, in order
  std::vector<RetiredItem> retired;
  std::vector<uint64_t> cells;  // free value cells taken from the heap
  int64_t key_delta = 0;
  Status status;
};

struct BatchScratch {
  std::vector<format::KeyHash> hashes;
  std::vector<uint16_t> owner;
  std::vector<WorkerScratch> workers;
  std::atomic<bool> abort{false};
};

// The caller's spans of one batch.
struct BatchInput {
  const uint8_t* keys = nullptr;
  const uint8_t* values = nullptr;  // Put
  uint8_t* values_out = nullptr;    // Get
  uint8_t* flags_out = nullptr;     // Get: found, Erase: erased (may be null)
  size_t count = 0;
};

// A worker's share of a write batch (Kernels::put_worker, erase_worker).
using WorkerFn = void (*)(CpuBackend::Impl&, const BatchInput&, BatchScratch&, WorkerScratch&);

// The hot-path routines, instantiated per (slots per bucket, key size).
struct Kernels {
  WorkerFn put_worker;
  WorkerFn erase_worker;
  void (*get_range)(CpuBackend::Impl&, const BatchInput&, BatchScratch&, size_t begin, size_t end);
  OpResult (*put_one)(CpuBackend::Impl&, WorkerScratch&, const uint8_t* key, const uint8_t* value,
                      const format::KeyHash& hash);
};
// nullptr for a geometry the kernels are not built for.
const Kernels* SelectKernels(uint32_t slots_per_bucket, uint32_t key_size);

// A VALID copy of a key (slow path: resize, kicks, scan).
struct SlotCopy {
  uint32_t level;
  uint64_t bucket_index;
  uint8_t* bucket;
  uint32_t slot;
  uint64_t word;
};

class CpuBackend::Impl final : public gphash::GrowthBackend {
 public:
  Impl(pm::Pool& pool, const gphash::GphashView& view, int threads);
  ~Impl() override;

  Status Put(const uint8_t* keys, const uint8_t* values, size_t count);
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count);
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count);
  Status Scan(const Table::ScanVisitor& visit);
  gphash::Stats Stats() const;

  // ---- layout (runtime geometry; the kernels use compile-time copies) ----
  uint8_t* Bucket(uint32_t level, uint64_t index) const {
    return levels_[level].base + index * geo_.bucket_bytes;
  }
  uint64_t* SlotWord(uint8_t* bucket, uint32_t slot) const {
    return reinterpret_cast<uint64_t*>(bucket) + slot;
  }
  uint8_t* SlotKey(uint8_t* bucket, uint32_t slot) const {
    return bucket + gphash::KeyOffset(geo_.slots_per_bucket, geo_.key_size, slot);
  }
  uint64_t* SlotValue(uint8_t* bucket, uint32_t slot) const {
    return reinterpret_cast<uint64_t*>(
        bucket + gphash::ValueWordOffset(geo_.slots_per_bucket, geo_.key_size, slot));
  }
  format::KeyHash Hash(const uint8_t* key) const {
    return format::HashKey(key, geo_.key_size, geo_.hash_seed);
  }

  // Every VALID copy of `key`, the winner first. Returns how many were found
  // (at most `max` are stored). REQUIRES: shared or exclusive lock.
  uint32_t FindCopies(const uint8_t* key, const format::KeyHash& hash, SlotCopy* out,
                      uint32_t max) const;

  // ---- resize and placement (resize.cc); REQUIRES: exclusive ----
  // Reclaims every retired slot and cell (no batch is active).
  void DrainLimbo();
  // Places the deferred puts of a batch: retry, relocate one resident key
  // (kick), or resize, until each fits.
  Status PlaceDeferred(BatchScratch& batch, const BatchInput& input);
  // Adds a top level of twice the buckets and rehashes the bottom level
  // (gphash::Core::Grow, over the primitives below).
  Status Resize();
  // Makes room among the candidates of `hash` by moving one resident key to
  // another of its candidate buckets. False if no resident key can move.
  bool TryKick(const format::KeyHash& hash);

  // ---- shared state ----
  pm::Pool& pool_;
  uint8_t* const base_;
  gphash::GphashRoot* const root_;
  const std::string table_name_;
  const uint64_t root_offset_;
  const uint64_t table_id_;
  const gphash::Geometry geo_;  // sizes, bucket shape, value cells, hash seed
  const uint32_t cell_words_;
  const int threads_;
  const Kernels* const kernels_;

  // Current LevelSet: changes only under the exclusive lock.
  gphash::LevelSet levelset_{};
  LevelRef levels_[gphash::kMaxLevels];
  uint32_t level_count_ = 0;

  // The table lock, with writers first: glibc's rwlock (under std::shared_mutex)
  // lets new readers in while a writer waits, so a stream of overlapping
  // batches could starve a resize. Batches wait while a writer is queued.
  void LockShared() const;
  void UnlockShared() const { mutex_.unlock_shared(); }
  void LockExclusive() const;
  void UnlockExclusive() const { mutex_.unlock(); }
  mutable std::shared_mutex mutex_;
  mutable std::atomic<int> writers_waiting_{0};
  util::EpochManager epochs_;
  ValueHeap heap_;

  std::atomic<int64_t> keys_{0};
  std::atomic<bool> resizing_{false};
  std::atomic<uint64_t> stat_slots_{0};
  std::atomic<uint64_t> stat_top_buckets_{0};
  std::atomic<uint64_t> stat_index_bytes_{0};
  std::atomic<uint32_t> stat_levels_{0};

  // ---- gphash::GrowthBackend (resize.cc); REQUIRES: exclusive, or open ----
  // Nothing to get ready: the CPU runs on the pool's levels.
  Status PrepareTopLevel(uint64_t offset, uint64_t buckets) override;
  // Installs `set` as the volatile level array (after it was published).
  void ApplyLevelSet(const gphash::LevelSet& set, uint64_t active_word) override;
  // Moves the bottom level's keys up, erasing copies that lose to another;
  // returns how many keys stayed.
  Result<uint64_t> MoveBottomLevel() override;
  // Nothing to let go of: the core frees the level's extent.
  void DropBottomLevel() override {}

  // The growth protocol and open-time recovery's decisions, over the
  // primitives above.
  gphash::Core core_;

  // A put or erase batch: every worker runs `worker_fn` on its share under
  // the shared lock; operations that found no free slot (puts) are placed
  // under the exclusive lock between rounds. Durable on return.
  Status RunWriteBatch(const BatchInput& input, WorkerFn worker_fn);
  BatchScratch* AcquireScratch(size_t count, uint32_t partitions);
  void ReleaseScratch(BatchScratch* scratch);
  uint32_t PartitionsFor(size_t count) const;
  // First round of a Put / Erase batch: hash, partition, run every worker.
  template <typename Worker>
  void RunPartitioned(BatchScratch& batch, const BatchInput& input, uint32_t partitions,
                      const Worker& worker, bool first_round);
  // After the workers: key count, retired items into limbo, reclamation.
  // REQUIRES: shared lock held, the batch's epoch left.
  void FinishBatch(BatchScratch& batch);
  // Moves the workers' retired slots and cells into the limbo, tagged with
  // the current epoch. Every retired item must be in the limbo before its
  // batch lets go of the shared lock: the exclusive side drains the limbo and
  // may then free a level, and nothing outside the limbo would be drained.
  void RetireToLimbo(BatchScratch& batch);
  void RetireToLimboLocked(BatchScratch& batch);  // REQUIRES: limbo_mutex_ held
  // A slot becomes EMPTY; a cell goes to `cells` (a free-cell cache).
  void Reclaim(const RetiredItem& item, std::vector<uint64_t>* cells);
  // True if pool offset `offset` lies in a level of the current LevelSet.
  bool InCurrentLevel(uint64_t offset) const;
  // Retired slots found outside every current level (a bug if ever > 0).
  std::atomic<uint64_t> stray_reclaims_{0};
  // Moves one bottom-level key to an upper level; false if none has room.
  bool MoveUp(uint8_t* bucket, uint64_t index, uint32_t slot, const format::KeyHash& hash);
  bool MoveSlot(uint8_t* from_bucket, uint32_t from_slot, uint8_t* to_bucket, uint32_t to_slot,
                uint64_t to_expected);

  struct Limbo {
    uint64_t tag;
    RetiredItem item;
  };
  std::mutex limbo_mutex_;
  std::deque<Limbo> limbo_;  // tags nondecreasing (taken under limbo_mutex_)

  std::mutex scratch_mutex_;
  std::vector<std::unique_ptr<BatchScratch>> scratch_free_;
};

}  // namespace gpkv::gphash::cpu
