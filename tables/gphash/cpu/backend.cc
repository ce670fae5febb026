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
#include "tables/gphash/slot_scan.h"

namespace gpkv::cpu {
namespace {

constexpr uint64_t kMinTopBuckets = 16;
constexpr uint64_t kMaxInitialTopBuckets = uint64_t{1} << 40;
constexpr double kTargetLoad = 0.9;

bool IsPowerOfTwo(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

Status CheckOptions(const pm::Pool& pool, uint64_t table_id, const TableOptions& options) {
  const std::string where = pool.path() + ": table id " + std::to_string(table_id) + ": ";
  const HashGeometry& geometry = options.hash;
  if (options.key_size != 8 && options.key_size != 16 && options.key_size != 32) {
    return Status::InvalidArgument(where + "key size " + std::to_string(options.key_size) +
                                   " is not 8, 16 or 32");
  }
  if (options.value_size < 1 || options.value_size > 128) {
    return Status::InvalidArgument(where + "value size " + std::to_string(options.value_size) +
                                   " is not 1..128");
  }
  if (geometry.levels < 1 || geometry.levels > 4 || geometry.hash_locations < 1 ||
      geometry.hash_locations > 4 ||
      (geometry.slots_per_bucket != 4 && geometry.slots_per_bucket != 8 &&
       geometry.slots_per_bucket != 16)) {
    return Status::InvalidArgument(
        where + "geometry " + std::to_string(geometry.levels) + "L-" +
        std::to_string(geometry.hash_locations) + "H-" + std::to_string(geometry.slots_per_bucket) +
        "S is not supported (levels 1..4, hash locations 1..4, slots 4, 8 or 16)");
  }
  if (geometry.initial_top_buckets != 0 &&
      (!IsPowerOfTwo(geometry.initial_top_buckets) ||
       geometry.initial_top_buckets < (uint64_t{1} << (geometry.levels - 1)) ||
       geometry.initial_top_buckets > kMaxInitialTopBuckets)) {
    return Status::InvalidArgument(where + "initial top buckets " +
                                   std::to_string(geometry.initial_top_buckets) +
                                   " is not a power of two of at least 2^(levels-1)");
  }
  return Status::OK();
}

// Smallest power of two of top buckets that holds expected_keys at 90% load.
uint64_t TopBucketsFor(const TableOptions& options) {
  const HashGeometry& geometry = options.hash;
  if (geometry.initial_top_buckets != 0) return geometry.initial_top_buckets;
  double per_top_bucket = 0;
  for (uint32_t i = 0; i < geometry.levels; ++i) {
    per_top_bucket += geometry.slots_per_bucket * std::ldexp(1.0, -static_cast<int>(i));
  }
  double wanted = static_cast<double>(options.expected_keys) / (per_top_bucket * kTargetLoad);
  uint64_t top = std::max<uint64_t>(kMinTopBuckets, uint64_t{1} << (geometry.levels - 1));
  while (static_cast<double>(top) < wanted && top < kMaxInitialTopBuckets) top *= 2;
  return top;
}

// Extents allocated by Create, freed again if it fails half way.
class CreateGuard {
 public:
  explicit CreateGuard(pm::Pool& pool) : pool_(pool) {}
  ~CreateGuard() {
    if (committed_) return;
    for (uint64_t offset : extents_) pool_.allocator().Free(offset).IgnoreError();
  }
  Result<uint64_t> Allocate(uint64_t bytes, format::ExtentKind kind, uint64_t table_id) {
    auto offset = pool_.allocator().Allocate(bytes, kind, table_id);
    if (offset.ok()) extents_.push_back(*offset);
    return offset;
  }
  void Commit() { committed_ = true; }

 private:
  pm::Pool& pool_;
  std::vector<uint64_t> extents_;
  bool committed_ = false;
};

const recovery::Finding* FirstCorruption(const recovery::SlotScanResult& scan) {
  for (const recovery::Finding& finding : scan.findings) {
    if (finding.severity == recovery::Finding::Severity::kCorruption) return &finding;
  }
  return nullptr;
}

}  // namespace

// ---- Impl ----

Gphash::Impl::Impl(pm::Pool& pool, const recovery::GphashView& view, int threads)
    : pool_(pool),
      base_(pool.base()),
      root_(pool.At<format::GphashRoot>(view.root_offset)),
      table_name_(view.table_name),
      root_offset_(view.root_offset),
      table_id_(view.table_id),
      key_size_(view.key_size),
      value_size_(view.value_size),
      slots_per_bucket_(view.slots_per_bucket),
      hash_locations_(view.hash_locations),
      bucket_bytes_(view.bucket_bytes),
      cell_size_(view.cell_size),
      cell_words_(view.cell_size / 8),
      cells_(view.value_cells()),
      hash_seed_(view.hash_seed),
      threads_(std::max(1, threads)),
      kernels_(SelectKernels(view.slots_per_bucket, view.key_size)),
      heap_(pool, pool.At<format::GphashRoot>(view.root_offset), view.table_name) {
  ApplyLevelSet(view.levelset);
}

Gphash::Impl::~Impl() {
  if (pool_.read_only()) return;
  DrainLimbo();  // a clean close leaves no tombstones behind
  pool_.Sync().IgnoreError();
}

TableStats Gphash::Impl::Stats() const {
  TableStats stats;
  stats.keys = static_cast<uint64_t>(std::max<int64_t>(0, keys_.load()));
  stats.slots = stat_slots_.load();
  stats.load_factor =
      stats.slots == 0 ? 0.0 : static_cast<double>(stats.keys) / static_cast<double>(stats.slots);
  stats.levels = stat_levels_.load();
  stats.top_buckets = stat_top_buckets_.load();
  stats.resizes = pm::LoadRelaxed(&root_->resizes);
  stats.index_bytes = stat_index_bytes_.load();
  stats.value_bytes = cells_ ? heap_.bytes() : 0;
  stats.resizing = resizing_.load();
  return stats;
}

// Visits winners only, each read with the slot-word seqlock. The visitor runs
// under the shared lock: it must not call into this table.
Status Gphash::Impl::Scan(const Table::ScanVisitor& visit) {
  LockShared();
  int ticket = epochs_.Enter();
  alignas(8) uint8_t key[32];
  alignas(8) uint8_t value[136];
  bool going = true;
  for (uint32_t level = 0; level < level_count_ && going; ++level) {
    for (uint64_t index = 0; index < levels_[level].bucket_count && going; ++index) {
      uint8_t* bucket = Bucket(level, index);
      for (uint32_t slot = 0; slot < slots_per_bucket_ && going; ++slot) {
        bool stable = false;
        uint64_t value_word = 0;
        for (;;) {
          uint64_t before = pm::LoadAcquire(SlotWord(bucket, slot));
          if (format::SlotStateOf(before) != format::kSlotValid) break;
          pm::CopyWordsOut(key, SlotKey(bucket, slot), key_size_ / 8);
          value_word = pm::LoadRelaxed(SlotValue(bucket, slot));
          if (cells_ && value_word <= pool_.size() - cell_size_) {
            pm::CopyWordsOut(value, base_ + value_word, cell_words_);
          }
          pm::LoadFence();
          if (pm::LoadRelaxed(SlotWord(bucket, slot)) == before) {
            stable = true;
            break;
          }
        }
        if (!stable) continue;
        SlotCopy copies[8];
        if (FindCopies(key, Hash(key), copies, 8) == 0 || copies[0].bucket != bucket ||
            copies[0].slot != slot) {
          continue;  // erased meanwhile, or a duplicate the winner stands for
        }
        if (!cells_) std::memcpy(value, &value_word, sizeof(value_word));
        going = visit(key, value);
      }
    }
  }
  epochs_.Leave(ticket);
  UnlockShared();
  return Status::OK();
}

// ---- Gphash ----

Gphash::Gphash(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Gphash::~Gphash() = default;

// Batches index their operations with 32 bits: larger ones run in parts (each
// part durable before the next starts, so "last occurrence wins" holds).
constexpr size_t kMaxBatchPart = size_t{1} << 30;

Status Gphash::Put(const uint8_t* keys, const uint8_t* values, size_t count) {
  for (size_t done = 0; done < count; done += kMaxBatchPart) {
    size_t part = std::min(kMaxBatchPart, count - done);
    GPKV_RETURN_IF_ERROR(
        impl_->Put(keys + done * impl_->key_size_, values + done * impl_->value_size_, part));
  }
  return Status::OK();
}
Status Gphash::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count) {
  for (size_t done = 0; done < count; done += kMaxBatchPart) {
    size_t part = std::min(kMaxBatchPart, count - done);
    GPKV_RETURN_IF_ERROR(impl_->Get(keys + done * impl_->key_size_,
                                    values + done * impl_->value_size_,
                                    found == nullptr ? nullptr : found + done, part));
  }
  return Status::OK();
}
Status Gphash::Erase(const uint8_t* keys, uint8_t* erased, size_t count) {
  for (size_t done = 0; done < count; done += kMaxBatchPart) {
    size_t part = std::min(kMaxBatchPart, count - done);
    GPKV_RETURN_IF_ERROR(impl_->Erase(keys + done * impl_->key_size_,
                                      erased == nullptr ? nullptr : erased + done, part));
  }
  return Status::OK();
}
Status Gphash::Scan(const Table::ScanVisitor& visit) const { return impl_->Scan(visit); }
TableStats Gphash::Stats() const { return impl_->Stats(); }
uint32_t Gphash::key_size() const { return impl_->key_size_; }
uint64_t Gphash::TEST_StrayReclaims() const { return impl_->stray_reclaims_.load(); }
uint32_t Gphash::value_size() const { return impl_->value_size_; }

Result<uint64_t> Gphash::Create(pm::Pool& pool, uint64_t table_id, const TableOptions& options) {
  if (pool.read_only()) return Status::InvalidArgument(pool.path() + ": pool is open read-only");
  GPKV_RETURN_IF_ERROR(CheckOptions(pool, table_id, options));
  const HashGeometry& geometry = options.hash;
  const uint64_t top = TopBucketsFor(options);
  const uint32_t bucket_bytes = format::BucketBytes(geometry.slots_per_bucket, options.key_size);
  const bool cells = options.value_size > 8;

  CreateGuard guard(pool);
  auto root_offset =
      guard.Allocate(format::kGphashRootSize, format::kExtentKindTableRoot, table_id);
  if (!root_offset.ok()) return root_offset.status();
  format::LevelSet set{};
  set.level_count = geometry.levels;
  set.generation = 1;
  set.next_level_id = geometry.levels;
  for (uint32_t i = 0; i < geometry.levels; ++i) {
    uint64_t buckets = top >> i;
    auto level = guard.Allocate(buckets * bucket_bytes, format::kExtentKindBucketLevel, table_id);
    if (!level.ok()) return level.status();
    set.levels[i] = {*level, buckets, geometry.levels - 1 - i};
  }
  set.checksum = format::Checksum64(&set, offsetof(format::LevelSet, checksum));

  auto* root = pool.At<format::GphashRoot>(*root_offset);
  root->magic = format::kGphashRootMagic;
  root->table_id = table_id;
  root->key_size = options.key_size;
  root->value_size = options.value_size;
  root->levels = geometry.levels;
  root->hash_locations = geometry.hash_locations;
  root->slots_per_bucket = geometry.slots_per_bucket;
  root->value_mode = cells ? format::kValueCells : format::kValueInline;
  root->bucket_bytes = bucket_bytes;
  std::random_device random;
  root->hash_seed = (uint64_t{random()} << 32) ^ random();
  if (cells) {
    root->cell_size = format::CellSizeFor(options.value_size);
    root->cells_per_chunk =
        std::clamp<uint64_t>(options.expected_keys / 4, 4096, uint64_t{1} << 22);
    auto chunk = guard.Allocate(root->cells_per_chunk * root->cell_size,
                                format::kExtentKindValueChunk, table_id);
    if (!chunk.ok()) return chunk.status();
    root->value_chunks[0] = *chunk;
  }
  root->checksum = format::Checksum64(root, offsetof(format::GphashRoot, checksum));
  root->levelsets[0] = set;
  pool.Persist(root, sizeof(format::GphashRoot));
  pool.Publish(&root->active_levelset, format::MakeActiveLevelSetWord(1, 0));
  if (cells) pool.Publish(&root->value_chunk_count, 1);
  GPKV_RETURN_IF_ERROR(pool.Sync());
  guard.Commit();
  return *root_offset;
}

Result<std::unique_ptr<Gphash>> Gphash::Open(pm::Pool& pool, const std::string& table_name,
                                             uint64_t root_offset, int threads,
                                             recovery::Report* report) {
  auto view = recovery::ReadGphash(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  if (SelectKernels(view->slots_per_bucket, view->key_size) == nullptr) {
    return Status::Unsupported(pool.Where(view->TableRegion() + " root", root_offset) +
                               ": geometry not built into this backend");
  }
  threads = std::max(1, threads);
  const bool writable = !pool.read_only();
  recovery::SlotScanResult scan =
      writable ? recovery::FixGphashSlots(pool, *view, recovery::SlotScanMode::kRecover, threads,
                                          nullptr)
               : recovery::VerifyGphashSlots(pool, *view, threads, nullptr);
  if (scan.HasCorruption()) {
    const recovery::Finding* first = FirstCorruption(scan);
    std::string message =
        first != nullptr ? first->message : pool.Where(view->TableRegion(), root_offset);
    return Status::Corruption(message + " (" + std::to_string(scan.corrupt) + " slot(s) of " +
                              view->TableRegion() +
                              " cannot be trusted; `gpkv repair` drops them)");
  }
  if (!writable && (scan.reserved != 0 || scan.duplicates != 0 || view->resizing)) {
    return Status::Corruption(
        pool.Where(view->TableRegion() + " root", root_offset) + ": needs recovery (" +
        std::to_string(scan.reserved) + " reserved slots, " + std::to_string(scan.duplicates) +
        " duplicates" + (view->resizing ? ", an interrupted resize" : "") +
        "), which a read-only open cannot write; open the pool writable once");
  }
  auto impl = std::make_unique<Impl>(pool, *view, threads);
  impl->keys_.store(static_cast<int64_t>(scan.keys));
  if (view->value_cells()) impl->heap_.Load(view->chunks, std::move(scan.cells_used));
  if (report != nullptr) {
    report->slots_cleared += scan.slots_cleared;
    report->duplicates_removed += scan.duplicates_removed;
    report->cells_reclaimed += scan.cells_reclaimed;
    for (recovery::Finding& finding : scan.findings) report->findings.push_back(finding);
  }
  if (writable && view->resizing) {
    GPKV_RETURN_IF_ERROR(impl->FinishResize());
    if (report != nullptr) {
      std::string region = view->TableRegion() + " root";
      report->findings.push_back(
          {recovery::Finding::Severity::kInfo, region, root_offset,
           pool.Where(region, root_offset) + ": resize in progress, resumed at open"});
    }
  }
  if (writable) GPKV_RETURN_IF_ERROR(pool.Sync());
  return std::unique_ptr<Gphash>(new Gphash(std::move(impl)));
}

Status Gphash::Destroy(pm::Pool& pool, const std::string& table_name, uint64_t root_offset) {
  auto view = recovery::ReadGphash(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  Status first;
  auto free_extent = [&](uint64_t offset) {
    Status status = pool.allocator().Free(offset);
    if (first.ok() && !status.ok()) first = status;
  };
  for (const recovery::GphashLevel& level : view->levels) free_extent(level.offset);
  for (uint64_t chunk : view->chunks) free_extent(chunk);
  free_extent(root_offset);
  GPKV_RETURN_IF_ERROR(first);
  return pool.Sync();
}

}  // namespace gpkv::cpu
