// The CPU GPHash hot path: get / put / erase of one key and the per-worker
// loops over a batch, compiled per (S slots per bucket, K key bytes) so that
// bucket offsets and key compares are constants. Included by
// tables/gphash/cpu/kernels.cc only.
//
// Per key the candidate buckets (every level, every hash location) are
// snapshotted with one SSE compare per pair of slot words: a bit mask of the
// slots VALID with the key's fingerprint and one of the EMPTY slots. The batch
// loops prefetch ahead: the slot words of the candidate buckets kFarAhead keys
// ahead, then the key and value lines of the fingerprint matches kNearAhead
// keys ahead, so that the misses of ~16 keys are in flight at once.
#pragma once

#include <smmintrin.h>

#include <cstring>

#include "pm/atomic_word.h"
#include "tables/gphash/cpu/backend_impl.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash::cpu::kernel {

using format::KeyHash;

constexpr uint32_t kMaxCandidates = gphash::kMaxCandidateBuckets;
constexpr uint32_t kMaxCopies = 8;
constexpr size_t kFarAhead = 16;
constexpr size_t kNearAhead = 8;
constexpr size_t kMaxDeferred = 64;
constexpr size_t kCellRefill = 64;

// The bucket of tables/gphash/layout.h for S slots and K key bytes: its
// offsets are constants here.
template <uint32_t S, uint32_t K>
struct Layout {
  static constexpr uint32_t kBucketBytes = gphash::BucketBytes(S, K);
  static constexpr uint32_t kKeyWords = K / 8;

  static uint64_t* Word(uint8_t* bucket, uint32_t slot) {
    return reinterpret_cast<uint64_t*>(bucket + gphash::SlotWordOffset(slot));
  }
  static uint8_t* Key(uint8_t* bucket, uint32_t slot) {
    return bucket + gphash::KeyOffset(S, K, slot);
  }
  static uint64_t* Value(uint8_t* bucket, uint32_t slot) {
    return reinterpret_cast<uint64_t*>(bucket + gphash::ValueWordOffset(S, K, slot));
  }
};

struct Candidate {
  uint8_t* bucket;
  uint64_t index;
  uint32_t level;
};

// The candidate buckets of `hash`, top level first; level_end[p] is one past
// the last candidate of level p.
template <uint32_t S, uint32_t K>
inline uint32_t Candidates(const CpuBackend::Impl& table, const KeyHash& hash, Candidate* out,
                           uint32_t* level_end) {
  uint32_t count = 0;
  for (uint32_t level = 0; level < table.level_count_; ++level) {
    uint64_t buckets[gphash::kMaxHashLocations];
    const uint32_t listed = gphash::FirstLocationBuckets(
        hash, table.geo_.hash_locations, table.levels_[level].bucket_count, buckets);
    for (uint32_t i = 0; i < listed; ++i) {
      const uint64_t index = buckets[i];
      out[count++] = {table.levels_[level].base + index * Layout<S, K>::kBucketBytes, index, level};
    }
    level_end[level] = count;
  }
  return count;
}

// The slot words of one bucket as read at one moment per word, with the
// slots VALID with the wanted fingerprint and the EMPTY slots as bit masks.
template <uint32_t S>
struct Snapshot {
  alignas(16) uint64_t words[S];
  uint32_t match;
  uint32_t empty;
};

