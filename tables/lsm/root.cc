#include "tables/lsm/root.h"

#include <cstring>

#include "format/checksum.h"
#include "pm/atomic_word.h"
#include "pm/extent_allocator.h"
#include "tables/log/slots.h"
#include "tables/lsm/reader.h"
#include "tables/lsm/run.h"
#include "tables/table_options.h"

namespace gpkv::lsm {

Status CheckOptions(const std::string& where, const TableOptions& options) {
  GPKV_RETURN_IF_ERROR(tables::CheckTableSizes(where, options));
  GPKV_RETURN_IF_ERROR(tables::CheckNoHashLog(where, options));
  const uint64_t batch = options.ordered.batch_entries;
  if (!format::IsPowerOfTwo(batch) || batch < (uint64_t{1} << kMinLog2Batch) ||
      batch > (uint64_t{1} << kMaxLog2Batch)) {
    return Status::InvalidArgument(
        where + ": batch entries " + std::to_string(batch) + " is not a power of two from 2^" +
        std::to_string(kMinLog2Batch) + " to 2^" + std::to_string(kMaxLog2Batch));
  }
  const uint32_t log_batches = options.ordered.log_batches;
  if (log_batches < 1 || log_batches > kMaxLogBatches) {
    return Status::InvalidArgument(where + ": log batches " + std::to_string(log_batches) +
                                   " is not 1.." + std::to_string(kMaxLogBatches));
  }
  const uint64_t log_bytes =
      LogCapacity(Log2Batch(options), options.key_size, options.value_size, log_batches);
  if (log_bytes > log::kMaxHalfBytes) {
    return Status::InvalidArgument(where + ": a log of " + std::to_string(log_batches) +
                                   " batches of " + std::to_string(batch) + " entries takes " +
                                   std::to_string(log_bytes) + " bytes, over the " +
                                   std::to_string(log::kMaxHalfBytes) + " a log word can publish");
  }
  if (options.ordered.max_dead_percent < 1 || options.ordered.max_dead_percent > 100) {
    return Status::InvalidArgument(where + ": max dead percent " +
                                   std::to_string(options.ordered.max_dead_percent) +
                                   " is not 1..100");
  }
  return Status::OK();
}

uint32_t Log2Batch(const TableOptions& options) {
  uint32_t log2 = 0;
  while ((uint64_t{1} << log2) < options.ordered.batch_entries) ++log2;
  return log2;
}

Result<uint64_t> CreateTable(pm::Pool& pool, uint64_t table_id, const TableOptions& options) {
  if (pool.read_only()) return Status::InvalidArgument(pool.path() + ": pool is open read-only");
  GPKV_RETURN_IF_ERROR(
      CheckOptions(pool.path() + ": table id " + std::to_string(table_id), options));
  const uint32_t log2_batch = Log2Batch(options);
  const uint64_t flags = RootFlagsFor(options.ordered.log_batches);
  const uint64_t log_capacity = LogExtentBytes(log2_batch, options.key_size, options.value_size,
                                               options.ordered.log_batches, flags);
  auto root_offset =
      pool.allocator().Allocate(kLsmRootSize, format::kExtentKindTableRoot, table_id);
  if (!root_offset.ok()) return root_offset.status();
  auto log_offset = pool.allocator().Allocate(log_capacity, format::kExtentKindOther, table_id);
  if (!log_offset.ok()) {
    pool.allocator().Free(*root_offset).IgnoreError();
    return log_offset.status();
  }
  LsmRoot root{};
  root.magic = kLsmRootMagic;
  root.table_id = table_id;
  root.key_size = options.key_size;
  root.value_size = options.value_size;
  root.log2_batch = log2_batch;
  root.log_batches = options.ordered.log_batches;
  root.log_offset = *log_offset;
  root.log_capacity = log_capacity;
  root.flags = flags;
  root.checksum = format::Checksum64(&root, offsetof(LsmRoot, checksum));
  log::WriteFirstRoot(pool, *root_offset, &root, &LsmRoot::manifests, &LsmRoot::active_manifest);
  Status synced = pool.Sync();
  if (!synced.ok()) {
    pool.allocator().Free(*log_offset).IgnoreError();
    pool.allocator().Free(*root_offset).IgnoreError();
    return synced;
  }
  return *root_offset;
}

void PublishManifest(pm::Pool& pool, uint64_t root_offset, Manifest* next) {
  auto* root = pool.At<LsmRoot>(root_offset);
  SetLevelCount(next);
  log::PublishSlot(pool, &root->active_manifest, root->manifests, next);
}

Status DropTable(pm::Pool& pool, const std::string& table_name, uint64_t root_offset) {
  auto view = ReadLsmRoot(pool, table_name, root_offset);
  if (!view.ok()) return view.status();
  std::vector<uint64_t> extents;
  for (const RunRef& run : view->manifest.levels) {
    if (run.offset != 0) extents.push_back(run.offset);
  }
  extents.push_back(view->log_offset);
  extents.push_back(root_offset);
  GPKV_RETURN_IF_ERROR(FreeRuns(pool, extents));
  return pool.Sync();
}

}  // namespace gpkv::lsm
