// slab_hash::gpu::GpuBackend: the slab hash in GPU memory (Ashkiani,
// Farach-Colton, Owens, IPDPS 2018). Buckets are lists of 128-byte slabs
// (layout.h) allocated from gpkv::gpu::SlabAlloc; every operation is
// warp-cooperative (warp::ShareWork). See backend.h for the batch contract.
//
// Growth: buckets are sized from TableOptions::expected_keys; when the
// average list grows past a bound the table rehashes into more buckets
// before the next write batch that inserts (Stats: rehashes,
// rehash_seconds). Erased slots stay dead until a flush compacts their lists
// (automatic before a put or mixed batch once dead slots pass a bound, or
// Flush()); an erased out-of-line value's slab is freed at once. SlabAlloc grows when full; when
// the device has no memory left, the batch fails with OutOfDeviceMemory and none of its operations
// that did not fit is applied (the others are, each whole), nothing acknowledged before is lost.
//
// Who may call: table.cc, tests and the benchmark.
// Thread safety: every method may be called from several threads at once
// (reads share the table; writes, flush and growth take it in turn).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "tables/slab_hash/backend.h"
#include "tables/slab_hash/mixed_batch.h"

namespace gpkv::slab_hash::gpu {

// Operation codes of a mixed batch (GpuBackend::Mixed; mixed_batch.h).
using ::gpkv::slab_hash::MixedOp;

class GpuBackend final : public Backend {
 public:
  // An empty table for keys and values of `options` (sizes checked by the
  // family), on CUDA device `device`: every batch and maintenance call sets
  // it on the calling thread first. Unsupported when that device is not
  // usable; OutOfDeviceMemory when the buckets do not fit.
  static Result<std::unique_ptr<GpuBackend>> Create(const TableOptions& options, int device = 0);
  ~GpuBackend() override;

  Status Put(const uint8_t* keys, const uint8_t* values, size_t count, void* stream) override;
  Status PutWhile(const uint8_t* keys, const uint8_t* values, size_t count,
                  const std::function<void()>& meanwhile) override;
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
             void* stream) override;
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) override;
  // Holds the table shared while it visits (writes wait, gets run): the
  // visitor must not write to this table.
  Status Scan(const Table::ScanVisitor& visit) override;
  Result<slab_hash::Stats> Stats() override;
  // Every live pair into device memory in one launch over all buckets,
  // holding the table shared as Scan does.
  Status ScanIntoDevice(uint64_t* keys, uint64_t* values, uint64_t capacity,
                        uint64_t* pairs) override;
  int cuda_device() const override;

  // One launch of concurrent searches, replaces and deletes (the paper's
  // concurrent benchmark): ops[i] is a MixedOp; values[i] is the value to
  // write (replace) or receives the value found (search); results[i] = 1
  // where a search found its key or a delete removed one (replace: 1).
  // Operations on the same key in one mixed batch take effect in some
  // serial order (not necessarily the batch's). A search never returns a
  // value its key did not have: one-word values are written in one 64-bit
  // store, out-of-line values by swapping the value slab's address, and
  // inline values of several words (9 bytes up to what fits in a slot) with
  // the slot locked (its state live -> pending -> live) by the replace, and
  // likewise by a search that copies one.
  // Thread safety: as Put (the table is held exclusively for the batch).
  Status Mixed(const uint8_t* ops, const uint8_t* keys, uint8_t* values, uint8_t* results,
               size_t count, void* stream) override;
  // Compacts every list now (drops dead slots, frees emptied slabs).
  Status Flush(void* stream);
  // Rehashes into enough buckets for `keys` keys now (the bulk build sizes
  // the table this way before inserting a batch into an empty table).
  Status Reserve(uint64_t keys, void* stream);

  class Impl;

 private:
  explicit GpuBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpkv::slab_hash::gpu
