// The one writer of a logged hash table's bytes (layout.h): creating a table
// (root and log), writing an image, publishing a checkpoint, dropping a
// table. The log's records and commit word are written through the batch log
// (tables/log/). Reading and validating is reader.h.
//
// Who may call: tables/gphash/ and tests.
// Thread safety: none; the caller serialises the writers of one table (the
// catalog lock at create and drop, the table's writer mutex otherwise).
#pragma once

#include <cstdint>
#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/gphash/logged/layout.h"

namespace gpkv::gphash::logged {

// Whether options ask for the logged mode (hash_log.log_batches >= 1).
inline bool IsLogged(const TableOptions& options) { return options.hash_log.log_batches != 0; }

// InvalidArgument, message starting with `where`, unless the logged mode's
// options describe a table this format can hold: batch_entries a power of
// two 2^4..2^24, log_batches 1..1024, a log a commit word can publish.
// REQUIRES: the sizes are checked (tables::CheckTableSizes).
Status CheckOptions(const std::string& where, const TableOptions& options);

// log2 of options.hash_log.batch_entries. REQUIRES: CheckOptions passed.
uint32_t Log2Batch(const TableOptions& options);

// Creates a table: allocates the root and the log (two halves), writes and
// persists the root with an empty checkpoint (generation 1, no image, log
// half 0 of epoch 1), then publishes half 0's log word and the active
// checkpoint. Durable but unlinked. On an error nothing stays allocated.
Result<uint64_t> CreateTable(pm::Pool& pool, uint64_t table_id, const TableOptions& options);

// The pairs an image is written from: `entries` keys ascending in key order
// (layout.h CompareKeys), unique, and their values, in host memory.
struct ImagePairs {
  const uint8_t* keys = nullptr;
  const uint8_t* values = nullptr;
  uint64_t entries = 0;
};
// Reserves the extent of an image of `entries` pairs and returns its offset
// (0 when there are no pairs: no image). Unreferenced until a checkpoint
// names it (the open-time sweep frees it after a crash before that).
// PoolFull when the pool cannot hold it.
Result<uint64_t> ReserveImage(pm::Pool& pool, uint64_t table_id, uint32_t key_size,
                              uint32_t value_size, uint64_t entries);
// Writes the image of `pairs` for the checkpoint of generation `generation`
// into the extent at `offset` (ReserveImage's for pairs.entries) and
// persists it. Touches only that extent: it may run on another thread while
// the table takes batches. REQUIRES: offset != 0.
void WriteImage(pm::Pool& pool, uint64_t offset, uint64_t table_id, uint32_t key_size,
                uint32_t value_size, uint64_t generation, const ImagePairs& pairs, int threads);
// WriteImage's last step, for a writer that put the keys and values into
// the extent itself (from device memory): writes the header of the image of
// `entries` pairs with `data_checksum` (the data words' position-keyed
// checksum, seed ImageSeed(table_id, generation)), zeroes the values'
// padding and the extent's tail, and persists the image.
// REQUIRES: offset != 0; the keys and values in place.
void FinishImage(pm::Pool& pool, uint64_t offset, uint64_t table_id, uint32_t key_size,
                 uint32_t value_size, uint64_t generation, uint64_t entries,
                 uint64_t data_checksum);

// The generation the next checkpoint of the root at root_offset gets.
uint64_t NextGeneration(const pm::Pool& pool, uint64_t root_offset);

// Writes `next` (its generation NextGeneration's) into the checkpoint slot
// that is not active, with its checksum; persists it; then publishes the
// root's active_checkpoint word: the commit of a checkpoint.
// REQUIRES: the caller holds the table's writer mutex; a validated root.
void PublishCheckpoint(pm::Pool& pool, uint64_t root_offset, Checkpoint* next);

// Frees every extent of the table (image, log, root). Corruption when the
// root cannot be trusted. REQUIRES: the table is unlinked and not open.
Status DropTable(pm::Pool& pool, const std::string& table_name, uint64_t root_offset);

}  // namespace gpkv::gphash::logged
