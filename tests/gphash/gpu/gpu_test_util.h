// Helpers shared by the gpu::GpuBackend device tests: SKIP_WITHOUT_DEVICE, a
// GPU table in a fresh /dev/shm pool that can be closed and reopened, random
// keys and values of any size, and the checks of a table's contents (Scan)
// and of a clean pool (gphash::VerifyGphash). Header-only; for tests, not
// the library.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "pm/pool.h"
#include "recovery/report.h"
#include "tables/gphash/check.h"
#include "tables/gphash/gpu/backend.h"
#include "test_util.h"

// Skips the current test when no CUDA device is usable (CI has none).
#define SKIP_WITHOUT_DEVICE()                                                \
  do {                                                                       \
    ::gpkv::Status usable = ::gpkv::gphash::gpu::GpuBackend::DeviceUsable(); \
    if (!usable.ok()) GTEST_SKIP() << usable.ToString();                     \
  } while (0)

// Not `testutil`: inside gpkv::gpu that name would hide gpkv::testutil.
namespace gpkv::gphash::gpu::gpu_test {

inline constexpr uint64_t kPoolSize = uint64_t{256} << 20;

// A pool on /dev/shm with one GPU table; reopens both on demand.
class TableHarness {
 public:
  TableHarness(const std::string& tag, const TableOptions& options, GpuIndexMode mode)
      : TableHarness(tag, options, GpuOptions(mode)) {}

  TableHarness(const std::string& tag, const TableOptions& options,
               const GpuTableOptions& gpu_options)
      : temp_(tag), gpu_options_(gpu_options) {
    auto pool = pm::Pool::Create(temp_.path(), kPoolSize, SyncMode::kBatch);
    EXPECT_TRUE(pool.ok()) << pool.status().ToString();
    pool_ = std::move(pool.value());
    auto root = GpuBackend::Create(*pool_, 1, options);
    EXPECT_TRUE(root.ok()) << root.status().ToString();
    root_ = *root;
    Open(/*read_only=*/false);
  }

  void Open(bool read_only, recovery::Report* report = nullptr) {
    if (pool_ == nullptr) {
      auto pool = pm::Pool::Open(temp_.path(), read_only, SyncMode::kBatch);
      ASSERT_TRUE(pool.ok()) << pool.status().ToString();
      pool_ = std::move(pool.value());
    }
    auto table = GpuBackend::Open(*pool_, "t", root_, gpu_options_, report);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    table_ = std::move(table.value());
  }

  void Close() {
    table_.reset();
    pool_.reset();
  }

  // Closes the table and keeps the pool open (for gphash::VerifyGphash).
  void CloseTable() { table_.reset(); }

  void Reopen(bool read_only = false, recovery::Report* report = nullptr) {
    Close();
    Open(read_only, report);
  }

  // False when the table could not be created or opened (the failure is
  // already reported); tests stop there.
  bool ok() const { return table_ != nullptr; }
  // Options of the next Open.
  GpuTableOptions& gpu_options() { return gpu_options_; }
  GpuBackend& table() { return *table_; }
  pm::Pool& pool() { return *pool_; }
  uint64_t root() const { return root_; }

 private:
  static GpuTableOptions GpuOptions(GpuIndexMode mode) {
    GpuTableOptions options;
    options.index_mode = mode;
    return options;
  }

  testutil::TempPool temp_;
  GpuTableOptions gpu_options_;
  std::unique_ptr<pm::Pool> pool_;
  std::unique_ptr<GpuBackend> table_;
  uint64_t root_ = 0;
};

// The mode's name in test names and pool tags.
inline const char* ModeName(GpuIndexMode mode) {
  switch (mode) {
    case GpuIndexMode::kDirect:
      return "direct";
    case GpuIndexMode::kMirror:
      return "mirror";
    case GpuIndexMode::kStaged:
      return "staged";
    case GpuIndexMode::kAuto:
      break;
  }
  return "auto";
}

inline std::vector<uint8_t> RandomKeys(std::mt19937_64& rng, size_t count, uint32_t key_size) {
  std::vector<uint8_t> keys(count * key_size);
  for (size_t i = 0; i < keys.size(); i += 8) {
    uint64_t word = rng();
    std::memcpy(&keys[i], &word, 8);
  }
  return keys;
}

// Fills value_size bytes from consecutive words of rng (one word for a value
// of up to 8 bytes).
inline void RandomValue(std::mt19937_64& rng, uint8_t* value, uint32_t value_size) {
  for (uint32_t at = 0; at < value_size; at += 8) {
    const uint64_t word = rng();
    std::memcpy(value + at, &word, std::min<uint32_t>(8, value_size - at));
  }
}

inline std::string Bytes(const uint8_t* bytes, size_t size) {
  return std::string(reinterpret_cast<const char*>(bytes), size);
}

// Scans `table` (a GPU or CPU GPHash) and expects exactly the pairs of
// `pairs`, a map of key bytes to value bytes; `what` labels failures.
template <typename Table, typename Map>
void ExpectScanFindsExactly(Table& table, const Map& pairs, uint32_t key_size, uint32_t value_size,
                            const std::string& what = "") {
  size_t scanned = 0;
  ASSERT_TRUE(table
                  .Scan([&](const uint8_t* key, const uint8_t* value) {
                    auto it = pairs.find(Bytes(key, key_size));
                    EXPECT_NE(it, pairs.end()) << what;
                    if (it != pairs.end()) {
                      EXPECT_EQ(Bytes(value, value_size), it->second) << what;
                    }
                    ++scanned;
                    return true;
                  })
                  .ok());
  EXPECT_EQ(scanned, pairs.size()) << what;
}

// gphash::VerifyGphash of table `root` (closed) in `pool`: no corruption,
// no finding above kInfo, `keys` keys, and in a cell table one cell in use
// per key. `table_report`, when given, receives the table's report.
inline void ExpectVerifiesClean(const pm::Pool& pool, uint64_t root, uint64_t keys,
                                recovery::TableReport* table_report = nullptr) {
  recovery::Report report;
  ASSERT_TRUE(gphash::VerifyGphash(pool, "t", 1, root, report, nullptr).ok());
  EXPECT_FALSE(report.HasCorruption());
  for (const recovery::Finding& finding : report.findings) {
    if (finding.severity != recovery::Finding::Severity::kInfo) ADD_FAILURE() << finding.message;
  }
  ASSERT_EQ(report.tables.size(), 1u);
  const recovery::TableReport& table = report.tables[0];
  EXPECT_EQ(table.keys, keys);
  if (table.value_cells_in_use + table.value_cells_unreferenced != 0) {
    EXPECT_EQ(table.value_cells_in_use, keys);
  }
  if (table_report != nullptr) *table_report = table;
}

}  // namespace gpkv::gphash::gpu::gpu_test
