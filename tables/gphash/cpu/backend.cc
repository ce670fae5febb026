#include "tables/gphash/cpu/backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "format/checksum.h"
#include "pm/atomic_word.h"
#include "pm/extent_allocator.h"
#include "tables/gphash/cpu/backend_impl.h"
#include "tables/gphash/reader.h"
#include "tables/gphash/root.h"
#include "tables/gphash/scan.h"
#include "tables/gphash/slot_scan.h"

namespace gpkv::gphash::cpu {
namespace {

const recovery::Finding* FirstCorruption(const gphash::SlotScanResult& scan) {
  for (const recovery::Finding& finding : scan.findings) {
    if (finding.severity == recovery::Finding::Severity::kCorruption) return &finding;
  }
  return nullptr;
}

}  // namespace

// ---- Impl ----

CpuBackend::Impl::Impl(pm::Pool& pool, const gphash::GphashView& view, int threads)
    : pool_(pool),
      base_(pool.base()),
      root_(pool.At<gphash::GphashRoot>(view.root_offset)),
      table_name_(view.table_name),
      root_offset_(view.root_offset),
      table_id_(view.table_id),
      geo_(view.geo),
      cell_words_(view.geo.cell_size / 8),
      threads_(std::max(1, threads)),
      kernels_(SelectKernels(view.geo.slots_per_bucket, view.key_size)),
      heap_(pool, pool.At<gphash::GphashRoot>(view.root_offset), view.table_name),
      core_(pool, view.table_name, view.root_offset, view.table_id, view.geo.bucket_bytes,
            view.levelset, *this) {
  ApplyLevelSet(view.levelset, view.active_word);
}

CpuBackend::Impl::~Impl() {
  if (pool_.read_only()) return;
  DrainLimbo();  // a clean close leaves no tombstones behind
  pool_.Sync().IgnoreError();
}

gphash::Stats CpuBackend::Impl::Stats() const {
  gphash::Stats stats;
  stats.keys = static_cast<uint64_t>(std::max<int64_t>(0, keys_.load()));
  stats.slots = stat_slots_.load();
  stats.load_factor =
      stats.slots == 0 ? 0.0 : static_cast<double>(stats.keys) / static_cast<double>(stats.slots);
  stats.levels = stat_levels_.load();
  stats.top_buckets = stat_top_buckets_.load();
  stats.resizes = pm::LoadRelaxed(&root_->resizes);
  stats.index_bytes = stat_index_bytes_.load();
  stats.value_bytes = geo_.value_cells ? heap_.bytes() : 0;
  stats.resizing = resizing_.load();
  return stats;
}

// The shared host scan (winners only, seqlock reads), under the shared lock
// (no resize meanwhile) and an epoch (no value cell reused meanwhile). The
// visitor must not call into this table.
Status CpuBackend::Impl::Scan(const Table::ScanVisitor& visit) {
  LockShared();
  int ticket = epochs_.Enter();
  Status status = gphash::ScanLivePairs(pool_, root_offset_, levelset_, visit);
  epochs_.Leave(ticket);
  UnlockShared();
  return status;
}

// ---- CpuBackend ----

CpuBackend::CpuBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CpuBackend::~CpuBackend() = default;

// Batches index their operations with 32 bits: larger ones run in parts (each
// part durable before the next starts, so "last occurrence wins" holds).
constexpr size_t kMaxBatchPart = size_t{1} << 30;

Status CpuBackend::Put(const uint8_t* keys, const uint8_t* values, size_t count, void* /*stream*/) {
  for (size_t done = 0; done < count; done += kMaxBatchPart) {
    size_t part = std::min(kMaxBatchPart, count - done);
    GPKV_RETURN_IF_ERROR(impl_->Put(keys + done * impl_->geo_.key_size,
                                    values + done * impl_->geo_.value_size, part));
  }
  return Status::OK();
}
Status CpuBackend::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                       void* /*stream*/) {
  for (size_t done = 0; done < count; done += kMaxBatchPart) {
    size_t part = std::min(kMaxBatchPart, count - done);
    GPKV_RETURN_IF_ERROR(impl_->Get(keys + done * impl_->geo_.key_size,
                                    values + done * impl_->geo_.value_size,
                                    found == nullptr ? nullptr : found + done, part));
  }
  return Status::OK();
}
Status CpuBackend::Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* /*stream*/) {
  for (size_t done = 0; done < count; done += kMaxBatchPart) {
    size_t part = std::min(kMaxBatchPart, count - done);
    GPKV_RETURN_IF_ERROR(impl_->Erase(keys + done * impl_->geo_.key_size,
                                      erased == nullptr ? nullptr : erased + done, part));
  }
  return Status::OK();
}
Status CpuBackend::Scan(const Table::ScanVisitor& visit) const { return impl_->Scan(visit); }
gphash::Stats CpuBackend::Stats() const { return impl_->Stats(); }
uint32_t CpuBackend::key_size() const { return impl_->geo_.key_size; }
uint64_t CpuBackend::TEST_StrayReclaims() const { return impl_->stray_reclaims_.load(); }
uint32_t CpuBackend::value_size() const { return impl_->geo_.value_size; }

