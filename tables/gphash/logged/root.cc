#include "tables/gphash/logged/root.h"

#include <cstring>

#include "format/checksum.h"
#include "pm/atomic_word.h"
#include "pm/extent_allocator.h"
#include "tables/gphash/logged/reader.h"
#include "tables/log/checksum.h"
#include "tables/log/slots.h"

namespace gpkv::gphash::logged {

Status CheckOptions(const std::string& where, const TableOptions& options) {
  const HashLogOptions& log_options = options.hash_log;
  const uint64_t batch = log_options.batch_entries;
  if (!format::IsPowerOfTwo(batch) || batch < (uint64_t{1} << kMinLog2Batch) ||
      batch > (uint64_t{1} << kMaxLog2Batch)) {
    return Status::InvalidArgument(
        where + ": batch entries " + std::to_string(batch) + " is not a power of two from 2^" +
        std::to_string(kMinLog2Batch) + " to 2^" + std::to_string(kMaxLog2Batch));
  }
  if (log_options.log_batches < 1 || log_options.log_batches > kMaxLogBatches) {
    return Status::InvalidArgument(where + ": log batches " +
                                   std::to_string(log_options.log_batches) +
                                   " is not 0 (in place) or 1.." + std::to_string(kMaxLogBatches));
  }
  const uint64_t log_bytes = LogCapacity(Log2Batch(options), options.key_size, options.value_size,
                                         log_options.log_batches);
  if (log_bytes > log::kMaxHalfBytes) {
    return Status::InvalidArgument(where + ": a log of " + std::to_string(log_options.log_batches) +
                                   " batches of " + std::to_string(batch) + " entries takes " +
                                   std::to_string(log_bytes) + " bytes, over the " +
                                   std::to_string(log::kMaxHalfBytes) + " a log word can publish");
  }
  return Status::OK();
}

uint32_t Log2Batch(const TableOptions& options) {
  uint32_t log2 = 0;
  while ((uint64_t{1} << log2) < options.hash_log.batch_entries) ++log2;
  return log2;
}

Result<uint64_t> CreateTable(pm::Pool& pool, uint64_t table_id, const TableOptions& options) {
  if (pool.read_only()) return Status::InvalidArgument(pool.path() + ": pool is open read-only");
  const uint32_t log2_batch = Log2Batch(options);
  const uint64_t log_capacity =
      LogCapacity(log2_batch, options.key_size, options.value_size, options.hash_log.log_batches);
  auto root_offset =
      pool.allocator().Allocate(kLoggedRootSize, format::kExtentKindTableRoot, table_id);
  if (!root_offset.ok()) return root_offset.status();
  auto log_offset = pool.allocator().AllocateUninitialized(LogExtentBytes(log_capacity),
                                                           format::kExtentKindOther, table_id);
  if (!log_offset.ok()) {
    pool.allocator().Free(*root_offset).IgnoreError();
    return log_offset.status();
  }
  LoggedRoot root{};
  root.magic = kLoggedRootMagic;
  root.table_id = table_id;
  root.key_size = options.key_size;
  root.value_size = options.value_size;
  root.log2_batch = log2_batch;
  root.log_batches = options.hash_log.log_batches;
  root.log_offset = *log_offset;
  root.log_capacity = log_capacity;
  root.expected_keys = options.expected_keys;
  root.checksum = format::Checksum64(&root, offsetof(LoggedRoot, checksum));
  // Half 1's word stays zero (epoch 0: not the epoch after the checkpoint's).
  log::WriteFirstRoot(pool, *root_offset, &root, &LoggedRoot::checkpoints,
                      &LoggedRoot::active_checkpoint);
  Status synced = pool.Sync();
  if (!synced.ok()) {
    pool.allocator().Free(*log_offset).IgnoreError();
    pool.allocator().Free(*root_offset).IgnoreError();
    return synced;
  }
  return *root_offset;
}

Result<uint64_t> ReserveImage(pm::Pool& pool, uint64_t table_id, uint32_t key_size,
                              uint32_t value_size, uint64_t entries) {
  if (entries == 0) return uint64_t{0};
  return pool.allocator().AllocateUninitialized(ImageBytes(entries, key_size, value_size),
                                                format::kExtentKindOther, table_id);
}

void WriteImage(pm::Pool& pool, uint64_t offset, uint64_t table_id, uint32_t key_size,
                uint32_t value_size, uint64_t generation, const ImagePairs& pairs, int threads) {
  const uint64_t seed = ImageSeed(table_id, generation);
  uint64_t words = pairs.entries * key_size / 8;
  uint64_t sum = log::SumTerms(seed, 0, pairs.keys, words, threads);
  sum += log::SumPaddedTerms(seed, &words, pairs.values, pairs.entries * value_size, threads);
  uint8_t* image = pool.At<uint8_t>(offset);
  std::memcpy(image + kImageHeaderSize, pairs.keys, pairs.entries * key_size);
  std::memcpy(image + ImageValuesOffset(pairs.entries, key_size), pairs.values,
              pairs.entries * value_size);
  FinishImage(pool, offset, table_id, key_size, value_size, generation, pairs.entries,
              log::ChecksumFinish(seed, words, sum));
}

void FinishImage(pm::Pool& pool, uint64_t offset, uint64_t table_id, uint32_t key_size,
                 uint32_t value_size, uint64_t generation, uint64_t entries,
                 uint64_t data_checksum) {
  const uint64_t bytes = ImageBytes(entries, key_size, value_size);
  ImageHeader header{};
  header.magic = kImageMagic;
  header.table_id = table_id;
  header.entries = entries;
  header.key_size = key_size;
  header.value_size = value_size;
  header.generation = generation;
  header.data_checksum = data_checksum;
  header.checksum = format::Checksum64(&header, offsetof(ImageHeader, checksum));
  uint8_t* image = pool.At<uint8_t>(offset);
  std::memcpy(image, &header, sizeof(header));
  // The padding and the extent's tail: the same bytes whoever wrote the
  // extent before.
  const uint64_t values_end = ImageValuesOffset(entries, key_size) + entries * value_size;
  const uint64_t extent_bytes = format::AlignUp(bytes, format::kExtentAlignment);
  std::memset(image + values_end, 0, extent_bytes - values_end);
  pool.Persist(image, bytes);
}

uint64_t NextGeneration(const pm::Pool& pool, uint64_t root_offset) {
  const auto* root = pool.At<LoggedRoot>(root_offset);
  return log::ActiveGeneration(pm::LoadAcquire(&root->active_checkpoint)) + 1;
}

void PublishCheckpoint(pm::Pool& pool, uint64_t root_offset, Checkpoint* next) {
  auto* root = pool.At<LoggedRoot>(root_offset);
  log::PublishSlot(pool, &root->active_checkpoint, root->checkpoints, next);
}

Status DropTable(pm::Pool& pool, const std::string& table_name, uint64_t root_offset) {
  auto view = ReadLoggedRoot(pool, table_name, root_offset, /*require_allocated=*/false);
  if (!view.ok()) return view.status();
  if (view->checkpoint.image_offset != 0) {
    GPKV_RETURN_IF_ERROR(pool.allocator().Free(view->checkpoint.image_offset));
  }
  GPKV_RETURN_IF_ERROR(pool.allocator().Free(view->log_offset));
  GPKV_RETURN_IF_ERROR(pool.allocator().Free(root_offset));
  return pool.Sync();
}

}  // namespace gpkv::gphash::logged
