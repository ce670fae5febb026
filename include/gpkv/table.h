// gpkv::Table: one named table of a DB, operated on in batches.
//
// Durability: when a write batch (Put, Erase) on a persistent table returns
// OK, every operation in it is durable in the pool (see SyncMode); a batch
// queued on a stream (BatchOptions::async) is durable when
// Table::Synchronize returns OK. A volatile
// table (Durability::kVolatile) keeps its contents in GPU memory or RAM only:
// they die with the DB, and the table is empty when the pool is opened again. Hash tables give
// per-operation atomicity: a crash during a batch leaves each of its operations either fully
// applied or absent. Within one batch, duplicate keys resolve to the last
// occurrence.
//
// Ordered tables (TableKind::kOrdered) also answer Count, Range, Successor,
// Predecessor, Compact and NewIterator (gpkv/iterator.h), and give
// whole-batch atomicity: a crash during a write batch leaves the table as it
// was before the batch or after it, never a mix. Keys are ordered as unsigned
// little-endian integers of key_size bytes: an 8-byte key is a uint64_t; of a
// 16- or 32-byte key the last 8-byte word is the most significant. Hash
// tables answer those calls with Unsupported.
//
// Volatile ordered tables also take snapshots (Table::TakeSnapshot): reads
// through a snapshot (BatchOptions::snapshot) see the table exactly as it was
// when it was taken, while writes go on. Other tables answer TakeSnapshot
// with Unsupported.
//
// Thread safety: a Table may be used from several threads at once; concurrent
// batches are allowed. Per key, a reader sees the old or the new value, never
// a mix. A Table pointer is owned by its DB and stays valid until the table is
// dropped or the DB is destroyed (after DB::Close its calls return
// InvalidArgument).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpkv/batch.h"
#include "gpkv/iterator.h"
#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv {

// A named number a table family reports about one table, as RocksDB's
// properties: "<family>.<name>", e.g. "gphash.load-factor". Each family's
// names are listed in docs/ARCHITECTURE.md; `gpkv info` prints them all.
struct TableProperty {
  std::string name;
  double value = 0;  // counts are whole numbers (exact below 2^53)
};

// Counters of a table, read by Table::Stats(): the fields every family has,
// then the family's own properties.
struct TableStats {
  TableKind kind = TableKind::kHash;
  Durability durability = Durability::kPersistent;
  std::string family;                     // the table family: "gphash", ...
  uint64_t keys = 0;                      // live keys
  uint64_t bytes = 0;                     // bytes the table occupies (pool bytes when persistent)
  std::vector<TableProperty> properties;  // in the family's order
  // The backend that runs the table's batches: "cpu" or "cuda".
  std::string backend;
  // The CUDA device the table runs on (Options::cuda_device) on the CUDA
  // backend; -1 on the CPU backend.
  int device = -1;
  // How the family runs the table on its backend, where it has a choice:
  // a persistent hash table on CUDA says where its index is probed
  // ("direct", "mirror" or "staged": HashGpuIndexMode); empty otherwise.
  std::string mode;
  // Empty, unless the DB runs on CUDA under Backend::kAuto and the GPU could
  // not take this table, so that it runs on the CPU backend: then the one
  // message saying so and why ("pool.gpkv: table 'users': runs on the CPU
  // backend: the GPU cannot take it (Unsupported: ...)").
  std::string fallback;

  // The value of property `name`, or nullopt when the family has none of
  // that name.
  std::optional<double> Property(std::string_view name) const;
};

class Table;

// A consistent view of one table's contents at a point in its history: the
// state after every write batch that returned before TakeSnapshot was called
// and before none that started after it returned. Pass it in
// BatchOptions::snapshot to read that state while writes go on. Destroying
// the handle releases the snapshot: versions of keys that no remaining
// snapshot can see are then reclaimed (at the table's next write, Stats or
// Compact call). A handle may outlive its table (releasing it then does
// nothing), but reads through it need the table open.
//
// Thread safety: a handle may be read by several threads at once (concurrent
// reads through one snapshot are allowed); it is destroyed by one.
class Snapshot {
 public:
  virtual ~Snapshot() = default;
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  // The table's write clock when the snapshot was taken: the number of
  // write batches the table had applied since it was opened.
  uint64_t timestamp() const { return timestamp_; }
  // True when `table` is the object that took the snapshot (a family's own
  // table, not the DB's handle of it): tables check it on every read that
  // names the snapshot.
  bool TakenBy(const Table* table) const { return table == owner_; }

 protected:
  Snapshot(const Table* owner, uint64_t timestamp) : owner_(owner), timestamp_(timestamp) {}

 private:
  const Table* const owner_;
  const uint64_t timestamp_;
};

class Table {
 public:
  virtual ~Table() = default;
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  virtual const std::string& name() const = 0;
  virtual const TableOptions& options() const = 0;

