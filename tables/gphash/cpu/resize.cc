// Growth of cpu::CpuBackend, all under the table's exclusive lock (or at open,
// before the table is shared):
//  - PlaceDeferred: puts that found no free candidate slot are retried alone;
//    if still no slot is free, gphash::Core::PlaceFailedPuts decides: one
//    resident key of a candidate bucket moves to another of its own candidate
//    buckets (a kick, TryKick); only if no resident key can move does the
//    table resize.
//  - Resize: gphash::Core::Grow runs the protocol (layout.h) over this
//    backend's primitives (gphash::GrowthBackend): ApplyLevelSet installs each
//    published LevelSet, MoveBottomLevel moves every key of the bottom level up
//    (insert-then-erase, each step persisted). A crash anywhere leaves a
//    LevelSet that Open finishes: a key copied but not yet erased is a
//    duplicate whose upper copy wins (and both hold the same key and value
//    word).
// Moves never run concurrently with batches, so they erase a source slot
// directly (no tombstone) and the moved value cell stays with the key.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "pm/atomic_word.h"
#include "tables/gphash/cpu/backend_impl.h"

namespace gpkv::gphash::cpu {

Status CpuBackend::Impl::PrepareTopLevel(uint64_t /*offset*/, uint64_t /*buckets*/) {
  return Status::OK();
}

void CpuBackend::Impl::ApplyLevelSet(const gphash::LevelSet& set, uint64_t /*active_word*/) {
  levelset_ = set;
  level_count_ = set.level_count;
  uint64_t slots = 0;
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < gphash::kMaxLevels; ++i) {
    if (i < set.level_count) {
      const gphash::LevelDesc& desc = set.levels[i];
      levels_[i] = {base_ + desc.offset, desc.offset, desc.bucket_count, desc.level_id};
      slots += desc.bucket_count * geo_.slots_per_bucket;
      bytes += desc.bucket_count * geo_.bucket_bytes;
    } else {
      levels_[i] = {};
    }
  }
  stat_slots_.store(slots);
  stat_index_bytes_.store(bytes);
  stat_top_buckets_.store(set.levels[0].bucket_count);
  stat_levels_.store(set.level_count);
  resizing_.store((set.flags & gphash::kLevelSetResizing) != 0);
}

Status CpuBackend::Impl::PlaceDeferred(BatchScratch& batch, const BatchInput& input) {
  // One deferred put, as gphash::Core::PlaceFailedPuts places it: alone, so
  // that the kicks and resizes its placement needs come in the order of the
  // batch.
  class DeferredPut final : public gphash::PlacementSteps {
   public:
    DeferredPut(Impl& table, WorkerScratch& worker, const uint8_t* key, const uint8_t* value,
                const format::KeyHash& hash)
        : table_(table), worker_(worker), key_(key), value_(value), hash_(hash) {}
    Result<bool> Kick() override { return table_.TryKick(hash_); }
    Status Resize() override { return table_.Resize(); }
    Result<uint64_t> Retry() override {
      const OpResult result = table_.kernels_->put_one(table_, worker_, key_, value_, hash_);
      if (result == OpResult::kError) return worker_.status;
      return uint64_t{result == OpResult::kDone ? 0u : 1u};
    }

   private:
    Impl& table_;
    WorkerScratch& worker_;
    const uint8_t* key_;
    const uint8_t* value_;
    const format::KeyHash& hash_;
  };

  DrainLimbo();  // no batch is active: every tombstone can be an empty slot again
  for (WorkerScratch& worker : batch.workers) {
    for (uint32_t op : worker.deferred) {
      DeferredPut put(*this, worker, input.keys + size_t{op} * geo_.key_size,
                      input.values + size_t{op} * geo_.value_size, batch.hashes[op]);
      auto failed = put.Retry();
      if (!failed.ok()) return failed.status();
      GPKV_RETURN_IF_ERROR(core_.PlaceFailedPuts(*failed, put));
    }
    worker.deferred.clear();
  }
  return Status::OK();
}

