// Batch views: non-owning spans over caller memory that carry the keys,
// values and per-key results of one batch call. A batch of n operations on a
// table with key size K and value size V passes n*K key bytes and n*V value
// bytes; per-key results (found / erased) are one byte per key (0 or 1).
//
// The memory may be host memory or (with the CUDA backend) device memory.
// The spans are views only: the caller keeps the memory alive for the call,
// and for a queued batch (BatchOptions::async) until Table::Synchronize.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace gpkv {

// Read-only bytes of a batch (keys, or values to write).
class ConstBytes {
 public:
  ConstBytes() = default;
  ConstBytes(const void* data, size_t size) : data_(data), size_(size) {}
  template <typename T, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
  ConstBytes(const std::vector<T>& v)  // NOLINT: implicit view, as std::span
      : data_(v.data()), size_(v.size() * sizeof(T)) {}
  template <typename T, size_t N, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
  ConstBytes(const std::array<T, N>& a)  // NOLINT
      : data_(a.data()), size_(N * sizeof(T)) {}

  const void* data() const { return data_; }
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  const void* data_ = nullptr;
  size_t size_ = 0;
};

// Writable bytes of a batch (values read, found / erased flags).
class MutableBytes {
 public:
  MutableBytes() = default;
  MutableBytes(void* data, size_t size) : data_(data), size_(size) {}
  template <typename T, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
  MutableBytes(std::vector<T>& v)  // NOLINT: implicit view, as std::span
      : data_(v.data()), size_(v.size() * sizeof(T)) {}
  template <typename T, size_t N, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
  MutableBytes(std::array<T, N>& a)  // NOLINT
      : data_(a.data()), size_(N * sizeof(T)) {}

  void* data() const { return data_; }
  uint8_t* bytes() const { return static_cast<uint8_t*>(data_); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

class Snapshot;  // gpkv/table.h

// Per-call options of a batch.
struct BatchOptions {
  // A cudaStream_t, passed opaquely so that this header compiles without
  // CUDA; null: none. Without `async` the batch starts on the device only
  // after the work enqueued on this stream before the call (the kernel that
  // produced device-memory keys, say), and the call still waits for the
  // batch to complete; the table keeps nothing of the stream after the call.
  // The CPU backend has nothing to order after and ignores it.
  void* stream = nullptr;
  // Stream-ordered batch (Put, Get, Erase; REQUIRES: a non-null `stream`,
  // else InvalidArgument): a table that can queue the batch on `stream`
  // returns once it is queued, and Table::Synchronize(stream) is the wait.
  // Persistent hash tables (GPHash) on the CUDA backend queue; every other
  // table, and batches those cannot queue, run the batch to completion
  // before returning, which the contract allows (the wait then finds nothing
  // to do). Table::Synchronize says what may and may not be assumed before
  // the wait. Ignored by every other call.
  bool async = false;
  // Reads (Get, Count, Range, RangeOnDevice, Successor, Predecessor) see the
  // table as it was when this snapshot was taken (Table::TakeSnapshot), not
  // as it is now; null: the current contents. Only the snapshot's own table
  // takes it (InvalidArgument otherwise), and writes take none.
  const Snapshot* snapshot = nullptr;
  // Range and RangeOnDevice return at most this many pairs per query: the
  // smallest keys of its range (0: none), and each query's walk stops once
  // it has them. Other calls ignore it.
  uint64_t range_limit = std::numeric_limits<uint64_t>::max();
};

}  // namespace gpkv