Result<uint64_t> CpuBackend::Create(pm::Pool& pool, uint64_t table_id,
                                    const TableOptions& options) {
  return gphash::CreateTable(pool, table_id, options);
}

Result<std::unique_ptr<CpuBackend>> CpuBackend::Open(pm::Pool& pool, const std::string& table_name,
                                                     uint64_t root_offset, int threads,
                                                     recovery::Report* report) {
  auto view = gphash::ReadGphash(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  if (SelectKernels(view->geo.slots_per_bucket, view->key_size) == nullptr) {
    return Status::Unsupported(pool.Where(view->TableRegion() + " root", root_offset) +
                               ": geometry not built into this backend");
  }
  threads = std::max(1, threads);
  const bool writable = !pool.read_only();
  gphash::SlotScanResult scan =
      writable
          ? gphash::FixGphashSlots(pool, *view, gphash::SlotScanMode::kRecover, threads, nullptr)
          : gphash::VerifyGphashSlots(pool, *view, threads, nullptr);
  if (scan.HasCorruption()) {
    const recovery::Finding* first = FirstCorruption(scan);
    std::string message =
        first != nullptr ? first->message : pool.Where(view->TableRegion(), root_offset);
    return Status::Corruption(message + " (" + std::to_string(scan.corrupt) + " slot(s) of " +
                              view->TableRegion() +
                              " cannot be trusted; `gpkv repair` drops them)");
  }
  // A read-only pool keeps what recovery would change, and reads already see
  // the recovered table there: gets and the scan skip INSERT slots and take
  // the winner of a key's copies (the copy recovery keeps), over every level
  // of an interrupted resize (a key is in the bottom level, in an upper one,
  // or in both with the upper copy winning, where finishing the resize leaves
  // it).
  auto impl = std::make_unique<Impl>(pool, *view, threads);
  impl->keys_.store(static_cast<int64_t>(scan.keys));
  if (view->geo.value_cells) impl->heap_.Load(view->chunks, std::move(scan.cells_used));
  if (report != nullptr) {
    report->slots_cleared += scan.slots_cleared;
    report->duplicates_removed += scan.duplicates_removed;
    report->cells_reclaimed += scan.cells_reclaimed;
    for (recovery::Finding& finding : scan.findings) report->findings.push_back(finding);
  }
  if (writable) GPKV_RETURN_IF_ERROR(impl->core_.CompleteRecovery(report));
  return std::unique_ptr<CpuBackend>(new CpuBackend(std::move(impl)));
}

Status CpuBackend::Destroy(pm::Pool& pool, const std::string& table_name, uint64_t root_offset) {
  return gphash::DropTable(pool, table_name, root_offset);
}

}  // namespace gpkv::gphash::cpu
