// tables::HashBackend: the batches every hash family's backend answers
// (tables/gphash/backend.h, tables/slab_hash/backend.h), each one virtual
// call. A family's Backend derives from it and adds its Scan and Stats.
//
// Batches follow gpkv::Table's contract: within a batch the last put of a
// key wins and the first erase of a key reports it. Batches of `count` keys
// (key_size bytes each) and values (value_size bytes each); found / erased
// (count bytes, or null): 1 where the key was found / erased. Arrays are
// host memory, or device memory on a GPU backend (detected per call).
// `stream` is BatchOptions::stream (a cudaStream_t or null): the batch
// starts after the work enqueued on it so far (a CPU backend has nothing to
// order after and ignores it); the backend keeps nothing of the stream after
// the call.
//
// The Async batches and Synchronize are BatchOptions::async's (gpkv::Table::
// Synchronize has the contract): a backend that can queue a batch on
// `stream` (non-null) overrides them; the defaults here run the batch to
// completion ordered after `stream` and have nothing to wait for. This is
// the one place that rule lives for every hash family.
//
// Who may call: the hash families (their fronts and families), tests and the
// benchmark. Thread safety: as each family's Backend says.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpkv/status.h"

namespace gpkv::tables {

class HashBackend {
 public:
  virtual ~HashBackend() = default;

  virtual Status Put(const uint8_t* keys, const uint8_t* values, size_t count, void* stream) = 0;
  virtual Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                     void* stream) = 0;
  virtual Status Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) = 0;
  // Stream-ordered twins: queue the batch on `stream` and return, or run it
  // to completion (the default). REQUIRES: stream is not null.
  virtual Status PutAsync(const uint8_t* keys, const uint8_t* values, size_t count, void* stream) {
    return Put(keys, values, count, stream);
  }
  virtual Status GetAsync(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                          void* stream) {
    return Get(keys, values, found, count, stream);
  }
  virtual Status EraseAsync(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) {
    return Erase(keys, erased, count, stream);
  }
  // Waits for `stream` and finishes, makes durable and reports its
  // outstanding write batch; SynchronizeAll does so for every stream the
  // backend has queued on (at Table::Close). The defaults: nothing queued.
  virtual Status Synchronize(void* /*stream*/) { return Status::OK(); }
  virtual Status SynchronizeAll() { return Status::OK(); }

  // The same batches ordered after nothing.
  Status Put(const uint8_t* keys, const uint8_t* values, size_t count) {
    return Put(keys, values, count, nullptr);
  }
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count) {
    return Get(keys, values, found, count, nullptr);
  }
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count) {
    return Erase(keys, erased, count, nullptr);
  }
};

}  // namespace gpkv::tables
