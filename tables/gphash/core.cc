#include "tables/gphash/core.h"

#include "pm/atomic_word.h"
#include "pm/extent_allocator.h"
#include "tables/gphash/root.h"

namespace gpkv::gphash {

Core::Core(pm::Pool& pool, const std::string& table_name, uint64_t root_offset, uint64_t table_id,
           uint32_t bucket_bytes, const gphash::LevelSet& levelset, GrowthBackend& backend)
    : pool_(pool),
      table_name_(table_name),
      root_offset_(root_offset),
      table_id_(table_id),
      bucket_bytes_(bucket_bytes),
      backend_(backend),
      levelset_(levelset) {}

std::string Core::RootWhere() const {
  return pool_.Where("table '" + table_name_ + "' root", root_offset_);
}

void Core::Publish(gphash::LevelSet next) {
  const uint64_t word = gphash::PublishLevelSet(pool_, root_offset_, &next);
  levelset_ = next;
  backend_.ApplyLevelSet(levelset_, word);
}

Status Core::Grow() {
  if (resizing()) return FinishGrowth();
  GPKV_RETURN_IF_ERROR(gphash::CheckGrowth(RootWhere(), levelset_));
  const uint64_t buckets = gphash::GrownTopBuckets(levelset_);
  auto offset = pool_.allocator().Allocate(buckets * bucket_bytes_, format::kExtentKindBucketLevel,
                                           table_id_);
  if (!offset.ok()) return offset.status();
  const Status prepared = backend_.PrepareTopLevel(*offset, buckets);
  if (!prepared.ok()) {
    pool_.allocator().Free(*offset).IgnoreError();
    return prepared;
  }
  Publish(gphash::GrownLevelSet(levelset_, *offset));
  return FinishGrowth();
}

Status Core::FinishGrowth() {
  auto stayed = backend_.MoveBottomLevel();
  if (!stayed.ok()) return stayed.status();
  const bool drop_bottom = *stayed == 0;
  const gphash::LevelDesc bottom = levelset_.levels[levelset_.level_count - 1];
  Publish(gphash::FinishedLevelSet(levelset_, drop_bottom));
  auto* root = pool_.At<gphash::GphashRoot>(root_offset_);
  pool_.Publish(&root->resizes, pm::LoadRelaxed(&root->resizes) + 1);
  if (!drop_bottom) return Status::OK();
  backend_.DropBottomLevel();
  return pool_.allocator().Free(bottom.offset);
}

Status Core::PlaceFailedPuts(uint64_t failed, PlacementSteps& steps) {
  int resizes = 0;
  int kick_rounds = 0;
  while (failed > 0) {
    bool made_room = false;
    if (failed <= kMaxKickOps && kick_rounds < kMaxKickRounds) {
      ++kick_rounds;
      auto kicked = steps.Kick();
      if (!kicked.ok()) return kicked.status();
      made_room = *kicked;
    }
    if (!made_room) {
      if (resizes == kMaxResizesPerBatch) {
        return Status::PoolFull(RootWhere() + ": " + std::to_string(failed) +
                                " puts found no free slot after " +
                                std::to_string(kMaxResizesPerBatch) + " resizes");
      }
      ++resizes;
      kick_rounds = 0;
      GPKV_RETURN_IF_ERROR(steps.Resize());
    }
    auto still_failed = steps.Retry();
    if (!still_failed.ok()) return still_failed.status();
    failed = *still_failed;
  }
  return Status::OK();
}

Status Core::CheckRecoverable(const SlotRecovery& found) const {
  if (!pool_.read_only()) return Status::OK();
  if (found.reserved == 0 && found.duplicates == 0 && !resizing()) return Status::OK();
  return Status::NeedsRecovery(
      RootWhere() + ": needs recovery (" + std::to_string(found.reserved) + " reserved slots, " +
      std::to_string(found.duplicates) + " duplicates" +
      (resizing() ? ", an interrupted resize" : "") +
      "), which a read-only open cannot write; open the pool writable once");
}

Status Core::CompleteRecovery(recovery::Report* report) {
  if (resizing()) {
    GPKV_RETURN_IF_ERROR(FinishGrowth());
    if (report != nullptr) {
      const std::string region = "table '" + table_name_ + "' root";
      report->findings.push_back({recovery::Finding::Severity::kInfo, region, root_offset_,
                                  RootWhere() + ": resize in progress, resumed at open"});
    }
  }
  return pool_.Sync();
}

}  // namespace gpkv::gphash
