// Helpers of the B-tree family's tests (volatile ordered tables): a DB with
// one such table, and std::map oracles of 8-byte keys and values and of
// keys of any size.
//
// The tests run the table on the CPU backend. A program of tests/btree/gpu/
// runs the same tests on the GPU backend: it defines GPKV_BTREE_TEST_BACKEND
// (Backend::kCuda) and GPKV_BTREE_SUITE (a suite name of its own) before it
// includes a test file.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "ordered_oracle.h"
#include "test_util.h"

#ifndef GPKV_BTREE_TEST_BACKEND
#define GPKV_BTREE_TEST_BACKEND ::gpkv::Backend::kCpu
#endif
#ifndef GPKV_BTREE_SUITE
#define GPKV_BTREE_SUITE(name) name
#endif

namespace gpkv::btreetest {

inline Options CpuOptions(int threads = 2) {
  return testutil::DbOptions(uint64_t{16} << 20, threads);
}

// A DB on the backend the tests run on (GPKV_BTREE_TEST_BACKEND).
inline Options TestOptions(int threads = 2) {
  return testutil::DbOptions(uint64_t{16} << 20, threads, GPKV_BTREE_TEST_BACKEND);
}

inline TableOptions VolatileOrdered(uint32_t key_size = 8, uint32_t value_size = 8) {
  TableOptions options;
  options.kind = TableKind::kOrdered;
  options.durability = Durability::kVolatile;
  options.key_size = key_size;
  options.value_size = value_size;
  options.expected_keys = 1 << 16;
  return options;
}

// A pool in /dev/shm with one volatile ordered table "t", open on the
// tests' backend.
struct OpenTable {
  OpenTable(const std::string& tag, TableOptions options = VolatileOrdered(), int threads = 2)
      : temp("btree-" + tag) {
    auto opened = DB::Open(temp.path(), TestOptions(threads));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    db = std::move(*opened);
    auto created = db->CreateTable("t", options);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    table = *created;
  }
  testutil::TempPool temp;
  std::unique_ptr<DB> db;
  Table* table = nullptr;
};

using Oracle = std::map<uint64_t, uint64_t>;

// Keys of up to four 8-byte words as the table orders them: the last word
// the most significant.
using WideKey = std::array<uint64_t, 4>;
struct WideLess {
  uint32_t words;  // the words a key has
  bool operator()(const WideKey& a, const WideKey& b) const {
    for (uint32_t w = words; w-- > 0;) {
      if (a[w] != b[w]) return a[w] < b[w];
    }
    return false;
  }
};
using WideOracle = std::map<WideKey, std::vector<uint8_t>, WideLess>;

// The key of `key_size` bytes at `bytes`.
inline WideKey LoadKey(const uint8_t* bytes, uint32_t key_size) {
  WideKey key{};
  std::memcpy(key.data(), bytes, key_size);
  return key;
}

using testutil::OracleRange;
using testutil::RangePairs;

// One property of the table's stats (0 when it fails, with a test failure).
inline double Property(Table& table, const std::string& name) {
  auto value = table.GetProperty(name);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : 0;
}

}  // namespace gpkv::btreetest