// Reads a bucket's S slot words two at a time. An aligned 16-byte load reads
// each of its 8-byte halves atomically on x86, which is all the slot-word
// protocol needs: every word is interpreted on its own and validated later.
template <uint32_t S>
inline void TakeSnapshot(const uint8_t* bucket, uint64_t pattern, Snapshot<S>* out) {
  const __m128i state_and_fingerprint =
      _mm_set1_epi64x(static_cast<long long>(gphash::kStateMatchMask));
  const __m128i state = _mm_set1_epi64x(static_cast<long long>(gphash::kSlotStateMask));
  const __m128i wanted = _mm_set1_epi64x(static_cast<long long>(pattern));
  const __m128i zero = _mm_setzero_si128();
  uint32_t match = 0;
  uint32_t empty = 0;
  for (uint32_t i = 0; i < S; i += 2) {
    __m128i words = _mm_load_si128(reinterpret_cast<const __m128i*>(bucket) + i / 2);
    _mm_store_si128(reinterpret_cast<__m128i*>(out->words + i), words);
    __m128i is_match = _mm_cmpeq_epi64(_mm_and_si128(words, state_and_fingerprint), wanted);
    __m128i is_empty = _mm_cmpeq_epi64(_mm_and_si128(words, state), zero);
    match |= static_cast<uint32_t>(_mm_movemask_pd(_mm_castsi128_pd(is_match))) << i;
    empty |= static_cast<uint32_t>(_mm_movemask_pd(_mm_castsi128_pd(is_empty))) << i;
  }
  out->match = match;
  out->empty = empty;
}

// True if the bucket's slot words still equal the snapshot.
template <uint32_t S>
inline bool Unchanged(const uint8_t* bucket, const Snapshot<S>& snapshot) {
  __m128i differ = _mm_setzero_si128();
  for (uint32_t i = 0; i < S; i += 2) {
    __m128i now = _mm_load_si128(reinterpret_cast<const __m128i*>(bucket) + i / 2);
    __m128i then = _mm_load_si128(reinterpret_cast<const __m128i*>(snapshot.words + i));
    differ = _mm_or_si128(differ, _mm_xor_si128(now, then));
  }
  return _mm_testz_si128(differ, differ) != 0;
}

template <uint32_t K>
inline bool KeyEquals(const uint8_t* slot_key, const uint8_t* key) {
  uint64_t difference = 0;
  for (uint32_t i = 0; i < K / 8; ++i) {
    difference |= pm::LoadRelaxed(slot_key + 8 * i) ^ pm::LoadUnaligned(key + 8 * i);
  }
  return difference == 0;
}

inline uint32_t LowestBit(uint32_t mask) { return static_cast<uint32_t>(__builtin_ctz(mask)); }

// One VALID copy of the key among the candidates.
struct Copy {
  uint32_t candidate;
  uint32_t slot;
  uint64_t word;
};

// The winner rule over copies (gphash::SlotOutranks).
inline bool Outranks(const Candidate* candidates, const Copy& a, const Copy& b) {
  const Candidate& x = candidates[a.candidate];
  const Candidate& y = candidates[b.candidate];
  return gphash::SlotOutranks(x.level, x.index, a.slot, y.level, y.index, b.slot);
}

template <uint32_t S, uint32_t K>
struct Ops {
  using L = Layout<S, K>;

  static uint64_t PackInline(const uint8_t* value, uint32_t value_size) {
    uint64_t word = 0;
    std::memcpy(&word, value, value_size);
    return word;
  }

  // A free cell for a value, refilling the worker's cache from the heap.
  static bool TakeCell(CpuBackend::Impl& table, WorkerScratch& worker, uint64_t* cell) {
    if (worker.cells.empty()) {
      Status status = table.heap_.Take(kCellRefill, &worker.cells);
      if (worker.cells.empty()) {
        worker.status =
            status.ok() ? Status::PoolFull(table.pool_.path() + ": no value cell") : status;
        return false;
      }
    }
    *cell = worker.cells.back();
    worker.cells.pop_back();
    return true;
  }

  // Writes the value into `cell` (zero padded) and persists it.
  static void FillCell(CpuBackend::Impl& table, uint64_t cell, const uint8_t* value) {
    alignas(8) uint8_t buffer[gphash::kMaxCellSize];
    std::memcpy(buffer, value, table.geo_.value_size);
    std::memset(buffer + table.geo_.value_size, 0, table.geo_.cell_size - table.geo_.value_size);
    pm::CopyWordsIn(table.base_ + cell, buffer, table.cell_words_);
    table.pool_.Persist(table.base_ + cell, table.geo_.cell_size);
  }

