#include "tables/gphash/slot_scan.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "format/hash.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash {
namespace {

using format::KeyHash;
using Severity = recovery::Finding::Severity;

uint64_t LoadWord(const uint8_t* address) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(address), __ATOMIC_RELAXED);
}

// Asks for a cache line (a volatile asm: GCC deletes loops of bare
// __builtin_prefetch calls).
void Prefetch(const void* address) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address, 0, 3);
#endif
}

constexpr uint64_t kChunk = 64;

// Runs fn(thread, first, last) over chunks of [begin, end) on `threads`
// OpenMP threads. One thread runs inline (no OpenMP team: safe in a forked
// child).
template <typename Fn>
void ParallelChunks(int threads, uint64_t begin, uint64_t end, const Fn& fn) {
  const uint64_t chunks = (end - begin + kChunk - 1) / kChunk;
  if (threads <= 1 || chunks < 2) {
    fn(0, begin, end);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (uint64_t chunk = 0; chunk < chunks; ++chunk) {
    uint64_t first = begin + chunk * kChunk;
    fn(omp_get_thread_num(), first, std::min(end, first + kChunk));
  }
}

struct SlotRef {
  uint32_t level;
  uint64_t bucket;
  uint32_t slot;
  bool operator==(const SlotRef& o) const {
    return level == o.level && bucket == o.bucket && slot == o.slot;
  }
};

enum class Problem { kNone, kFingerprint, kMisplaced, kValueRef, kPadding };

struct ThreadState {
  uint64_t slots = 0, keys = 0, reserved = 0, duplicates = 0, corrupt = 0;
  uint64_t slots_cleared = 0, duplicates_removed = 0;
  std::vector<uint64_t> released_cells;  // cells whose referencing slot was cleared
  std::vector<uint64_t> conflicts;       // cells a second live key references
  std::vector<recovery::Finding> findings;
  uint64_t findings_total = 0;
};

class Scanner {
 public:
  Scanner(const pm::Pool& pool, pm::Pool* writer, const GphashView& view, SlotScanMode mode,
          size_t max_findings)
      : pool_(pool),
        writer_(writer),
        view_(view),
        mode_(mode),
        max_findings_(max_findings),
        cells_(view),
        S_(view.geo.slots_per_bucket),
        K_(view.key_size) {}

  SlotScanResult Run(int threads, const recovery::ProgressFn& progress) {
    if (threads <= 0) threads = omp_get_max_threads();
    std::vector<ThreadState> states(static_cast<size_t>(threads));
    result_.cells_used.assign((view_.TotalCells() + 63) / 64, 0);
    const uint64_t total = view_.TotalSlots();
    const uint64_t block = std::max<uint64_t>(1, 65536 / S_);
    uint64_t done = 0;
    for (uint32_t level = 0; level < view_.levels.size(); ++level) {
      const uint64_t buckets = view_.levels[level].bucket_count;
      for (uint64_t start = 0; start < buckets; start += block) {
        uint64_t end = std::min(buckets, start + block);
        ParallelChunks(threads, start, end, [&](int thread, uint64_t first, uint64_t last) {
          // The duplicate check of a key probes its other candidate buckets:
          // ask for those of the next bucket's keys while scanning this one.
          if (first < last) PrefetchCandidates(level, first);
          for (uint64_t bucket = first; bucket < last; ++bucket) {
            if (bucket + 1 < last) PrefetchCandidates(level, bucket + 1);
            ScanBucket(level, bucket, states[static_cast<size_t>(thread)]);
          }
        });
        done += (end - start) * S_;
        if (progress) progress(done, total);
      }
    }
    Merge(states);
    return std::move(result_);
  }

 private:
  const uint8_t* Bucket(uint32_t level, uint64_t bucket) const {
    return pool_.At<uint8_t>(view_.BucketOffset(level, bucket));
  }
  uint64_t WordOffset(const SlotRef& ref) const {
    return view_.BucketOffset(ref.level, ref.bucket) + gphash::SlotWordOffset(ref.slot);
  }
  bool Writing() const { return mode_ != SlotScanMode::kVerify; }
  // The candidate buckets of `hash` in level `level`, each once.
  gphash::LevelCandidates LevelBuckets(const KeyHash& hash, uint32_t level) const {
    return gphash::CandidateBucketsOfLevel(hash, view_.geo.hash_locations,
                                           view_.levels[level].bucket_count,
                                           gphash::CandidateOrder::kFirstLocation);
  }

  void PrefetchCandidates(uint32_t level, uint64_t bucket_index) const {
    const uint8_t* bucket = Bucket(level, bucket_index);
    for (uint32_t slot = 0; slot < S_; ++slot) {
      if (gphash::SlotStateOf(LoadWord(bucket + gphash::SlotWordOffset(slot))) !=
          gphash::kSlotValid) {
        continue;
      }
      KeyHash hash =
          format::HashKey(bucket + gphash::KeyOffset(S_, K_, slot), K_, view_.geo.hash_seed);
      for (uint32_t other = 0; other < view_.levels.size(); ++other) {
        const gphash::LevelCandidates buckets = LevelBuckets(hash, other);
        for (uint32_t i = 0; i < buckets.count; ++i) {
          const uint64_t index = buckets.buckets[i];
          if (other == level && index == bucket_index) continue;
          const uint8_t* candidate = Bucket(other, index);
          Prefetch(candidate);
          if (S_ == 16) Prefetch(candidate + 64);
        }
      }
    }
  }

  void ScanBucket(uint32_t level, uint64_t bucket_index, ThreadState& state) {
    const uint8_t* bucket = Bucket(level, bucket_index);
    for (uint32_t slot = 0; slot < S_; ++slot) {
      ++state.slots;
      const SlotRef self{level, bucket_index, slot};
      const uint64_t word = LoadWord(bucket + gphash::SlotWordOffset(slot));
      if (!gphash::SlotStateIsKnown(word)) {
        std::string what =
            "slot " + std::to_string(slot) + " state " + std::to_string(gphash::SlotStateOf(word));
        ReportCorrupt(state, self, word,
                      gphash::SlotStateOf(word) > gphash::kSlotValid
                          ? what + " is not a valid state"
                          : what + " carries fingerprint bits (" +
                                HexOffset(gphash::FingerprintOf(word)) + ")");
        continue;
      }
      const uint32_t slot_state = gphash::SlotStateOf(word);
      if (slot_state == gphash::kSlotEmpty) continue;
      if (slot_state == gphash::kSlotInsert) {
        ++state.reserved;
        AddFinding(state, Severity::kRecoverable, self,
                   std::string("slot ") + std::to_string(slot) +
                       " is reserved (INSERT): an insert or erase cut short by a crash; " +
                       (Writing() ? "cleared" : "cleared at open"));
        if (Writing()) {
          ReleaseCell(state, bucket, slot);
          Clear(self, word);
          ++state.slots_cleared;
        }
        continue;
      }
      KeyHash hash;
      Problem problem = Check(self, word, &hash);
      if (problem != Problem::kNone) {
        ReportCorrupt(state, self, word, Describe(problem, bucket, slot));
        continue;
      }
      uint64_t winner_value = 0;
      SlotRef winner = Winner(hash, bucket + gphash::KeyOffset(S_, K_, slot), self, &winner_value);
      const uint64_t value_word = LoadWord(bucket + gphash::ValueWordOffset(S_, K_, slot));
      if (!(winner == self)) {
        ++state.duplicates;
        AddFinding(state, Severity::kRecoverable, self,
                   "slot " + std::to_string(slot) + " duplicates the key of level " +
                       std::to_string(winner.level) + " bucket " + std::to_string(winner.bucket) +
                       " slot " + std::to_string(winner.slot) + ", which wins; " +
                       (Writing() ? "erased" : "erased at open"));
        if (Writing()) {
          if (!view_.geo.value_cells || value_word != winner_value)
            ReleaseCell(state, bucket, slot);
          Clear(self, word);
          ++state.duplicates_removed;
        }
        continue;
      }
      ++state.keys;
      if (view_.geo.value_cells) {
        uint64_t cell = static_cast<uint64_t>(cells_.Lookup(value_word));
        uint64_t bit = uint64_t{1} << (cell % 64);
        uint64_t before = __atomic_fetch_or(&result_.cells_used[cell / 64], bit, __ATOMIC_RELAXED);
        if ((before & bit) != 0) state.conflicts.push_back(cell);
      }
    }
  }

  // Local trust of a VALID slot: a pure function of its own bytes.
  Problem Check(const SlotRef& ref, uint64_t word, KeyHash* hash) const {
    const uint8_t* bucket = Bucket(ref.level, ref.bucket);
    *hash = format::HashKey(bucket + gphash::KeyOffset(S_, K_, ref.slot), K_, view_.geo.hash_seed);
    if (gphash::FingerprintOfHash(*hash) != gphash::FingerprintOf(word)) {
      return Problem::kFingerprint;
    }
    if (!gphash::IsCandidateBucket(*hash, view_.geo.hash_locations,
                                   view_.levels[ref.level].bucket_count, ref.bucket)) {
      return Problem::kMisplaced;
    }
    return ValueProblem(bucket, ref.slot);
  }

  Problem ValueProblem(const uint8_t* bucket, uint32_t slot) const {
    uint64_t value_word = LoadWord(bucket + gphash::ValueWordOffset(S_, K_, slot));
    if (view_.geo.value_cells)
      return cells_.Lookup(value_word) < 0 ? Problem::kValueRef : Problem::kNone;
    if (view_.value_size < 8 && (value_word >> (8 * view_.value_size)) != 0) {
      return Problem::kPadding;
    }
    return Problem::kNone;
  }

  std::string Describe(Problem problem, const uint8_t* bucket, uint32_t slot) const {
    std::string prefix = "slot " + std::to_string(slot) + " ";
    uint64_t value_word = LoadWord(bucket + gphash::ValueWordOffset(S_, K_, slot));
    switch (problem) {
      case Problem::kFingerprint:
        return prefix + "fingerprint does not match its key";
      case Problem::kMisplaced:
        return prefix + "holds a key whose candidate buckets do not include this one";
      case Problem::kValueRef:
        return prefix + "value reference " + HexOffset(value_word) +
               " is not a cell of the table's value chunks";
      case Problem::kPadding:
        return prefix + "inline value " + HexOffset(value_word) +
               " has bytes set past the value size " + std::to_string(view_.value_size);
      case Problem::kNone:
        break;
    }
    return prefix + "is fine";
  }

  // The trusted copy of the key that wins duplicate resolution (self included).
  SlotRef Winner(const KeyHash& hash, const uint8_t* key, const SlotRef& self,
                 uint64_t* winner_value) const {
    const uint64_t fingerprint = gphash::FingerprintOfHash(hash);
    SlotRef best = self;
    for (uint32_t level = 0; level < view_.levels.size(); ++level) {
      const gphash::LevelCandidates buckets = LevelBuckets(hash, level);
      for (uint32_t i = 0; i < buckets.count; ++i) {
        const uint64_t index = buckets.buckets[i];
        const uint8_t* bucket = Bucket(level, index);
        for (uint32_t slot = 0; slot < S_; ++slot) {
          SlotRef ref{level, index, slot};
          if (ref == self) continue;
          if (!gphash::SlotMatches(LoadWord(bucket + gphash::SlotWordOffset(slot)), fingerprint)) {
            continue;
          }
          if (std::memcmp(bucket + gphash::KeyOffset(S_, K_, slot), key, K_) != 0) continue;
          if (ValueProblem(bucket, slot) != Problem::kNone) continue;
          if (gphash::SlotOutranks(level, index, slot, best.level, best.bucket, best.slot)) {
            best = ref;
          }
        }
      }
    }
    *winner_value =
        LoadWord(Bucket(best.level, best.bucket) + gphash::ValueWordOffset(S_, K_, best.slot));
    return best;
  }

  void ReportCorrupt(ThreadState& state, const SlotRef& ref, uint64_t word, std::string message) {
    ++state.corrupt;
    if (mode_ == SlotScanMode::kRepair) {
      message += "; slot dropped";
      ReleaseCell(state, Bucket(ref.level, ref.bucket), ref.slot);
      Clear(ref, word);
      ++state.slots_cleared;
    }
    AddFinding(state, Severity::kCorruption, ref, std::move(message));
  }

  // Notes the cell a slot about to be cleared references, if any: reclaimed
  // unless a live key references it too (decided after the scan).
  void ReleaseCell(ThreadState& state, const uint8_t* bucket, uint32_t slot) {
    if (!view_.geo.value_cells) return;
    int64_t cell = cells_.Lookup(LoadWord(bucket + gphash::ValueWordOffset(S_, K_, slot)));
    if (cell >= 0) state.released_cells.push_back(static_cast<uint64_t>(cell));
  }

  void Clear(const SlotRef& ref, uint64_t word) {
    uint64_t* address = writer_->At<uint64_t>(WordOffset(ref));
    writer_->Publish(address, gphash::EmptyWord(word));
  }

  void AddFinding(ThreadState& state, Severity severity, const SlotRef& ref, std::string message) {
    ++state.findings_total;
    if (state.findings.size() >= max_findings_) return;
    uint64_t offset = WordOffset(ref);
    std::string region = view_.BucketRegion(ref.level, ref.bucket);
    std::string text = pool_.Where(region, offset) + ": " + message;
    state.findings.push_back(
        recovery::Finding{severity, std::move(region), offset, std::move(text)});
  }

  bool CellUsed(uint64_t cell) const { return (result_.cells_used[cell / 64] >> (cell % 64)) & 1; }

  void Merge(std::vector<ThreadState>& states) {
    std::vector<uint64_t> released, conflicts;
    uint64_t findings_total = 0;
    for (ThreadState& state : states) {
      result_.slots += state.slots;
      result_.keys += state.keys;
      result_.reserved += state.reserved;
      result_.duplicates += state.duplicates;
      result_.corrupt += state.corrupt;
      result_.slots_cleared += state.slots_cleared;
      result_.duplicates_removed += state.duplicates_removed;
      released.insert(released.end(), state.released_cells.begin(), state.released_cells.end());
      conflicts.insert(conflicts.end(), state.conflicts.begin(), state.conflicts.end());
      findings_total += state.findings_total;
      for (recovery::Finding& finding : state.findings)
        result_.findings.push_back(std::move(finding));
    }
    if (!conflicts.empty()) findings_total += ResolveSharedCells(conflicts);
    std::sort(released.begin(), released.end());
    released.erase(std::unique(released.begin(), released.end()), released.end());
    for (uint64_t cell : released) result_.cells_reclaimed += CellUsed(cell) ? 0 : 1;
    if (!Writing()) result_.cells_reclaimed = 0;
    for (uint64_t word : result_.cells_used) result_.cells_in_use += __builtin_popcountll(word);
    std::sort(
        result_.findings.begin(), result_.findings.end(),
        [](const recovery::Finding& a, const recovery::Finding& b) { return a.offset < b.offset; });
    if (result_.findings.size() > max_findings_) result_.findings.resize(max_findings_);
    result_.findings_omitted = findings_total - result_.findings.size();
  }

  // Second pass, only when two live keys reference one cell: every live key
  // referencing such a cell is corruption (which of them owns it is unknowable).
  // Returns the number of findings it produced.
  uint64_t ResolveSharedCells(const std::vector<uint64_t>& conflicts) {
    std::unordered_set<uint64_t> shared(conflicts.begin(), conflicts.end());
    ThreadState state;
    for (uint32_t level = 0; level < view_.levels.size(); ++level) {
      for (uint64_t index = 0; index < view_.levels[level].bucket_count; ++index) {
        const uint8_t* bucket = Bucket(level, index);
        for (uint32_t slot = 0; slot < S_; ++slot) {
          uint64_t word = LoadWord(bucket + gphash::SlotWordOffset(slot));
          if (gphash::SlotStateOf(word) != gphash::kSlotValid || !gphash::SlotStateIsKnown(word)) {
            continue;
          }
          int64_t cell = cells_.Lookup(LoadWord(bucket + gphash::ValueWordOffset(S_, K_, slot)));
          if (cell < 0 || shared.count(static_cast<uint64_t>(cell)) == 0) continue;
          SlotRef self{level, index, slot};
          KeyHash hash;
          if (Check(self, word, &hash) != Problem::kNone) continue;
          uint64_t winner_value;
          if (!(Winner(hash, bucket + gphash::KeyOffset(S_, K_, slot), self, &winner_value) ==
                self)) {
            continue;
          }
          --result_.keys;
          ReportCorrupt(state, self, word,
                        "slot " + std::to_string(slot) + " value cell " +
                            HexOffset(cells_.OffsetOf(static_cast<uint64_t>(cell))) +
                            " is referenced by another key too");
        }
      }
    }
    result_.corrupt += state.corrupt;
    result_.slots_cleared += state.slots_cleared;
    for (recovery::Finding& finding : state.findings)
      result_.findings.push_back(std::move(finding));
    return state.findings_total;
  }

  const pm::Pool& pool_;
  pm::Pool* writer_;
  const GphashView& view_;
  const SlotScanMode mode_;
  const size_t max_findings_;
  const CellIndex cells_;
  const uint32_t S_;
  const uint32_t K_;
  SlotScanResult result_;
};

}  // namespace

SlotScanResult VerifyGphashSlots(const pm::Pool& pool, const GphashView& view, int threads,
                                 const recovery::ProgressFn& progress, size_t max_findings) {
  Scanner scanner(pool, nullptr, view, SlotScanMode::kVerify, max_findings);
  return scanner.Run(threads, progress);
}

SlotScanResult FixGphashSlots(pm::Pool& pool, const GphashView& view, SlotScanMode mode,
                              int threads, const recovery::ProgressFn& progress,
                              size_t max_findings) {
  if (mode == SlotScanMode::kVerify) return VerifyGphashSlots(pool, view, threads, progress);
  Scanner scanner(pool, &pool, view, mode, max_findings);
  return scanner.Run(threads, progress);
}

}  // namespace gpkv::gphash
