// gphash::Core: the growth (resize) protocol of a GPHash table and the
// decisions of its open-time recovery, written once for both backends
// (layout.h describes the protocol). The backend (cpu::CpuBackend,
// gpu::GpuBackend) supplies the primitives through gphash::GrowthBackend
// (backend.h): getting a new top level ready beside the pool, running on a
// published LevelSet, moving the bottom level's keys up, letting go of a
// dropped bottom level. The core owns every pool write of a resize:
//   - the new top level's extent (Allocate), freed again when the backend
//     cannot take it;
//   - the LevelSet with the new top and kLevelSetResizing, then, once the
//     bottom level's keys have moved, the LevelSet without the flag: without
//     the bottom level when it is empty, with it (one more level; the table
//     goes on) when some key could not move;
//   - root.resizes, then the free of the dropped bottom level (unreachable
//     once the finished LevelSet is published: a crash before the free
//     leaves it to the open-time sweep of unreachable extents).
// The write path's decision for puts that found no free candidate slot is the
// core's too (PlaceFailedPuts): kicks first, a resize when they make no room.
// At open, after the backend's slot pass (INSERT slots cleared, duplicates
// resolved), the core decides: on the GPU backend a read-only open that would
// have to write is NeedsRecovery (the engine then opens the table on the CPU
// backend, whose reads answer as the recovered table would without writing);
// an interrupted resize is finished; the pool is synced.
//
// Who may call: tables/gphash/ (the backends) and tests.
// Thread safety: none. The caller holds its table exclusively (no batch in
// flight) for every call, or runs it at open before the table is shared.
#pragma once

#include <cstdint>
#include <string>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/backend.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash {

// What a backend's open-time slot pass found: on a writable pool it has
// already cleared and erased them, on a read-only pool it only counted them.
struct SlotRecovery {
  uint64_t reserved = 0;    // INSERT slots
  uint64_t duplicates = 0;  // VALID copies that lose to another copy of their key
};

class Core {
 public:
  // Placement of failed puts (PlaceFailedPuts): kicks run only for at most
  // kMaxKickOps failed puts (the GPU kicks with one warp: kicks are how a
  // nearly full table fills up, not how a batch finds room), at most
  // kMaxKickRounds times between two resizes, so that a table fills to the
  // load factor the kicks reach; a batch gives up after kMaxResizesPerBatch
  // resizes (each doubles the top level: a pool runs out of space long
  // before).
  static constexpr uint64_t kMaxKickOps = 8192;
  static constexpr int kMaxKickRounds = 8;
  static constexpr int kMaxResizesPerBatch = 40;

  // A table whose root at root_offset was validated (reader.h) and selects
  // `levelset`. `table_name` names it in messages.
  Core(pm::Pool& pool, const std::string& table_name, uint64_t root_offset, uint64_t table_id,
       uint32_t bucket_bytes, const gphash::LevelSet& levelset, GrowthBackend& backend);
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  // Grows the table by a top level of twice the buckets and moves the bottom
  // level up (FinishGrowth); a resize already in progress is only finished.
  // PoolFull when the LevelSet cannot grow (gphash::CheckGrowth) or the pool
  // has no room for the new level; the backend's error when it cannot take
  // the level (nothing is published then).
  Status Grow();

  // Finishes the resize the current LevelSet records (kLevelSetResizing):
  // the bottom level's keys move up; the LevelSet without the flag is
  // published, without the bottom level if every key moved and with it
  // otherwise; root.resizes counts the resize; an emptied bottom is freed.
  Status FinishGrowth();

  // Places `failed` puts of a write batch that found no free slot (they ran
  // once): a kick round while they are few and the rounds since the last
  // resize fewer than kMaxKickRounds, a resize when the kicks move no key,
  // then a retry, until none fails. PoolFull, naming the root, after
  // kMaxResizesPerBatch resizes; the steps' errors as they come.
  Status PlaceFailedPuts(uint64_t failed, PlacementSteps& steps);

  // Open-time recovery on the GPU backend, after its slot pass found `found`:
  // NeedsRecovery, naming the root, when the pool is read-only and anything
  // (a reserved slot, a duplicate, an interrupted resize) needs a write.
  Status CheckRecoverable(const SlotRecovery& found) const;
  // Open-time recovery's last steps on a writable pool: an interrupted
  // resize finished (an info finding in `report`, optional, says so), the
  // pool synced. REQUIRES: CheckRecoverable passed; the pool is writable.
  Status CompleteRecovery(recovery::Report* report);

  // The published LevelSet the backend runs on.
  const gphash::LevelSet& levelset() const { return levelset_; }
  bool resizing() const { return (levelset_.flags & gphash::kLevelSetResizing) != 0; }

 private:
  // Publishes `next` (gphash::PublishLevelSet) and has the backend run on it.
  void Publish(gphash::LevelSet next);
  // "<file>: table '<name>' root (offset 0x..)", where messages point.
  std::string RootWhere() const;

  pm::Pool& pool_;
  const std::string table_name_;
  const uint64_t root_offset_;
  const uint64_t table_id_;
  const uint32_t bucket_bytes_;
  GrowthBackend& backend_;
  gphash::LevelSet levelset_;
};

}  // namespace gpkv::gphash