  // Erases one copy: VALID -> tombstone (INSERT, same version), persisted; the
  // slot and its cell are retired (reused after the epoch, util/epoch.h).
  static bool EraseCopy(CpuBackend::Impl& table, WorkerScratch& worker, uint8_t* bucket,
                        uint32_t slot, uint64_t word) {
    uint64_t tombstone = gphash::MakeSlotWord(gphash::kSlotInsert, gphash::SlotVersionOf(word), 0);
    uint64_t expected = word;
    if (!table.pool_.PublishCas(L::Word(bucket, slot), expected, tombstone)) return false;
    if (table.geo_.value_cells) {
      // Claim the cell: a racing updater's CAS on the value word now fails.
      uint64_t cell = pm::Exchange(L::Value(bucket, slot), 0);
      if (cell != 0) worker.retired.push_back({cell, 0});
    }
    worker.retired.push_back({table.pool_.OffsetOf(L::Word(bucket, slot)), tombstone});
    --worker.key_delta;
    return true;
  }

  // Replaces the value of a VALID slot: a store of the inline word, or a CAS of
  // the value word to a new, persisted cell (out of place).
  static OpResult UpdateValue(CpuBackend::Impl& table, WorkerScratch& worker, uint8_t* bucket,
                              uint32_t slot, const uint8_t* value) {
    uint64_t* value_word = L::Value(bucket, slot);
    if (!table.geo_.value_cells) {
      pm::StoreRelease(value_word, PackInline(value, table.geo_.value_size));
      table.pool_.Persist(value_word, sizeof(uint64_t));
      return OpResult::kDone;
    }
    uint64_t cell;
    if (!TakeCell(table, worker, &cell)) return OpResult::kError;
    FillCell(table, cell, value);
    uint64_t old = pm::LoadAcquire(value_word);
    for (;;) {
      if (old == 0) {  // erased under us: the update is ordered before the erase
        worker.cells.push_back(cell);
        return OpResult::kDone;
      }
      if (table.pool_.PublishCas(value_word, old, cell)) {
        worker.retired.push_back({old, 0});
        return OpResult::kDone;
      }
    }
  }

  // Snapshots every candidate bucket and collects the VALID copies of the key.
  // When it finds none, the snapshots are read again and the collect repeats
  // until they agree: the buckets are read one after another, and a key moving
  // between them (a racing insert's winning copy published, its losing copy
  // erased) must not look absent.
  static uint32_t Collect(const Candidate* candidates, uint32_t count, const uint8_t* key,
                          uint64_t pattern, Snapshot<S>* snapshots, Copy* copies) {
    for (;;) {
      uint32_t copy_count = 0;
      for (uint32_t c = 0; c < count; ++c) {
        TakeSnapshot<S>(candidates[c].bucket, pattern, &snapshots[c]);
        for (uint32_t m = snapshots[c].match; m != 0; m &= m - 1) {
          uint32_t slot = LowestBit(m);
          if (!KeyEquals<K>(L::Key(candidates[c].bucket, slot), key)) continue;
          if (copy_count < kMaxCopies) copies[copy_count++] = {c, slot, snapshots[c].words[slot]};
        }
      }
      if (copy_count > 0 || Stable(candidates, count, snapshots)) return copy_count;
    }
  }

  // True if the first `count` candidate buckets still hold their snapshots.
  static bool Stable(const Candidate* candidates, uint32_t count, const Snapshot<S>* snapshots) {
    pm::LoadFence();
    bool stable = true;
    for (uint32_t c = 0; c < count; ++c) stable &= Unchanged<S>(candidates[c].bucket, snapshots[c]);
    return stable;
  }

  static uint32_t WinnerOf(const Candidate* candidates, const Copy* copies, uint32_t count) {
    uint32_t winner = 0;
    for (uint32_t i = 1; i < count; ++i) {
      if (Outranks(candidates, copies[i], copies[winner])) winner = i;
    }
    return winner;
  }