bool CpuBackend::Impl::MoveSlot(uint8_t* from_bucket, uint32_t from_slot, uint8_t* to_bucket,
                                uint32_t to_slot, uint64_t to_expected) {
  uint64_t* to_word = SlotWord(to_bucket, to_slot);
  const uint64_t reserved = gphash::ReserveWord(to_expected);
  if (!pm::CompareExchange(to_word, to_expected, reserved)) return false;
  const uint64_t from_word = pm::LoadRelaxed(SlotWord(from_bucket, from_slot));
  uint8_t* from_key = SlotKey(from_bucket, from_slot);
  uint8_t* to_key = SlotKey(to_bucket, to_slot);
  for (uint32_t i = 0; i < geo_.key_size; i += 8)
    pm::StoreRelaxed(to_key + i, pm::LoadRelaxed(from_key + i));
  pm::StoreRelaxed(SlotValue(to_bucket, to_slot),
                   pm::LoadRelaxed(SlotValue(from_bucket, from_slot)));
  uint8_t* last = reinterpret_cast<uint8_t*>(SlotValue(to_bucket, to_slot) + 1);
  pool_.Persist(to_key, static_cast<size_t>(last - to_key));
  pool_.Publish(to_word, gphash::PublishWord(reserved, gphash::FingerprintOf(from_word)));
  pool_.Publish(SlotWord(from_bucket, from_slot), gphash::EmptyWord(from_word));
  return true;
}

bool CpuBackend::Impl::TryKick(const format::KeyHash& hash) {
  for (uint32_t level = 0; level < level_count_; ++level) {
    for (uint32_t location = 0; location < geo_.hash_locations; ++location) {
      const uint64_t index = gphash::BucketIndex(hash, location, levels_[level].bucket_count);
      uint8_t* bucket = Bucket(level, index);
      for (uint32_t slot = 0; slot < geo_.slots_per_bucket; ++slot) {
        const uint64_t word = pm::LoadRelaxed(SlotWord(bucket, slot));
        if (gphash::SlotStateOf(word) != gphash::kSlotValid) continue;
        uint8_t key[format::kMaxKeySize];
        std::memcpy(key, SlotKey(bucket, slot), geo_.key_size);
        const format::KeyHash resident = Hash(key);
        SlotCopy copies[8];
        uint32_t count = FindCopies(key, resident, copies, 8);
        bool self_lost = false;
        const uint64_t winner_value = pm::LoadRelaxed(SlotValue(copies[0].bucket, copies[0].slot));
        for (uint32_t i = 1; i < count; ++i) {  // leftovers of racing inserts: drop them
          uint64_t cell = pm::LoadRelaxed(SlotValue(copies[i].bucket, copies[i].slot));
          if (geo_.value_cells && cell != winner_value) heap_.Give(cell);
          pool_.Publish(SlotWord(copies[i].bucket, copies[i].slot),
                        gphash::EmptyWord(copies[i].word));
          keys_.fetch_sub(1);
          self_lost |= copies[i].bucket == bucket && copies[i].slot == slot;
        }
        if (self_lost) return true;
        for (uint32_t other_level = 0; other_level < level_count_; ++other_level) {
          for (uint32_t other_location = 0; other_location < geo_.hash_locations;
               ++other_location) {
            uint64_t other_index =
                gphash::BucketIndex(resident, other_location, levels_[other_level].bucket_count);
            uint8_t* other = Bucket(other_level, other_index);
            if (other == bucket) continue;
            for (uint32_t free_slot = 0; free_slot < geo_.slots_per_bucket; ++free_slot) {
              uint64_t free_word = pm::LoadRelaxed(SlotWord(other, free_slot));
              if (gphash::SlotStateOf(free_word) != gphash::kSlotEmpty) continue;
              if (MoveSlot(bucket, slot, other, free_slot, free_word)) return true;
            }
          }
        }
      }
    }
  }
  return false;
}

Status CpuBackend::Impl::Resize() {
  DrainLimbo();
  return core_.Grow();
}

