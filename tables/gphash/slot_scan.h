// The slot scan of a GPHash table: one pass over every slot of the active
// LevelSet that classifies each slot and, in the writing modes, fixes it.
// Verify, repair and the CPU backend's open-time recovery all run this scan,
// so they agree on what is a crash leftover and what is corruption.
//
// Per slot:
//   EMPTY                        fine
//   INSERT (reserved)            crash leftover (kRecoverable): cleared
//   VALID and trusted            its key hashes to this bucket, the fingerprint
//                                matches the key, the value reference is a cell
//                                of a value chunk (or the inline padding is zero)
//     - loses duplicate resolution (gphash::SlotOutranks) against another
//       trusted copy of its key: crash / race leftover (kRecoverable): erased
//     - wins: a live key; its value cell is marked used
//   anything else                corruption (kCorruption): dropped by repair
// Two live keys referencing one value cell are both corruption.
//
// Slots are examined in parallel; each slot is only ever changed by the thread
// that examines it, and whether a slot wins is decided from trusted copies
// only, which no thread changes, so the outcome does not depend on timing.
//
// Who may call: recovery/ and cpu/ (open). Thread safety: the caller must be
// the only user of the table for the duration (the writing modes store to it).
#pragma once

#include <cstdint>
#include <vector>

#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/reader.h"

namespace gpkv::gphash {

enum class SlotScanMode : uint8_t {
  kVerify,   // read only
  kRecover,  // open-time recovery: clear reserved slots, erase duplicate losers
  kRepair,   // kRecover + drop every slot that cannot be trusted
};

struct SlotScanResult {
  uint64_t slots = 0;       // slots examined
  uint64_t keys = 0;        // live keys (trusted winners)
  uint64_t reserved = 0;    // INSERT slots found
  uint64_t duplicates = 0;  // trusted copies that lose duplicate resolution
  uint64_t corrupt = 0;     // slots that cannot be trusted
  uint64_t cells_in_use = 0;
  // Changes (writing modes only).
  uint64_t slots_cleared = 0;  // reserved slots cleared + corrupt slots dropped
  uint64_t duplicates_removed = 0;
  uint64_t cells_reclaimed = 0;  // cells referenced only by cleared or erased slots
  // Cells referenced by live keys, one bit per cell number (see CellIndex).
  std::vector<uint64_t> cells_used;
  // Sorted by offset; at most max_findings, the rest counted in findings_omitted.
  std::vector<recovery::Finding> findings;
  uint64_t findings_omitted = 0;

  bool HasCorruption() const { return corrupt != 0; }
};

// Read-only scan (verify). threads <= 0: all hardware threads.
SlotScanResult VerifyGphashSlots(const pm::Pool& pool, const GphashView& view, int threads,
                                 const recovery::ProgressFn& progress, size_t max_findings = 1000);

// Scan that fixes what `mode` allows (kRecover or kRepair); every change is
// persisted (pool.Persist / Publish; the caller Syncs).
// REQUIRES: pool writable; no one else uses the table.
SlotScanResult FixGphashSlots(pm::Pool& pool, const GphashView& view, SlotScanMode mode,
                              int threads, const recovery::ProgressFn& progress,
                              size_t max_findings = 1000);

}  // namespace gpkv::gphash