  // Insert or update of one key. kNoSpace: no candidate slot is free (nothing
  // changed). kError: worker.status says why (pool full).
  static OpResult Put(CpuBackend::Impl& table, WorkerScratch& worker, const uint8_t* key,
                      const uint8_t* value, const KeyHash& hash) {
    const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
    const uint64_t pattern = gphash::ValidPattern(fingerprint);
    Candidate candidates[kMaxCandidates];
    uint32_t level_end[gphash::kMaxLevels];
    const uint32_t count = Candidates<S, K>(table, hash, candidates, level_end);
    Snapshot<S> snapshots[kMaxCandidates];
    Copy copies[kMaxCopies];
    for (;;) {
      uint32_t copy_count = Collect(candidates, count, key, pattern, snapshots, copies);
      // Several copies: the losers get erased, so the view must be one
      // moment's. A collect stalled between buckets can hold a copy erased
      // meanwhile beside one inserted since; taking the stale one as the
      // winner would erase the live one.
      if (copy_count > 1 && !Stable(candidates, count, snapshots)) continue;
      if (copy_count > 0) {
        uint32_t winner = WinnerOf(candidates, copies, copy_count);
        const Copy& target = copies[winner];
        OpResult result =
            UpdateValue(table, worker, candidates[target.candidate].bucket, target.slot, value);
        if (result != OpResult::kDone) return result;
        for (uint32_t i = 0; i < copy_count; ++i) {
          if (i == winner) continue;
          EraseCopy(table, worker, candidates[copies[i].candidate].bucket, copies[i].slot,
                    copies[i].word);
        }
        return OpResult::kDone;
      }
      // The least loaded candidate bucket of the highest level with room.
      int chosen = -1;
      for (uint32_t level = 0, c = 0; level < table.level_count_ && chosen < 0; ++level) {
        int most_free = 0;
        for (; c < level_end[level]; ++c) {
          int free_slots = __builtin_popcount(snapshots[c].empty);
          if (free_slots > most_free) {
            most_free = free_slots;
            chosen = static_cast<int>(c);
          }
        }
      }
      if (chosen < 0) return OpResult::kNoSpace;
      uint64_t cell = 0;
      if (table.geo_.value_cells && !TakeCell(table, worker, &cell)) return OpResult::kError;
      uint8_t* bucket = candidates[chosen].bucket;
      const uint32_t slot = LowestBit(snapshots[chosen].empty);
      uint64_t expected = snapshots[chosen].words[slot];
      const uint64_t reserved = gphash::ReserveWord(expected);
      if (!pm::CompareExchange(L::Word(bucket, slot), expected, reserved)) {
        if (table.geo_.value_cells) worker.cells.push_back(cell);
        continue;  // taken by a racing insert: look again
      }
      pm::CopyWordsIn(L::Key(bucket, slot), key, L::kKeyWords);
      if (table.geo_.value_cells) {
        FillCell(table, cell, value);
        pm::StoreRelaxed(L::Value(bucket, slot), cell);
      } else {
        pm::StoreRelaxed(L::Value(bucket, slot), PackInline(value, table.geo_.value_size));
      }
      uint8_t* first = L::Key(bucket, slot);
      uint8_t* last = reinterpret_cast<uint8_t*>(L::Value(bucket, slot) + 1);
      table.pool_.Persist(first, static_cast<size_t>(last - first));
      table.pool_.Publish(L::Word(bucket, slot), gphash::PublishWord(reserved, fingerprint));
      ++worker.key_delta;
      ResolveRacingInsert(table, worker, key, pattern, candidates, count, snapshots, copies);
      return OpResult::kDone;
    }
  }

