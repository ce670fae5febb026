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
  // A get (and an erase batch's lookup of its keys) tests the key filter of
  // each level's run but the oldest (kept in GPU memory, 1.25 bytes a key)
  // before it searches the run, and skips the run when the filter rules the
  // key out; false = every run is searched, to measure what the filters
  // save. Answers are the same either way.
  bool read_filters = true;
};

// Where the CUDA backend of persistent hash tables (GPHash) probes and
// arbitrates (HashGpuOptions::index_mode).
enum class HashGpuIndexMode : uint8_t {
  // When the index fits in GPU memory (see HashGpuOptions): kMirror, or
  // kStaged past staged_min_index_bytes. When it does not: kDirect up to
  // direct_max_index_bytes, else Unsupported (the CPU backend is faster
  // there). kStaged whenever the pool mapping cannot be registered with CUDA
  // (a file on ext4). Chosen at open: a table that grows keeps its mode.
  kAuto = 0,
  kDirect = 1,  // the registered pool mapping itself
  kMirror = 2,  // a copy of the bucket levels in GPU memory; the pool gets the writes
  // The mirror without registering the pool: kernels log their pool stores in
  // GPU memory and the host applies each log to the pool mapping, in the
  // protocol's order, before the batch returns. For pools the GPU cannot map.
  kStaged = 3,
};

