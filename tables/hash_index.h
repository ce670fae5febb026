// tables::OpenHashIndex: an empty volatile hash table used as the in-memory
// index of a persistent hash table whose contents the pool keeps in another
// form (GPHash's logged mode: an image and a batch log). The table is the
// registry's (hash, volatile) family's, so that the family that uses it as an
// index includes no other family; it answers gpkv::Table's batches on the
// context's backend (libcuckoo on the CPU, the slab hash on CUDA).
//
// Who may call: the persistent hash family (tables/gphash/), tests.
// Thread safety: a plain function; the table it returns is as gpkv::Table
// promises.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/family.h"

namespace gpkv::tables {

// An empty volatile hash table named `name` for keys and values of
// options.key_size / options.value_size, sized for options.expected_keys, on
// context.backend. Unsupported when this build has no volatile hash family;
// the family's errors (OutOfDeviceMemory when the GPU cannot hold it)
// otherwise.
Result<std::unique_ptr<Table>> OpenHashIndex(const OpenContext& context, const std::string& name,
                                             const TableOptions& options);

// What an index on the CUDA backend adds to gpkv::Table: its pairs gathered
// into device memory in one pass (a persistent family's checkpoint sorts and
// writes them from there instead of scanning them to the host). The family
// that uses the index finds it by dynamic_cast; an index without it is
// scanned through Table::Scan.
// Thread safety: as the index's Scan (beside reads, not beside writes that
// the caller does not serialise).
class DeviceIndexScan {
 public:
  virtual ~DeviceIndexScan() = default;
  // The CUDA device whose memory the index lives in.
  virtual int cuda_device() const = 0;
  // Writes the index's live pairs, in no particular order, into device
  // memory of cuda_device(): pair i's key as key_size / 8 words at
  // keys + i * key_size / 8, its value's bytes at values + i * value_words
  // (value_words = (value_size + 7) / 8; the bytes past value_size are
  // unspecified), at most `capacity` pairs; *pairs = how many are live.
  // When *pairs > capacity the arrays hold no usable result: call again
  // with room for *pairs. Returns once the arrays are written.
  virtual Status ScanIntoDevice(uint64_t* keys, uint64_t* values, uint64_t capacity,
                                uint64_t* pairs) = 0;
};

// What an index adds to gpkv::Table so that its user's host work runs
// beside a put's kernels: a persistent family writes a small host batch's log
// record while the index applies the batch on the GPU, instead of one after
// the other. The family that uses the index finds it by dynamic_cast.
// Thread safety: as the index's Put.
class OverlappedIndexPut {
 public:
  virtual ~OverlappedIndexPut() = default;
  // Puts the batch (gpkv::Table::Put's contract, ordered after nothing) and
  // calls meanwhile() exactly once on the calling thread: on the CUDA
  // backend once the batch's first launch is queued (or, when the put fails
  // before one, before returning), on the CPU after the put. The index may
  // show the batch to readers before meanwhile() returns; meanwhile() must
  // not call the index.
  virtual Status PutWhile(ConstBytes keys, ConstBytes values,
                          const std::function<void()>& meanwhile) = 0;
};

}  // namespace gpkv::tables