  // Two puts of one key (from different batches) that both found no copy
  // each reserve and publish a slot of their own. The put that has just
  // published looks again, so that no duplicate outlives it: the duplicate
  // rule's winner stays and the other copies are erased, this put's own
  // included when it lost (the racing put then counts as the later one:
  // both were in flight, and readers only ever saw the winner's value).
  static void ResolveRacingInsert(CpuBackend::Impl& table, WorkerScratch& worker,
                                  const uint8_t* key, uint64_t pattern, const Candidate* candidates,
                                  uint32_t count, Snapshot<S>* snapshots, Copy* copies) {
    for (;;) {
      const uint32_t copy_count = Collect(candidates, count, key, pattern, snapshots, copies);
      if (copy_count <= 1) return;
      if (!Stable(candidates, count, snapshots)) continue;  // as in Put: one moment's view
      const uint32_t winner = WinnerOf(candidates, copies, copy_count);
      for (uint32_t i = 0; i < copy_count; ++i) {
        if (i == winner) continue;
        EraseCopy(table, worker, candidates[copies[i].candidate].bucket, copies[i].slot,
                  copies[i].word);
      }
      return;
    }
  }

  // Erase of one key: losers first, the winner last. True if this call erased
  // a copy.
  static bool Erase(CpuBackend::Impl& table, WorkerScratch& worker, const uint8_t* key,
                    const KeyHash& hash) {
    const uint64_t pattern = gphash::ValidPattern(gphash::FingerprintOfHash(hash));
    Candidate candidates[kMaxCandidates];
    uint32_t level_end[gphash::kMaxLevels];
    const uint32_t count = Candidates<S, K>(table, hash, candidates, level_end);
    Snapshot<S> snapshots[kMaxCandidates];
    Copy copies[kMaxCopies];
    bool erased = false;
    for (;;) {
      uint32_t copy_count = Collect(candidates, count, key, pattern, snapshots, copies);
      if (copy_count == 0) return erased;
      uint32_t winner = WinnerOf(candidates, copies, copy_count);
      bool raced = false;
      for (uint32_t i = 0; i < copy_count && !raced; ++i) {
        if (i == winner) continue;
        if (EraseCopy(table, worker, candidates[copies[i].candidate].bucket, copies[i].slot,
                      copies[i].word)) {
          erased = true;
        } else {
          raced = true;
        }
      }
      if (raced) continue;
      const Copy& target = copies[winner];
      if (EraseCopy(table, worker, candidates[target.candidate].bucket, target.slot, target.word)) {
        return true;
      }
    }
  }

  // Lookup of one key; copies the winner's value out. Double collect: the
  // candidate slot words are read again after the key and value, and the
  // lookup repeats if any changed, so the value belongs to a moment at which
  // the slot words were as seen (no mix of two values, no reused slot).
  static bool Get(const CpuBackend::Impl& table, const uint8_t* key, const KeyHash& hash,
                  uint8_t* value_out) {
    const uint64_t pattern = gphash::ValidPattern(gphash::FingerprintOfHash(hash));
    Candidate candidates[kMaxCandidates];
    uint32_t level_end[gphash::kMaxLevels];
    Candidates<S, K>(table, hash, candidates, level_end);
    Snapshot<S> snapshots[kMaxCandidates];
    alignas(8) uint8_t cell[gphash::kMaxCellSize];
    for (;;) {
      int best = -1;
      uint32_t best_slot = 0;
      uint32_t examined = 0;
      for (uint32_t level = 0; level < table.level_count_ && best < 0; ++level) {
        for (uint32_t c = examined; c < level_end[level]; ++c) {
          TakeSnapshot<S>(candidates[c].bucket, pattern, &snapshots[c]);
          for (uint32_t m = snapshots[c].match; m != 0; m &= m - 1) {
            uint32_t slot = LowestBit(m);
            if (!KeyEquals<K>(L::Key(candidates[c].bucket, slot), key)) continue;
            if (best < 0 || gphash::SlotOutranks(level, candidates[c].index, slot, level,
                                                 candidates[best].index, best_slot)) {
              best = static_cast<int>(c);
              best_slot = slot;
            }
          }
        }
        examined = level_end[level];
      }
      if (best < 0) {
        // "Not found" needs the double collect too: the buckets are read one
        // after another, and a key can move between them meanwhile (a racing
        // insert's winning copy published after its bucket was read, the
        // losing copy erased before its bucket was read).
        if (!Stable(candidates, examined, snapshots)) continue;
        return false;
      }
      pm::LoadFence();
      uint64_t value_word = pm::LoadRelaxed(L::Value(candidates[best].bucket, best_slot));
      if (table.geo_.value_cells) {
        // A value word read from a slot that changed meanwhile is discarded
        // below; the bound only keeps the copy inside the mapping.
        if (value_word > table.pool_.size() - table.geo_.cell_size) value_word = 0;
        pm::CopyWordsOut(cell, table.base_ + value_word, table.cell_words_);
      }
      if (!Stable(candidates, examined, snapshots)) continue;
      if (table.geo_.value_cells) {
        std::memcpy(value_out, cell, table.geo_.value_size);
      } else {
        std::memcpy(value_out, &value_word, table.geo_.value_size);
      }
      return true;
    }
  }