// Tuning of the CUDA backend of persistent hash tables (TableKind::kHash,
// persistent). The defaults are the measured best choices on an H100; the
// other values exist to measure them again. The share of buckets cached in
// GPU memory in direct mode is Options::gpu_cache_fraction.
struct HashGpuOptions {
  HashGpuIndexMode index_mode = HashGpuIndexMode::kAuto;
  // kAuto mirrors the index when twice its size (room for a resize) is at
  // most this fraction of the device's free memory at open.
  double mirror_memory_fraction = 0.5;
  // kAuto runs direct mode only for an index of at most this many bytes (0:
  // any size): direct mode probes the pool over PCIe, and random accesses to
  // a registered mapping fall off a cliff past 512 MiB, where the CPU
  // backend wins. Only reached when the mirror does not fit in GPU memory.
  // Under Backend::kAuto only: a DB that names Backend::kCuda runs direct
  // mode at any size. Measurements: docs/ARCHITECTURE.md, "HashGpuOptions
  // defaults".
  uint64_t direct_max_index_bytes = uint64_t{768} << 20;
  // kAuto runs staged rather than mirror mode when the index is larger than
  // this (0: never): past the link's cliff the GPU's stores to the pool are
  // slow and the host's are not; below it mirror mode wins. Measurements:
  // docs/ARCHITECTURE.md, "HashGpuOptions defaults".
  uint64_t staged_min_index_bytes = uint64_t{768} << 20;
  // Direct mode: get batches are sorted by bucket and each distinct key
  // looked up once (fewer pages in flight over the link, one read of a hot
  // key). Once the cache of hot buckets has reloaded (they then sit in GPU
  // memory), batches of fewer than this many operations run as they come,
  // saving the sort's launches. A table without a warm cache always sorts:
  // the repeats of a hot key would all read one pool line over the link.
  // 0: sort every batch. Measurements: docs/ARCHITECTURE.md,
  // "HashGpuOptions defaults".
  uint64_t sorted_get_min_ops = uint64_t{1} << 14;
  // Direct mode: operations (gets, puts, erases) between two reloads of the
  // cache of hot buckets (Options::gpu_cache_fraction), which re-ranks the
  // buckets by their access counts on a stream of its own. Measured (H100,
  // 16M keys, 20% cache, YCSB C zipfian): 2^23 beats 2^21 at every batch
  // size (2^20: 393 vs 347 M gets/s; 2^16: 238 vs 208): longer periods rank
  // better and copy fewer buckets.
  uint64_t bkt_cache_reload_ops = uint64_t{1} << 23;
  // Host batches (a waiting call with keys, values or flags in host memory):
  // operations per chunk of the copy / kernel pipeline, and the streams
  // (lanes) its chunks rotate over, so that one chunk's copy in, another's
  // kernels and a third's copy out overlap. host_lanes 0: no pipeline, the
  // batch copied in and out whole on one stream. Measured (H200, mirror
  // mode, 2^20 uniform gets, docs/bench/host-batches.md): 2^17 ops over 4
  // lanes 1.44 / 2.33 G/s (pageable / registered), over 3 lanes 1.22 / 2.18,
  // over 2 lanes 1.01 / 1.77; 2^15 and 2^19 ops per chunk slower.
  uint64_t host_chunk_ops = uint64_t{1} << 17;
  uint32_t host_lanes = 4;
  // Host batches of pageable arrays of at most this many operations run
  // their kernels on the pinned staging itself (mapped host memory) instead
  // of copying it to the device and back: fewer calls and no DMA set-up on
  // the small batches an OLTP caller sends (measured: 4096 gets 28 vs
  // 35 us p50, 256 gets 17 vs 23 us). 0: always copy.
  uint64_t host_zero_copy_ops = 8192;
  // Logged hash tables (TableOptions::hash_log): put and erase batches in
  // host memory of at least this many operations are copied to GPU memory
  // first and then written as batches from GPU memory are (the record summed
  // on the GPU and copied from there to the pool while the index applies the
  // batch), instead of the host summing and copying the record before the
  // index apply. Same bytes either way. 0: never.
  uint64_t logged_device_copy_min_ops = uint64_t{1} << 16;
  // Mirror and staged mode: puts run warp-cooperatively as in direct mode
  // (true) instead of one per thread (false). One per thread wins there: the
  // probe and the CAS run in HBM, and what bounds a put is its ordered
  // stores to the pool (each followed by __threadfence_system()), which 32
  // threads overlap and one warp running its 32 puts in turn does not. In
  // direct mode, where the probe crosses the link, puts are always
  // warp-cooperative. Measurements: docs/ARCHITECTURE.md, "HashGpuOptions
  // defaults".
  bool warp_puts = false;
  // Mirror and staged mode: get batches of 4096 and more run on tiles of
  // slots_per_bucket lanes per key, as in direct mode (true), instead of one
  // thread per key reading each bucket's slot words in 16-byte loads
  // (false). In HBM a tile get is bound by instruction issue, not by memory:
  // one thread per key issues a ninth of the instructions. Measurements:
  // docs/ARCHITECTURE.md, "HashGpuOptions defaults".
  bool tile_index_gets = false;
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
  // InvalidArgument. Every table answers from the state open-time recovery
  // would produce, computed in memory: an ordered table's log is replayed
  // into memory; a hash table a crash left with reserved slots, duplicate
  // keys or an interrupted resize is read past them as recovery would leave
  // it (such a table runs on the CPU backend whatever `backend` says; its
  // TableStats::fallback says so). Unreferenced extents are left for the
  // next writable open.
  bool read_only = false;
  // Which backend runs batches.
  Backend backend = Backend::kAuto;
  // The CUDA device (ordinal, as cudaSetDevice takes it) every table of the
  // DB runs on with the CUDA backend; Backend::kAuto checks that this device
  // is usable. DB::Open fails with InvalidArgument naming it when it is
  // negative or not a device of this machine (a machine without a usable
  // device runs kAuto on the CPU as ever), with Unsupported when kCuda
  // cannot run on it. Device pointers in batches are this device's.
  int cuda_device = 0;
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
  // CUDA backend: tuning of persistent hash tables (HashGpuOptions).
  HashGpuOptions hash_gpu;
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

// How a persistent hash table makes its write batches durable: in place
// (log_batches 0, the default: GPHash's slot protocol, each operation stored
// into its bucket in the pool) or logged (log_batches M >= 1: each write
// batch is one record of a durable log in the pool, atomic as a whole; the
// index lives in memory, RAM on the CPU backend; when the log's M batches of
// batch_entries are used up, an image of the index is written to the pool
// sequentially and the log starts again). A logged table costs memory for
// its whole index and a replay of up to M * b entries at open. On the CUDA
// backend its index is in GPU memory and its write batches take host memory
// (gets take device memory too); an index that GPU memory cannot hold is
// OutOfDeviceMemory (Backend::kAuto then opens the table on the CPU). Fixed
// at create.
struct HashLogOptions {
  // M: 0 = in place; 1..1024 = logged, the log holding M batches of b.
  uint32_t log_batches = 0;
  // b: the entries of one batch as the log's size counts them, a power of
  // two 2^4..2^24. Larger batches are taken too: a batch that does not fit
  // the log is written as the image.
  uint64_t batch_entries = uint64_t{1} << 16;
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
  // Persistent hash tables only: in place or logged.
  HashLogOptions hash_log;
  // Ordered tables only.
  OrderedOptions ordered;
};

}  // namespace gpkv
