// tables::ResolvedWrite: a mixed write batch (gpkv::Table::Write) reduced to
// what a family applies: the keys whose last operation is a put, with that
// put's value, and the keys whose last operation is an erase, each key once
// (the two sets are disjoint, so a family may apply them in either order or
// as one unit); and, when the caller asks for the erased results, the keys
// whose liveness before the batch decides them.
//
// Each erase's result follows the batch order: 1 when the operation before
// it on its key is a put, 0 when it is an erase, and the key's liveness
// before the batch when it is the key's first operation (a probe key).
//
// Who may call: the families' fronts. Thread safety: plain data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpkv/status.h"

namespace gpkv::tables {

struct ResolvedWrite {
  size_t puts = 0;                  // keys whose last operation is a put
  std::vector<uint8_t> put_keys;    // puts keys
  std::vector<uint8_t> put_values;  // puts values, of the last put of each key
  size_t erases = 0;                // keys whose last operation is an erase
  std::vector<uint8_t> erase_keys;  // erases keys
  size_t probes = 0;                // keys whose first operation is an erase
  std::vector<uint8_t> probe_keys;  // probes keys; only when erased results are asked for

  // Writes the n erased results of the batch, given probe_found (probes
  // bytes: 1 where probe key j was live before the batch).
  // REQUIRES: resolved with want_erased.
  void FillErased(const uint8_t* probe_found, uint8_t* erased) const;

  // Per operation: kNotFound, kFound, or the index of its probe key.
  static constexpr int64_t kNotFound = -1;
  static constexpr int64_t kFound = -2;
  std::vector<int64_t> erase_results;
};

// Resolves n operations (ops[i]: gpkv::Table::WriteOp) over keys of key_size
// and values of value_size bytes, all host memory. OutOfDeviceMemory (naming
// `where`) when RAM for the copies runs out.
// REQUIRES: every ops[i] is a WriteOp.
Result<ResolvedWrite> ResolveWrite(const std::string& where, const uint8_t* keys,
                                   const uint8_t* values, const uint8_t* ops, size_t n,
                                   uint32_t key_size, uint32_t value_size, bool want_erased);

}  // namespace gpkv::tables