  // ---- prefetching ----
  static void PrefetchBuckets(const CpuBackend::Impl& table, const KeyHash& hash) {
    for (uint32_t level = 0; level < table.level_count_; ++level) {
      // Every location's bucket (gphash::BucketIndex; a repeat costs a
      // prefetch, dropping it a loop per key).
      const LevelRef& ref = table.levels_[level];
      for (uint32_t location = 0; location < table.geo_.hash_locations; ++location) {
        const uint8_t* bucket =
            ref.base + gphash::BucketIndex(hash, location, ref.bucket_count) * L::kBucketBytes;
        pm::Prefetch(bucket);
        if (S == 16) pm::Prefetch(bucket + 64);
      }
    }
  }

  // Prefetches the key and value lines of the fingerprint matches (their
  // slot words were prefetched kFarAhead keys ago) and, for a put without a
  // match, the lines of the slot it will probably take.
  static void PrefetchSlots(const CpuBackend::Impl& table, const KeyHash& hash, bool for_insert) {
    const uint64_t pattern = gphash::ValidPattern(gphash::FingerprintOfHash(hash));
    bool matched = false;
    uint8_t* free_bucket = nullptr;
    uint32_t free_slot = 0;
    for (uint32_t level = 0; level < table.level_count_; ++level) {
      const LevelRef& ref = table.levels_[level];
      for (uint32_t location = 0; location < table.geo_.hash_locations; ++location) {
        uint8_t* bucket =
            ref.base + gphash::BucketIndex(hash, location, ref.bucket_count) * L::kBucketBytes;
        Snapshot<S> snapshot;
        TakeSnapshot<S>(bucket, pattern, &snapshot);
        for (uint32_t m = snapshot.match; m != 0; m &= m - 1) {
          uint32_t slot = LowestBit(m);
          pm::Prefetch(L::Key(bucket, slot));
          pm::Prefetch(L::Value(bucket, slot));
          matched = true;
        }
        if (free_bucket == nullptr && snapshot.empty != 0) {
          free_bucket = bucket;
          free_slot = LowestBit(snapshot.empty);
        }
      }
    }
    if (for_insert && !matched && free_bucket != nullptr) {
      pm::Prefetch(L::Key(free_bucket, free_slot));
      pm::Prefetch(L::Value(free_bucket, free_slot));
    }
  }

  static void PrefetchAhead(const CpuBackend::Impl& table, const BatchScratch& batch,
                            const std::vector<uint32_t>& ops, size_t i, bool for_insert) {
    if (i + kFarAhead < ops.size()) PrefetchBuckets(table, batch.hashes[ops[i + kFarAhead]]);
    if (i + kNearAhead < ops.size()) {
      PrefetchSlots(table, batch.hashes[ops[i + kNearAhead]], for_insert);
    }
  }

  static void WarmUp(const CpuBackend::Impl& table, const BatchScratch& batch,
                     const std::vector<uint32_t>& ops, size_t from) {
    for (size_t i = from; i < ops.size() && i < from + kFarAhead; ++i) {
      PrefetchBuckets(table, batch.hashes[ops[i]]);
    }
  }