  // Inserts or replaces n = keys.size() / key_size pairs.
  // REQUIRES: keys.size() is a multiple of key_size; values.size() ==
  //           n * value_size.
  // Returns PoolFull when the pool cannot hold the table's growth; operations
  // acknowledged before stay durable, and the operations of this batch are
  // each either applied or absent.
  virtual Status Put(ConstBytes keys, ConstBytes values, const BatchOptions& options = {}) = 0;

  // Looks up n keys. values receives n * value_size bytes (a key not found
  // leaves its value bytes zeroed); found, if not empty, receives n bytes,
  // 1 where the key was found. "Not found" is a per-key result, not an error.
  virtual Status Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                     const BatchOptions& options = {}) = 0;

  // Removes n keys. erased, if not empty, receives n bytes, 1 where the key
  // was present.
  virtual Status Erase(ConstBytes keys, MutableBytes erased = {},
                       const BatchOptions& options = {}) = 0;

  // ---- mixed write batches ----

  // One operation of a Write batch: ops holds one of these bytes per key.
  enum class WriteOp : uint8_t { kPut = 0, kErase = 1 };
  // Applies n = keys.size() / key_size operations, puts and erases mixed:
  // operation i puts (keys[i], values[i]) when ops[i] is WriteOp::kPut and
  // erases keys[i] when it is WriteOp::kErase (values[i] is then ignored).
  // The operations apply in batch order: of a key the last operation wins
  // (a put after an erase leaves the key, an erase after a put removes it).
  // erased, if not empty, receives n bytes: 1 where operation i is an erase
  // that found its key (live before the batch or put earlier in it, and not
  // erased since), 0 elsewhere.
  // Durability: as Put and Erase (every operation durable when it returns
  // OK on a persistent table).
  // Atomicity: ordered tables apply the whole batch atomically, as their Put
  // and Erase (persistent: a crash leaves the table before or after the
  // batch; volatile: readers and snapshots see all of it or none of it).
  // Hash tables apply it as a put batch of the keys whose last operation is
  // a put, then an erase batch of the others: atomic per operation, as their
  // Put and Erase, and a concurrent reader may see the puts before the
  // erases.
  // Memory: ops in host memory; keys, values and erased in host memory,
  // or, on a logged hash table on the CUDA backend, all three in device
  // memory (copied through the host; the same outcome).
  // REQUIRES: keys.size() is a multiple of key_size; values.size() ==
  //           n * value_size; ops.size() == n, each byte a WriteOp in host
  //           memory; keys, values and erased in memory as above.
  virtual Status Write(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased = {},
                       const BatchOptions& options = {});

  // ---- ordered tables (hash tables return Unsupported) ----

  // Counts the live keys in [lo[i], hi[i]] (inclusive) for each of n =
  // lo.size() / key_size queries; counts receives n uint64_t (0 when lo > hi).
  // REQUIRES: lo.size() == hi.size(), a multiple of key_size;
  //           counts.size() == n * 8.
  virtual Status Count(ConstBytes lo, ConstBytes hi, MutableBytes counts,
                       const BatchOptions& options = {});

  // The pairs of each range query: query i's keys and values are entries
  // [offsets[i], offsets[i + 1]) of keys (key_size bytes each) and values
  // (value_size bytes each), in ascending key order.
  struct RangeResults {
    std::vector<uint64_t> offsets;  // n + 1
    std::vector<uint8_t> keys;
    std::vector<uint8_t> values;
  };
  // The live pairs with keys in [lo[i], hi[i]] (inclusive) for each of n
  // queries, sorted by key, without stale versions or erased keys; of each
  // query at most options.range_limit pairs, the smallest keys of its range.
  // results is replaced. Each query's pairs are one consistent read.
  // REQUIRES: as Count; results not null.
  virtual Status Range(ConstBytes lo, ConstBytes hi, RangeResults* results,
                       const BatchOptions& options = {});

  // Range results in the memory of a CUDA device, for callers whose next
  // step runs there: query i's pairs are entries [offsets[i], offsets[i + 1])
  // of keys and values, as in RangeResults, but the three arrays are device
  // pointers of CUDA device `device`, complete when RangeOnDevice returns
  // (the table has synchronised its own stream). pairs (host memory) is
  // offsets[queries].
  //
  // The memory belongs to `storage`. A RangeOnDevice call that finds
  // `storage` large enough and held by no other copy (use_count() == 1)
  // reuses it, so a caller that passes the same results object batch after
  // batch allocates only when a batch needs more; a caller that wants to
  // keep one batch's arrays while the next is computed keeps a copy of
  // `storage` (the next call then allocates afresh). Freed with the last
  // copy of `storage`.
  struct DeviceRangeResults {
    int device = -1;
    uint64_t queries = 0;
    uint64_t pairs = 0;
    const uint64_t* offsets = nullptr;  // queries + 1 entries
    const uint8_t* keys = nullptr;      // pairs * key_size bytes
    const uint8_t* values = nullptr;    // pairs * value_size bytes
    std::shared_ptr<void> storage;      // owns the device memory above
    size_t storage_bytes = 0;
  };
  // Range with its results left in GPU memory (options.range_limit as
  // Range). lo and hi may be host or device memory (of the table's
  // device). Unsupported by tables that do not run on a GPU (the CPU
  // backend of ordered tables, hash tables).
  // REQUIRES: as Range; results not null.
  virtual Status RangeOnDevice(ConstBytes lo, ConstBytes hi, DeviceRangeResults* results,
                               const BatchOptions& options = {});

  // Lower bound: for each of n keys, the smallest live key >= keys[i] (the
  // key itself when it is live). next_keys receives n keys, values n values,
  // found (if not empty) n bytes: 0 when no live key is >= keys[i] (then the
  // key and value bytes are zeroed).
  virtual Status Successor(ConstBytes keys, MutableBytes next_keys, MutableBytes values,
                           MutableBytes found, const BatchOptions& options = {});
  // For each key, the largest live key <= keys[i]; as Successor otherwise.
  virtual Status Predecessor(ConstBytes keys, MutableBytes previous_keys, MutableBytes values,
                             MutableBytes found, const BatchOptions& options = {});

  // An iterator over the table's pairs in key order (gpkv/iterator.h), at no
  // pair until a seek. options.snapshot: as BatchOptions::snapshot (the
  // snapshot's own table only, InvalidArgument otherwise); bounds: empty or
  // key_size bytes. Hash tables return Unsupported.
  virtual Result<std::unique_ptr<Iterator>> NewIterator(const IteratorOptions& options = {});

  // Rewrites the table without stale versions and erased keys (its families
  // also do this on their own, see OrderedOptions::max_dead_percent). Durable
  // and atomic: a crash leaves the table before or after the compaction,
  // with the same contents either way.
  virtual Status Compact();

  // A snapshot of the table's current contents (see Snapshot), released when
  // the returned handle is destroyed. Volatile ordered tables take them;
  // other tables return Unsupported. Snapshots cost memory while they live:
  // a key written after a snapshot that can still see its old value keeps
  // that value too (TableStats properties say how many versions are held).
  virtual Result<std::unique_ptr<Snapshot>> TakeSnapshot();

  virtual Result<TableStats> Stats() = 0;

  // ---- stream-ordered batches (BatchOptions::async) ----

  // The wait of the batches queued on `stream` (a cudaStream_t) with
  // BatchOptions::async: waits for the stream, finishes its outstanding
  // write batch (a put that found no free slot is placed now, by kicks or a
  // resize), makes it durable, and returns its error (PoolFull, say). Also
  // waits for the work the caller enqueued on the stream before the call.
  // OK at once where nothing is queued (tables that run every batch to
  // completion).
  //
  // Before Synchronize returns OK, of a queued batch:
  //  - its arrays (keys, values, found / erased flags) must stay valid and
  //    unchanged; outputs are complete only after the wait (or once the
  //    stream reaches them, for device arrays read by later work on it);
  //  - a write is neither durable nor complete: a crash may lose any of its
  //    operations (each is applied or absent, never torn), and a get queued
  //    after it on the same stream sees each of its operations except puts
  //    that found no free slot; batches on other streams may see some of it;
  //  - a second write batch queued on the same stream first finishes the
  //    outstanding one (the call waits for it and returns its error), so at
  //    most one write per stream is outstanding; a get queued after a write
  //    does not wait for it.
  // A batch without `async` ordered after the stream (BatchOptions::stream)
  // does not finish the stream's outstanding write: call Synchronize first
  // when it touches the same keys. Table::Close and DB::Close finish every
  // stream's outstanding write and report its error.
  // REQUIRES: one host thread at a time queues on or waits for a stream; a
  //           stream used for a queued batch stays valid until the table is
  //           closed (the table keeps scratch memory per stream).
  virtual Status Synchronize(void* stream);

  // Finishes the table's pending work (an ordered table's pending checkpoint
  // is published and made durable) and reports what failed. DB::Close calls
  // it for every table; a caller need not. After Close every call on the
  // table returns InvalidArgument. The default (no pending work) returns OK.
  // REQUIRES: no other call on the table is running.
  virtual Status Close();

  // One property of Stats() by name (see TableProperty). NotFound naming the
  // table when its family has no property of that name.
  Result<double> GetProperty(std::string_view name);

  // Calls visit(key, value) for every live pair, in no particular order,
  // until visit returns false. Sees a consistent view of each pair, not of the
  // whole table: pairs written during the scan may or may not be visited.
  using ScanVisitor = std::function<bool(const uint8_t* key, const uint8_t* value)>;
  virtual Status Scan(const ScanVisitor& visit) = 0;

 protected:
  Table() = default;
};

}  // namespace gpkv
