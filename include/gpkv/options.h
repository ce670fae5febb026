// Options of a DB (one pool file) and of its tables. Plain structs: every
// field has a default and a comment. Options are read at Open / CreateTable;
// changing a struct afterwards has no effect on an open DB or table.
#pragma once

#include <cstdint>
#include <functional>

#include "gpkv/status.h"

namespace gpkv {

// Where batches run. kAuto picks CUDA when a usable device is present and the
// library was built with CUDA, else the CPU.
enum class Backend : uint8_t { kAuto = 0, kCpu = 1, kCuda = 2 };

// What a table can do. kHash: get / put / erase. kOrdered: also range, count,
// successor. Stored in the catalog (values are part of the file format).
enum class TableKind : uint8_t { kHash = 1, kOrdered = 2 };

// Whether a table's contents live in the pool (kPersistent) or in GPU memory /
// RAM and die with the process (kVolatile: declared in the catalog only).
enum class Durability : uint8_t { kPersistent = 1, kVolatile = 2 };

// When the pool is made durable.
//  kBatch:  persist points order the stores (cache-line flush on a pmem
//           mapping); one msync of the pool at the end of each write batch on
//           a page-granular mapping (tmpfs, ext4). A process kill never loses
//           an acknowledged operation or tears one; on a page-granular file a
//           power failure during a batch may tear operations of that batch.
//  kStrict: every persist point is made durable before the next store (msync
//           per point on a page-granular mapping): per-operation atomicity
//           against power failure on any file, at a large cost in speed.
enum class SyncMode : uint8_t { kBatch = 0, kStrict = 1 };

// Tuning of the CUDA backend of ordered tables (TableKind::kOrdered,
// persistent). The defaults are the measured best choices on an H100; the
// other values exist to measure them again.
struct OrderedGpuOptions {
  // A checkpoint's run is copied from GPU memory to the pool behind the next
  // write batches in slices of this many MiB, one in flight at a time, so
  // that the batches' log records share the link instead of queuing behind
  // the whole run; 0 = the whole run in one copy.
  uint64_t checkpoint_chunk_mb = 16;
  // Runs in GPU memory come from the device's stream-ordered memory pool
  // (cudaMallocAsync; freeing a replaced run does not wait for the device);
  // false = cudaMalloc / cudaFree per run.
  bool pooled_runs = true;
  // The pool mapping is registered with CUDA (pinned) on a thread started at
  // open; a run written to the pool before that is done goes through
  // pageable memory. true = such a write waits for the registration instead.
  bool wait_for_registration = false;
  // At open, this many times the write buffer's bytes (M * b entries; at most
  // a quarter of the free device memory) are reserved in the stream-ordered
  // memory pool, so that the buffer's merges and checkpoints do not map new
  // memory as they grow; 0 = no reserve.
  uint32_t reserve_buffers = 4;
};

struct Options {
  // Create the pool file when it does not exist.
  bool create_if_missing = false;
  // Fail with AlreadyExists when the pool file exists.
  bool error_if_exists = false;
  // Size of a new pool file in bytes. An existing pool keeps its size unless
  // grow_if_smaller is set.
  uint64_t pool_size = uint64_t{1} << 30;
  // Grow an existing pool smaller than pool_size to pool_size (rounded up to
  // 4 KiB) at open: after the pool-level recovery and before any table opens,
  // the file is extended and a new superblock publishes the size (a crash
  // leaves the old size or the new one). A larger pool never shrinks. The
  // extent table keeps the capacity it got at create. InvalidArgument with
  // read_only when the pool would have to grow; PoolFull when the file system
  // has no room.
  bool grow_if_smaller = false;
  // Open the pool read-only: the file is mapped read-only and nothing is
  // written to it, not even by open-time recovery; every write fails with
  // InvalidArgument. What recovery can do in memory it does there (an
  // ordered table's log is replayed into memory); a table whose recovery
  // would have to write (a hash table a crash left with reserved slots,
  // duplicate keys or an interrupted resize) opens with NeedsRecovery from
  // OpenTable, the other tables work. Unreferenced extents are left for the
  // next writable open.
  bool read_only = false;
  // Which backend runs batches.
  Backend backend = Backend::kAuto;
  // CPU backend worker threads per batch; 0 = all hardware threads.
  int cpu_threads = 0;
  // See SyncMode.
  SyncMode sync_mode = SyncMode::kBatch;
  // Receives errors the library has no call to return them from: those of
  // the Close that DB's destructor runs when the caller did not call
  // DB::Close. Called on the destroying thread. Empty (the default): one
  // line "gpkv: <status>" is written to stderr.
  std::function<void(const Status&)> error_logger;
  // CUDA backend, direct mode (the GPU reads the pool over the link): the
  // share of each table's buckets kept in GPU memory, the most-read ones
  // (the BktCache), 0 to 1; 0 = none. The other modes hold the whole index
  // in GPU memory.
  double gpu_cache_fraction = 0.2;
  // CUDA backend: threads that copy pageable host batch arrays to and from
  // the pinned staging buffers (the calling thread and copy_threads - 1 of
  // gpkv's own); one thread copies at a fifth of the link's rate. 0 = half
  // the hardware threads, at most 8; otherwise at most the hardware threads.
  // The copy threads are the process's: the first DB opened on the CUDA
  // backend starts them, and a later DB's value has no effect.
  int copy_threads = 0;
  // CUDA backend: tuning of ordered tables (OrderedGpuOptions).
  OrderedGpuOptions ordered_gpu;
};

// Shape of a persistent hash table (GPHash). The default is GPHash's
// 2L-2H-8S: two levels (the lower one shared by pairs of upper buckets), two
// hash locations per key per level, eight slots per bucket.
struct HashGeometry {
  // Levels of buckets, each half the size of the one above. 1..4.
  uint8_t levels = 2;
  // Candidate buckets per key per level. 1..4.
  uint8_t hash_locations = 2;
  // Slots per bucket: 4, 8 or 16.
  uint8_t slots_per_bucket = 8;
  // Buckets of the top level at create, a power of two; 0 = derived from
  // TableOptions::expected_keys.
  uint64_t initial_top_buckets = 0;
};

// Shape of a persistent ordered table (the LSM family: levels of sorted runs).
struct OrderedOptions {
  // b: the entries of the write buffer and the capacity of level 0; level i
  // holds at most b * 2^i entries. A power of two, 2^4..2^24. Batches smaller
  // than b go to a durable log in the pool and an in-memory buffer; a batch
  // that fills the buffer is sorted, merged down the levels and written as
  // one run. Larger b: fewer levels for a query to probe and longer
  // sequential writes; smaller b: less log to replay at open and less memory.
  // 2^16 keeps the log of an 8/8-byte table at ~1.6 MiB and a 2^24-key table
  // at 9 levels.
  uint64_t batch_entries = uint64_t{1} << 16;
  // M: the write buffer (the durable log in the pool and its copy in memory)
  // holds up to M * b entries before they are merged into the levels, so a
  // batch of b entries costs one sequential log append (its keys and values)
  // and the levels are rewritten once per M batches instead of once per
  // batch: the durable insert rate of large batches rises toward what the
  // link or disk moves. From M = 2 on the log has two halves: when one is
  // full, its entries are merged into the levels by a checkpoint that runs
  // behind the next batches, which go to the other half (on the GPU the new
  // run's copy to the pool overlaps them). The price: a log extent of M * b
  // entries (two of them from M = 2: 2 * M * b * (K + 8 + V) bytes), up to 2
  // * M * b entries to replay at open after a crash, and queries that read
  // the buffer's runs before the levels. 1..1024, at most 32 GiB per log
  // half; fixed at create.
  uint32_t log_batches = 1;
  // Automatic compaction: when tombstones make up more than this percentage
  // of the entries in runs, the next write batch rewrites all levels as one
  // run without them (stale versions are dropped whenever a cascade merges
  // the levels holding them). 1..100; 100 = only Table::Compact compacts.
  uint8_t max_dead_percent = 50;
};

struct TableOptions {
  TableKind kind = TableKind::kHash;
  Durability durability = Durability::kPersistent;
  // Key size in bytes: 8, 16 or 32. Every key value is legal.
  uint32_t key_size = 8;
  // Value size in bytes: 1 to 128. Values of up to 8 bytes sit in the slot;
  // larger ones in value cells replaced out of place.
  uint32_t value_size = 8;
  // Keys the table should hold before its first resize.
  uint64_t expected_keys = uint64_t{1} << 20;
  HashGeometry hash;
  // Ordered tables only.
  OrderedOptions ordered;
};

}  // namespace gpkv