  // ---- batch loops ----
  static bool SameKeyAsDeferred(const BatchInput& input, const BatchScratch& batch,
                                const WorkerScratch& worker, uint32_t op) {
    const KeyHash& hash = batch.hashes[op];
    for (uint32_t other : worker.deferred) {
      if (batch.hashes[other].primary == hash.primary &&
          std::memcmp(input.keys + size_t{other} * K, input.keys + size_t{op} * K, K) == 0) {
        return true;
      }
    }
    return false;
  }

  // Runs the worker's puts from its cursor. A put that finds no free slot is
  // deferred (placed later under the exclusive lock); the worker stops at an
  // operation on a deferred key, or when too many are deferred, so that each
  // key's operations stay in batch order.
  static void PutWorker(CpuBackend::Impl& table, const BatchInput& input, BatchScratch& batch,
                        WorkerScratch& worker) {
    const std::vector<uint32_t>& ops = worker.ops;
    WarmUp(table, batch, ops, worker.cursor);
    size_t i = worker.cursor;
    for (; i < ops.size(); ++i) {
      if (batch.abort.load(std::memory_order_relaxed)) break;
      PrefetchAhead(table, batch, ops, i, /*for_insert=*/true);
      const uint32_t op = ops[i];
      if (!worker.deferred.empty() && SameKeyAsDeferred(input, batch, worker, op)) break;
      OpResult result = Put(table, worker, input.keys + size_t{op} * K,
                            input.values + size_t{op} * table.geo_.value_size, batch.hashes[op]);
      if (result == OpResult::kNoSpace) {
        if (worker.deferred.size() >= kMaxDeferred) break;
        worker.deferred.push_back(op);
      } else if (result == OpResult::kError) {
        batch.abort.store(true, std::memory_order_relaxed);
        i = ops.size();
        break;
      }
    }
    worker.cursor = i;
  }

  static void EraseWorker(CpuBackend::Impl& table, const BatchInput& input, BatchScratch& batch,
                          WorkerScratch& worker) {
    const std::vector<uint32_t>& ops = worker.ops;
    WarmUp(table, batch, ops, worker.cursor);
    for (size_t i = worker.cursor; i < ops.size(); ++i) {
      PrefetchAhead(table, batch, ops, i, /*for_insert=*/false);
      const uint32_t op = ops[i];
      bool erased = Erase(table, worker, input.keys + size_t{op} * K, batch.hashes[op]);
      if (input.flags_out != nullptr) input.flags_out[op] = erased ? 1 : 0;
    }
    worker.cursor = ops.size();
  }

  // Gets of batch indexes [begin, end): no ordering constraint among reads.
  static void GetRange(CpuBackend::Impl& table, const BatchInput& input, BatchScratch& batch,
                       size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      batch.hashes[i] = table.Hash(input.keys + i * K);
    }
    for (size_t i = begin; i < end && i < begin + kFarAhead; ++i) {
      PrefetchBuckets(table, batch.hashes[i]);
    }
    const uint32_t value_size = table.geo_.value_size;
    for (size_t i = begin; i < end; ++i) {
      if (i + kFarAhead < end) PrefetchBuckets(table, batch.hashes[i + kFarAhead]);
      if (i + kNearAhead < end) PrefetchSlots(table, batch.hashes[i + kNearAhead], false);
      uint8_t* value_out = input.values_out + i * value_size;
      bool found = Get(table, input.keys + i * K, batch.hashes[i], value_out);
      if (!found) std::memset(value_out, 0, value_size);
      if (input.flags_out != nullptr) input.flags_out[i] = found ? 1 : 0;
    }
  }

  static OpResult PutOne(CpuBackend::Impl& table, WorkerScratch& worker, const uint8_t* key,
                         const uint8_t* value, const KeyHash& hash) {
    return Put(table, worker, key, value, hash);
  }
};

}  // namespace gpkv::gphash::cpu::kernel
