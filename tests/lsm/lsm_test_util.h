// Helpers of the LSM family's tests: opening a pool with an ordered table and
// checking it against a std::map oracle.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "test_util.h"

namespace gpkv::lsmtest {

inline Options PoolOptions(uint64_t pool_size = uint64_t{64} << 20, int threads = 2,
                           Backend backend = Backend::kCpu) {
  Options options;
  options.create_if_missing = true;
  options.pool_size = pool_size;
  options.backend = backend;
  options.cpu_threads = threads;
  return options;
}

inline TableOptions OrderedOptions(uint64_t batch_entries = 64, uint32_t value_size = 8,
                                   uint32_t key_size = 8) {
  TableOptions options;
  options.kind = TableKind::kOrdered;
  options.key_size = key_size;
  options.value_size = value_size;
  options.ordered.batch_entries = batch_entries;
  return options;
}

using Oracle = std::map<uint64_t, uint64_t>;

// Every pair of the table in key order (Scan), as a map.
inline Oracle Contents(Table& table) {
  Oracle contents;
  uint64_t previous = 0;
  bool first = true;
  Status status = table.Scan([&](const uint8_t* key, const uint8_t* value) {
    uint64_t k, v = 0;
    std::memcpy(&k, key, 8);
    std::memcpy(&v, value, std::min<uint32_t>(8, table.options().value_size));
    EXPECT_TRUE(first || k > previous) << "scan out of order at key " << k;
    first = false;
    previous = k;
    contents[k] = v;
    return true;
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return contents;
}

}  // namespace gpkv::lsmtest
