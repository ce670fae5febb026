#include "tables/write_batch.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <numeric>
#include <string>

#include "gpkv/table.h"

namespace gpkv::tables {

void ResolvedWrite::FillErased(const uint8_t* probe_found, uint8_t* erased) const {
  for (size_t i = 0; i < erase_results.size(); ++i) {
    const int64_t result = erase_results[i];
    erased[i] = result == kFound ? 1 : result == kNotFound ? 0 : probe_found[result];
  }
}

namespace {

constexpr uint8_t kPut = static_cast<uint8_t>(Table::WriteOp::kPut);

void Append(std::vector<uint8_t>* to, const uint8_t* bytes, size_t size) {
  to->insert(to->end(), bytes, bytes + size);
}

// Fills `out` from the operations of one key, order[first, last) (ascending
// positions in the batch).
void ResolveKey(const size_t* order, size_t first, size_t last, const uint8_t* keys,
                const uint8_t* values, const uint8_t* ops, uint32_t key_size, uint32_t value_size,
                bool want_erased, ResolvedWrite* out) {
  const uint8_t* key = keys + order[first] * key_size;
  if (want_erased) {
    if (ops[order[first]] != kPut) {
      out->erase_results[order[first]] = static_cast<int64_t>(out->probes++);
      Append(&out->probe_keys, key, key_size);
    }
    for (size_t j = first + 1; j < last; ++j) {
      if (ops[order[j]] == kPut) continue;
      out->erase_results[order[j]] =
          ops[order[j - 1]] == kPut ? ResolvedWrite::kFound : ResolvedWrite::kNotFound;
    }
  }
  const size_t final_op = order[last - 1];
  if (ops[final_op] == kPut) {
    ++out->puts;
    Append(&out->put_keys, key, key_size);
    Append(&out->put_values, values + final_op * value_size, value_size);
  } else {
    ++out->erases;
    Append(&out->erase_keys, key, key_size);
  }
}

}  // namespace

Result<ResolvedWrite> ResolveWrite(const std::string& where, const uint8_t* keys,
                                   const uint8_t* values, const uint8_t* ops, size_t n,
                                   uint32_t key_size, uint32_t value_size, bool want_erased) {
  ResolvedWrite out;
  try {
    // The operations grouped by key, each key's in batch order.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const int order_of_keys = std::memcmp(keys + a * key_size, keys + b * key_size, key_size);
      return order_of_keys != 0 ? order_of_keys < 0 : a < b;
    });
    if (want_erased) out.erase_results.assign(n, ResolvedWrite::kNotFound);
    size_t first = 0;
    for (size_t i = 1; i <= n; ++i) {
      if (i < n &&
          std::memcmp(keys + order[first] * key_size, keys + order[i] * key_size, key_size) == 0) {
        continue;
      }
      ResolveKey(order.data(), first, i, keys, values, ops, key_size, value_size, want_erased,
                 &out);
      first = i;
    }
  } catch (const std::bad_alloc&) {
    return Status::OutOfDeviceMemory(where + ": out of memory (RAM) for a write batch of " +
                                     std::to_string(n));
  }
  return out;
}

}  // namespace gpkv::tables