// The rehash: every key of the bottom level either moves up or, when a better
// copy of it exists (an interrupted move, a racing insert), is erased. Keys
// are partitioned among threads by hash, so all copies of one key are handled
// by one thread in order and "is this copy the winner" cannot change under it.
// A moving key goes to the new top level, into the bucket of the hash location
// that placed it in the bottom (the new top has 2N / M such buckets per bottom
// bucket, so it always fits), else into any other candidate bucket with room.
// Returns how many keys stayed.
Result<uint64_t> CpuBackend::Impl::MoveBottomLevel() {
  const uint32_t bottom = level_count_ - 1;
  const uint64_t bottom_count = levels_[bottom].bucket_count;
  const uint32_t partitions = static_cast<uint32_t>(
      std::max<uint64_t>(1, std::min<uint64_t>(threads_, bottom_count / 256)));
  std::atomic<uint64_t> stayed{0};
  std::atomic<uint64_t> dropped{0};
  auto owned = [&](const format::KeyHash& hash, uint32_t partition) {
    return ((hash.primary >> 32) * partitions >> 32) == partition;
  };
  auto prefetch_bucket = [&](uint64_t index, uint32_t partition) {
    uint8_t* bucket = Bucket(bottom, index);
    for (uint32_t slot = 0; slot < geo_.slots_per_bucket; ++slot) {
      if (gphash::SlotStateOf(pm::LoadRelaxed(SlotWord(bucket, slot))) != gphash::kSlotValid)
        continue;
      format::KeyHash hash = Hash(SlotKey(bucket, slot));
      if (!owned(hash, partition)) continue;
      for (uint32_t level = 0; level < level_count_; ++level) {
        for (uint32_t location = 0; location < geo_.hash_locations; ++location) {
          pm::Prefetch(
              Bucket(level, gphash::BucketIndex(hash, location, levels_[level].bucket_count)));
        }
      }
    }
  };
  auto run = [&](uint32_t partition) {
    uint64_t erased = 0;
    for (uint64_t index = 0; index < bottom_count; ++index) {
      if (index + 1 < bottom_count) prefetch_bucket(index + 1, partition);
      uint8_t* bucket = Bucket(bottom, index);
      for (uint32_t slot = 0; slot < geo_.slots_per_bucket; ++slot) {
        const uint64_t word = pm::LoadRelaxed(SlotWord(bucket, slot));
        if (gphash::SlotStateOf(word) != gphash::kSlotValid) continue;
        const uint8_t* key = SlotKey(bucket, slot);
        const format::KeyHash hash = Hash(key);
        if (!owned(hash, partition)) continue;
        SlotCopy copies[8];
        uint32_t count = FindCopies(key, hash, copies, 8);
        if (count > 0 && (copies[0].bucket != bucket || copies[0].slot != slot)) {
          uint64_t cell = pm::LoadRelaxed(SlotValue(bucket, slot));
          if (geo_.value_cells &&
              cell != pm::LoadRelaxed(SlotValue(copies[0].bucket, copies[0].slot))) {
            heap_.Give(cell);
          }
          pool_.Publish(SlotWord(bucket, slot), gphash::EmptyWord(word));
          ++erased;
          continue;
        }
        if (!MoveUp(bucket, index, slot, hash)) stayed.fetch_add(1);
      }
    }
    dropped.fetch_add(erased);
  };
  if (partitions == 1) {
    run(0);
  } else {
#pragma omp parallel for num_threads(static_cast <int>(partitions)) schedule(static, 1)
    for (uint32_t partition = 0; partition < partitions; ++partition) run(partition);
  }
  keys_.fetch_sub(static_cast<int64_t>(dropped.load()));
  return stayed.load();
}

bool CpuBackend::Impl::MoveUp(uint8_t* bucket, uint64_t index, uint32_t slot,
                              const format::KeyHash& hash) {
  const uint32_t bottom = level_count_ - 1;
  uint32_t home = 0;
  while (home + 1 < geo_.hash_locations &&
         gphash::BucketIndex(hash, home, levels_[bottom].bucket_count) != index) {
    ++home;
  }
  for (uint32_t pass = 0; pass < 2; ++pass) {
    for (uint32_t level = 0; level < bottom; ++level) {
      for (uint32_t location = 0; location < geo_.hash_locations; ++location) {
        if (pass == 0 && (level != 0 || location != home)) continue;
        uint8_t* target =
            Bucket(level, gphash::BucketIndex(hash, location, levels_[level].bucket_count));
        for (uint32_t free_slot = 0; free_slot < geo_.slots_per_bucket; ++free_slot) {
          uint64_t free_word = pm::LoadRelaxed(SlotWord(target, free_slot));
          if (gphash::SlotStateOf(free_word) != gphash::kSlotEmpty) continue;
          if (MoveSlot(bucket, slot, target, free_slot, free_word)) return true;
        }
      }
    }
  }
  return false;
}

}  // namespace gpkv::gphash::cpu
