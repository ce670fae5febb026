// The naive baseline of the GPU benchmark ("the simple GPU hash
// table" GPHash compares against): open addressing with linear probing over a
// registered tmpfs file mapping, one GPU thread per operation, insert by CAS
// on the key word. Durable like direct mode: each thread's stores are ordered
// with __threadfence_system(), and the host msyncs the mapping before a write
// batch returns.
//
// What it gives up, and why it is only a baseline: the key ~0 is reserved as
// "empty" (every key value is legal in gpkv), there is no resize (the table
// is sized at Create for `expected_keys` at load factor 2/3, gpkv's default
// after a load), no erase, no recovery and no duplicate handling of racing
// inserts from several batches. Benchmark code only; not part of libgpkv.
//
// Thread safety: one batch at a time (calls wait for their kernel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "bench/gpu/registered_file.h"
#include "gpkv/status.h"
#include "gpkv/table.h"

namespace gpkv::bench::gpu {

// What the benchmark reports of a naive table: the counters it reads of a
// GPHash table (gphash::Stats) under the same names.
struct NaiveStats {
  uint64_t keys = 0;         // live keys
  uint64_t slots = 0;        // slots of the table
  double load_factor = 0.0;  // keys / slots
  uint32_t levels = 1;       // one array, never resized
  uint64_t resizes = 0;
  uint64_t index_bytes = 0;  // bytes of the mapped file
};

class NaiveTable {
 public:
  // Maps a new file in `dir` (removed at once; the mapping stays) with room
  // for `expected_keys` at load factor 2/3 and registers it with CUDA.
  static Result<std::unique_ptr<NaiveTable>> Create(const std::string& dir, uint64_t expected_keys);
  ~NaiveTable();
  NaiveTable(const NaiveTable&) = delete;
  NaiveTable& operator=(const NaiveTable&) = delete;

  // Batches of 8-byte keys and values in device memory (or registered host
  // memory). Put inserts or updates; returns PoolFull when a probe wraps the
  // whole table. Durable on return. Get writes 0/1 into found.
  Status Put(const uint8_t* keys, const uint8_t* values, size_t count);
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count);
  NaiveStats Stats() const;
  uint64_t bytes() const { return bytes_; }

 private:
  NaiveTable() = default;

  std::unique_ptr<RegisteredFile> file_;  // {key, value} pairs; key ~0 = empty
  uint64_t capacity_ = 0;                 // slots, a power of two
  uint64_t bytes_ = 0;
  unsigned long long* counters_ = nullptr;  // device: [0] keys, [1] probes that wrapped
};

}  // namespace gpkv::bench::gpu
