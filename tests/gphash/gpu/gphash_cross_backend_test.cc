// One pool file, two backends: a table written by gphash::cpu::CpuBackend opens on the
// GPU and answers the same, and the other way round, through resizes done by
// either side, with inline values and value cells (value_size > 8);
// gphash::VerifyGphash accepts what the GPU wrote (direct, mirror and
// staged mode); staged mode runs a pool file CUDA cannot register. Both
// backends give the same answers where the family's shared code decides:
// Scan visits the same pairs (winners only), a full level set is PoolFull,
// a resize that cannot empty its bottom level keeps it, a corrupt root is the
// same error.
// Device tests (label `gpu`); skipped when no CUDA device is usable.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gphash/cpu/gphash_test_util.h"
#include "gphash/full_level_set.h"
#include "gphash/full_top_level.h"
#include "gpu_test_util.h"
#include "pm/pool.h"
#include "tables/gphash/check.h"
#include "tables/gphash/cpu/backend.h"
#include "tables/gphash/gpu/backend.h"
#include "tables/gphash/layout.h"
#include "test_util.h"

namespace gpkv::gphash::gpu {
namespace {

// Expected contents: key bytes -> value bytes.
using Contents = std::map<std::string, std::string>;

struct Batch {
  std::vector<uint8_t> keys;
  std::vector<uint8_t> values;
  size_t count = 0;
};

Batch RandomBatch(std::mt19937_64& rng, size_t count, uint32_t key_size, uint32_t value_size) {
  Batch batch;
  batch.count = count;
  batch.keys.resize(count * key_size);
  batch.values.resize(count * value_size);
  for (auto& byte : batch.keys) byte = static_cast<uint8_t>(rng());
  for (auto& byte : batch.values) byte = static_cast<uint8_t>(rng());
  return batch;
}

void Apply(const Batch& batch, uint32_t key_size, uint32_t value_size, Contents* contents) {
  for (size_t i = 0; i < batch.count; ++i) {
    (*contents)[std::string(reinterpret_cast<const char*>(&batch.keys[i * key_size]), key_size)] =
        std::string(reinterpret_cast<const char*>(&batch.values[i * value_size]), value_size);
  }
}

// Looks every expected key up through `get` and checks the table has no more.
template <typename Table>
void ExpectContents(Table& table, const Contents& contents, uint32_t key_size, uint32_t value_size,
                    const char* backend) {
  std::vector<uint8_t> keys, values(contents.size() * value_size), found(contents.size());
  for (const auto& [key, value] : contents) keys.insert(keys.end(), key.begin(), key.end());
  ASSERT_TRUE(table.Get(keys.data(), values.data(), found.data(), contents.size()).ok());
  size_t i = 0;
  for (const auto& [key, value] : contents) {
    ASSERT_EQ(found[i], 1) << backend << " op " << i;
    ASSERT_EQ(std::memcmp(&values[i * value_size], value.data(), value_size), 0)
        << backend << " op " << i;
    ++i;
  }
  EXPECT_EQ(table.Stats().keys, contents.size()) << backend;
  gpu_test::ExpectScanFindsExactly(table, contents, key_size, value_size, backend);
}

// Opens the table on the CPU backend after the GPU wrote it: the pool
// verifies, open-time recovery finds nothing to do, and the CPU answers
// `contents`. Null (after a test failure) when the open fails.
std::unique_ptr<gphash::cpu::CpuBackend> OpenCleanOnCpu(pm::Pool& pool, uint64_t root,
                                                        const Contents& contents, uint32_t key_size,
                                                        uint32_t value_size, int threads,
                                                        const char* what) {
  gpu_test::ExpectVerifiesClean(pool, root, contents.size());
  recovery::Report report;
  auto table = gphash::cpu::CpuBackend::Open(pool, "t", root, threads, &report);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  EXPECT_EQ(report.slots_cleared, 0u);
  EXPECT_EQ(report.duplicates_removed, 0u);
  EXPECT_EQ(report.cells_reclaimed, 0u);
  ExpectContents(**table, contents, key_size, value_size, what);
  return std::move(table.value());
}

// Opens the table on the GPU after the CPU wrote it: it answers `contents`
// and counts the CPU's value bytes. Null (after a test failure) when the
// open fails.
std::unique_ptr<GpuBackend> OpenOnGpu(pm::Pool& pool, uint64_t root,
                                      const GpuTableOptions& gpu_options, const Contents& contents,
                                      uint32_t key_size, uint32_t value_size,
                                      uint64_t cpu_value_bytes, const char* what) {
  auto table = GpuBackend::Open(pool, "t", root, gpu_options, nullptr);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  ExpectContents(**table, contents, key_size, value_size, what);
  EXPECT_EQ((*table)->Stats().value_bytes, cpu_value_bytes) << what;
  return std::move(table.value());
}

// Keys of `contents` erased through `table`, every `stride`-th from the
// first, up to `limit`; each must report found.
template <typename Table>
void EraseSome(Table& table, size_t stride, size_t limit, uint32_t key_size, Contents* contents) {
  std::vector<uint8_t> keys;
  size_t i = 0;
  for (auto it = contents->begin(); it != contents->end() && keys.size() < limit * key_size; ++i) {
    if (i % stride != 0) {
      ++it;
      continue;
    }
    keys.insert(keys.end(), it->first.begin(), it->first.end());
    it = contents->erase(it);
  }
  std::vector<uint8_t> erased(keys.size() / key_size);
  ASSERT_TRUE(table.Erase(keys.data(), erased.data(), erased.size()).ok());
  EXPECT_EQ(erased, std::vector<uint8_t>(erased.size(), 1));
}

// New values for `count` keys of `contents`, every `stride`-th from the first.
Batch UpdateSome(std::mt19937_64& rng, const Contents& contents, size_t stride, size_t count,
                 uint32_t value_size) {
  Batch update;
  size_t i = 0;
  for (auto it = contents.begin(); it != contents.end() && update.count < count; ++it, ++i) {
    if (i % stride != 0) continue;
    update.keys.insert(update.keys.end(), it->first.begin(), it->first.end());
    for (uint32_t b = 0; b < value_size; ++b) update.values.push_back(static_cast<uint8_t>(rng()));
    ++update.count;
  }
  return update;
}

struct Shape {
  const char* name;
  uint32_t key_size;
  uint32_t value_size;
  GpuIndexMode mode;
};

class GphashCrossBackend : public ::testing::TestWithParam<Shape> {};

TEST_P(GphashCrossBackend, EachBackendReadsWhatTheOtherWroteThroughResizes) {
  SKIP_WITHOUT_DEVICE();
  const Shape& shape = GetParam();
  const uint32_t k = shape.key_size, v = shape.value_size;
  testutil::TempPool temp(std::string("cross-") + shape.name);
  std::mt19937_64 rng(99);
  Contents contents;
  uint64_t root = 0;
  GpuTableOptions gpu_options;
  gpu_options.index_mode = shape.mode;
  // Value bytes as the last writer left them: the other backend reads the
  // same value chunks from the root.
  uint64_t cpu_value_bytes = 0, gpu_value_bytes = 0;

  // 1. CPU creates and writes (past its first resize), and erases some.
  {
    auto pool = pm::Pool::Create(temp.path(), 128 << 20, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    TableOptions options;
    options.key_size = k;
    options.value_size = v;
    options.expected_keys = 1000;
    auto created = gphash::cpu::CpuBackend::Create(**pool, 1, options);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    root = *created;
    auto table = gphash::cpu::CpuBackend::Open(**pool, "t", root, 4, nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    Batch batch = RandomBatch(rng, 5000, k, v);
    ASSERT_TRUE((*table)->Put(batch.keys.data(), batch.values.data(), batch.count).ok());
    Apply(batch, k, v, &contents);
    ASSERT_TRUE((*table)->Erase(batch.keys.data(), nullptr, 1000).ok());
    for (size_t i = 0; i < 1000; ++i) {
      contents.erase(std::string(reinterpret_cast<const char*>(&batch.keys[i * k]), k));
    }
    EXPECT_GT((*table)->Stats().resizes, 0u);
    cpu_value_bytes = (*table)->Stats().value_bytes;
    if (v > 8) {
      EXPECT_GE(cpu_value_bytes, contents.size() * gphash::CellSizeFor(v));
    }
  }
  // 2. The GPU opens it, answers the same, writes more (resizing again).
  {
    auto pool = pm::Pool::Open(temp.path(), false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    auto table =
        OpenOnGpu(**pool, root, gpu_options, contents, k, v, cpu_value_bytes, "gpu reading cpu");
    ASSERT_NE(table, nullptr);
    uint64_t resizes = table->Stats().resizes;
    Batch batch = RandomBatch(rng, 20000, k, v);
    ASSERT_TRUE(table->Put(batch.keys.data(), batch.values.data(), batch.count).ok());
    Apply(batch, k, v, &contents);
    // Overwrite some CPU-written keys too.
    Batch update = RandomBatch(rng, 0, k, v);
    for (auto it = contents.begin(); update.count < 500; ++it, ++update.count) {
      update.keys.insert(update.keys.end(), it->first.begin(), it->first.end());
      for (uint32_t b = 0; b < v; ++b) update.values.push_back(static_cast<uint8_t>(rng()));
    }
    ASSERT_TRUE(table->Put(update.keys.data(), update.values.data(), update.count).ok());
    Apply(update, k, v, &contents);
    EXPECT_GT(table->Stats().resizes, resizes);
    ExpectContents(*table, contents, k, v, "gpu reading itself");
    // Erase keys of both writers.
    EraseSome(*table, 7, 1500, k, &contents);
    ExpectContents(*table, contents, k, v, "gpu after its erases");
    gpu_value_bytes = table->Stats().value_bytes;
  }
  // 3. verify accepts the GPU's bytes; the CPU reads them and writes more.
  {
    auto pool = pm::Pool::Open(temp.path(), false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    auto table = OpenCleanOnCpu(**pool, root, contents, k, v, 4, "cpu reading gpu");
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->Stats().value_bytes, gpu_value_bytes);
    Batch batch = RandomBatch(rng, 30000, k, v);
    ASSERT_TRUE(table->Put(batch.keys.data(), batch.values.data(), batch.count).ok());
    Apply(batch, k, v, &contents);
    // Overwrite and erase keys the GPU wrote.
    Batch update = UpdateSome(rng, contents, 3, 2000, v);
    ASSERT_TRUE(table->Put(update.keys.data(), update.values.data(), update.count).ok());
    Apply(update, k, v, &contents);
    EraseSome(*table, 11, 1000, k, &contents);
    ExpectContents(*table, contents, k, v, "cpu reading itself");
    cpu_value_bytes = table->Stats().value_bytes;
  }
  // 4. The GPU once more: reads, then updates, erases and inserts.
  {
    auto pool = pm::Pool::Open(temp.path(), false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    gpu_test::ExpectVerifiesClean(**pool, root, contents.size());
    auto table = OpenOnGpu(**pool, root, gpu_options, contents, k, v, cpu_value_bytes,
                           "gpu reading cpu again");
    ASSERT_NE(table, nullptr);
    Batch update = UpdateSome(rng, contents, 2, 5000, v);
    ASSERT_TRUE(table->Put(update.keys.data(), update.values.data(), update.count).ok());
    Apply(update, k, v, &contents);
    EraseSome(*table, 13, 1000, k, &contents);
    Batch batch = RandomBatch(rng, 5000, k, v);
    ASSERT_TRUE(table->Put(batch.keys.data(), batch.values.data(), batch.count).ok());
    Apply(batch, k, v, &contents);
    ExpectContents(*table, contents, k, v, "gpu reading itself again");
  }
  // 5. verify and the CPU accept that too.
  {
    auto pool = pm::Pool::Open(temp.path(), false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    auto table = OpenCleanOnCpu(**pool, root, contents, k, v, 4, "cpu reading gpu again");
    ASSERT_NE(table, nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GphashCrossBackend,
    ::testing::Values(Shape{"k8_v8_direct", 8, 8, GpuIndexMode::kDirect},
                      Shape{"k8_v8_mirror", 8, 8, GpuIndexMode::kMirror},
                      Shape{"k16_v5_direct", 16, 5, GpuIndexMode::kDirect},
                      Shape{"k32_v8_mirror", 32, 8, GpuIndexMode::kMirror},
                      Shape{"k8_v8_staged", 8, 8, GpuIndexMode::kStaged},
                      Shape{"k16_v5_staged", 16, 5, GpuIndexMode::kStaged},
                      // Value cells.
                      Shape{"k8_v16_direct", 8, 16, GpuIndexMode::kDirect},
                      Shape{"k16_v16_mirror", 16, 16, GpuIndexMode::kMirror},
                      Shape{"k8_v16_staged", 8, 16, GpuIndexMode::kStaged},
                      Shape{"k32_v128_direct", 32, 128, GpuIndexMode::kDirect},
                      Shape{"k8_v128_mirror", 8, 128, GpuIndexMode::kMirror},
                      Shape{"k16_v128_staged", 16, 128, GpuIndexMode::kStaged}),
    [](const ::testing::TestParamInfo<Shape>& info) { return std::string(info.param.name); });

TEST(GphashCrossBackend, GpuCreatedTableOpensOnCpu) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("cross-create");
  auto pool = pm::Pool::Create(temp.path(), 128 << 20, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  TableOptions options;
  auto root = GpuBackend::Create(**pool, 1, options);
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  gpu_test::ExpectVerifiesClean(**pool, *root, 0);
  auto table = gphash::cpu::CpuBackend::Open(**pool, "t", *root, 2, nullptr);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ((*table)->Stats().keys, 0u);
}

// A cell table (value_size > 8) the GPU backend creates and writes opens on
// the CPU, verifies and answers the same, and what the CPU then writes reads
// back on the GPU; in each index mode.
TEST(GphashCrossBackend, GpuCreatedCellTablesOpenOnCpu) {
  SKIP_WITHOUT_DEVICE();
  const uint32_t k = 8;
  for (uint32_t v : {16u, 128u}) {
    for (GpuIndexMode mode :
         {GpuIndexMode::kDirect, GpuIndexMode::kMirror, GpuIndexMode::kStaged}) {
      SCOPED_TRACE("value_size " + std::to_string(v) + " mode " +
                   std::to_string(static_cast<int>(mode)));
      testutil::TempPool temp("cross-cells-" + std::to_string(v) + "-" +
                              std::to_string(static_cast<int>(mode)));
      std::mt19937_64 rng(500 + v);
      Contents contents;
      GpuTableOptions gpu_options;
      gpu_options.index_mode = mode;
      uint64_t root = 0, gpu_value_bytes = 0, cpu_value_bytes = 0;
      {
        auto pool = pm::Pool::Create(temp.path(), 128 << 20, SyncMode::kBatch);
        ASSERT_TRUE(pool.ok());
        TableOptions options;
        options.key_size = k;
        options.value_size = v;
        options.expected_keys = 2000;  // the puts below resize it
        auto created = GpuBackend::Create(**pool, 1, options);
        ASSERT_TRUE(created.ok()) << created.status().ToString();
        root = *created;
        gpu_test::ExpectVerifiesClean(**pool, root, 0);
        auto table = GpuBackend::Open(**pool, "t", root, gpu_options, nullptr);
        ASSERT_TRUE(table.ok()) << table.status().ToString();
        EXPECT_EQ((*table)->value_size(), v);
        Batch batch = RandomBatch(rng, 20000, k, v);
        ASSERT_TRUE((*table)->Put(batch.keys.data(), batch.values.data(), batch.count).ok());
        Apply(batch, k, v, &contents);
        Batch update = UpdateSome(rng, contents, 4, 3000, v);
        ASSERT_TRUE((*table)->Put(update.keys.data(), update.values.data(), update.count).ok());
        Apply(update, k, v, &contents);
        EraseSome(**table, 9, 2000, k, &contents);
        EXPECT_GT((*table)->Stats().resizes, 0u);
        ExpectContents(**table, contents, k, v, "gpu");
        gpu_value_bytes = (*table)->Stats().value_bytes;
        EXPECT_GE(gpu_value_bytes, contents.size() * gphash::CellSizeFor(v));
      }
      {
        auto pool = pm::Pool::Open(temp.path(), false, SyncMode::kBatch);
        ASSERT_TRUE(pool.ok());
        auto table = OpenCleanOnCpu(**pool, root, contents, k, v, 2, "cpu reading gpu");
        ASSERT_NE(table, nullptr);
        EXPECT_EQ(table->Stats().value_bytes, gpu_value_bytes);
        Batch update = UpdateSome(rng, contents, 3, 3000, v);
        ASSERT_TRUE(table->Put(update.keys.data(), update.values.data(), update.count).ok());
        Apply(update, k, v, &contents);
        Batch batch = RandomBatch(rng, 5000, k, v);
        ASSERT_TRUE(table->Put(batch.keys.data(), batch.values.data(), batch.count).ok());
        Apply(batch, k, v, &contents);
        EraseSome(*table, 5, 1000, k, &contents);
        cpu_value_bytes = table->Stats().value_bytes;
      }
      auto pool = pm::Pool::Open(temp.path(), false, SyncMode::kBatch);
      ASSERT_TRUE(pool.ok());
      auto table =
          OpenOnGpu(**pool, root, gpu_options, contents, k, v, cpu_value_bytes, "gpu reading cpu");
      ASSERT_NE(table, nullptr);
    }
  }
}

// A pool file in the working directory (the build tree: ext4 or another disk
// file system on the GPU machines, whose page-cache mappings CUDA cannot
// register). kAuto runs it in staged mode; what it writes reads back on the
// CPU and verifies.
TEST(GphashCrossBackend, StagedModeRunsAPoolTheGpuCannotMap) {
  SKIP_WITHOUT_DEVICE();
  const std::string path = "gpkv-test-disk-" + std::to_string(::getpid()) + ".gpkv";
  std::remove(path.c_str());
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{path};
  const uint32_t k = 8, v = 8;
  TableOptions options;
  options.expected_keys = 4000;  // the puts below resize it several times
  uint64_t root = 0;
  Contents contents;
  std::mt19937_64 rng(77);
  {
    auto pool = pm::Pool::Create(path, 64 << 20, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    auto created = GpuBackend::Create(**pool, 1, options);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    root = *created;
    GpuTableOptions direct;
    direct.index_mode = GpuIndexMode::kDirect;
    auto refused = GpuBackend::Open(**pool, "t", root, direct, nullptr);
    if (refused.ok()) GTEST_SKIP() << "CUDA registers mappings of " << path << " here";
    ASSERT_TRUE(refused.status().IsUnsupported()) << refused.status().ToString();

    auto table = GpuBackend::Open(**pool, "t", root, GpuTableOptions{}, nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_TRUE((*table)->staged());
    for (int round = 0; round < 4; ++round) {
      Batch batch = RandomBatch(rng, 25000, k, v);
      ASSERT_TRUE((*table)->Put(batch.keys.data(), batch.values.data(), batch.count).ok());
      Apply(batch, k, v, &contents);
    }
    // Erase every third key.
    std::vector<uint8_t> erase_keys;
    size_t i = 0;
    for (auto it = contents.begin(); it != contents.end(); ++i) {
      if (i % 3 != 0) {
        ++it;
        continue;
      }
      erase_keys.insert(erase_keys.end(), it->first.begin(), it->first.end());
      it = contents.erase(it);
    }
    std::vector<uint8_t> erased(erase_keys.size() / k);
    ASSERT_TRUE((*table)->Erase(erase_keys.data(), erased.data(), erased.size()).ok());
    EXPECT_EQ(erased, std::vector<uint8_t>(erased.size(), 1));
    EXPECT_GT((*table)->Stats().resizes, 0u);
    ExpectContents(**table, contents, k, v, "staged");
  }
  auto pool = pm::Pool::Open(path, false, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  gpu_test::ExpectVerifiesClean(**pool, root, contents.size());
  auto table = gphash::cpu::CpuBackend::Open(**pool, "t", root, 2, nullptr);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ExpectContents(**table, contents, k, v, "cpu reading staged");
}

constexpr GpuIndexMode kModes[] = {GpuIndexMode::kDirect, GpuIndexMode::kMirror,
                                   GpuIndexMode::kStaged};

// Every pair a Scan visits, each once (a second visit fails the test).
template <typename Table>
Contents ScanAll(Table& table, uint32_t key_size, uint32_t value_size, const char* backend) {
  Contents seen;
  EXPECT_TRUE(table
                  .Scan([&](const uint8_t* key, const uint8_t* value) {
                    std::string k(reinterpret_cast<const char*>(key), key_size);
                    EXPECT_EQ(seen.count(k), 0u) << backend << ": a key visited twice";
                    seen[k] = std::string(reinterpret_cast<const char*>(value), value_size);
                    return true;
                  })
                  .ok());
  return seen;
}

// Keys held twice in the pool (a losing copy planted below the winner, as a
// racing insert leaves it until recovery) are visited once by the GPU
// backend's Scan, and the CPU backend scans the same pairs.
TEST(GphashCrossBackend, ScanVisitsTheSamePairsOnBothBackends) {
  SKIP_WITHOUT_DEVICE();
  for (uint32_t v : {8u, 64u}) {
    for (GpuIndexMode mode : kModes) {
      SCOPED_TRACE("value_size " + std::to_string(v) + " mode " +
                   std::to_string(static_cast<int>(mode)));
      testutil::TempPool temp("cross-scan");
      auto pool = pm::Pool::Create(temp.path(), 64 << 20, SyncMode::kBatch);
      ASSERT_TRUE(pool.ok());
      TableOptions options;
      options.value_size = v;
      options.expected_keys = 1000;
      auto root = GpuBackend::Create(**pool, 1, options);
      ASSERT_TRUE(root.ok()) << root.status().ToString();
      std::mt19937_64 rng(7);
      Batch batch = RandomBatch(rng, 300, 8, v);
      Contents contents;
      Apply(batch, 8, v, &contents);
      Contents on_gpu;
      {
        GpuTableOptions gpu_options;
        gpu_options.index_mode = mode;
        auto table = GpuBackend::Open(**pool, "t", *root, gpu_options, nullptr);
        ASSERT_TRUE(table.ok()) << table.status().ToString();
        ASSERT_TRUE((*table)->Put(batch.keys.data(), batch.values.data(), batch.count).ok());
        auto view = gphash::ReadGphash(**pool, "t", *root);
        ASSERT_TRUE(view.ok());
        uint32_t planted = 0;
        for (size_t i = 0; i < batch.count && planted < 10; ++i) {
          planted += gphash_test::PlantLosingCopy(**pool, *view, &batch.keys[i * 8]);
        }
        ASSERT_GT(planted, 0u);
        on_gpu = ScanAll(**table, 8, v, "gpu");
      }
      EXPECT_EQ(on_gpu, contents);
      auto table = gphash::cpu::CpuBackend::Open(**pool, "t", *root, 2, nullptr);
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      EXPECT_EQ(ScanAll(**table, 8, v, "cpu"), on_gpu);
    }
  }
}

// A level set of kMaxLevels levels cannot grow: PoolFull naming the table's
// root on the GPU, as on the CPU (tests/gphash/cpu/gphash_resize_test.cc),
// and every acknowledged put stays.
TEST(GphashCrossBackend, AFullLevelSetIsPoolFullOnBothBackends) {
  SKIP_WITHOUT_DEVICE();
  for (GpuIndexMode mode : kModes) {
    SCOPED_TRACE("mode " + std::to_string(static_cast<int>(mode)));
    testutil::TempPool temp("cross-full-levelset");
    auto pool = pm::Pool::Create(temp.path(), 64 << 20, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    TableOptions options;
    options.hash.initial_top_buckets = 256;
    auto root = GpuBackend::Create(**pool, 7, options);
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    gphash_test::FillLevelSet(**pool, 7, *root);
    GpuTableOptions gpu_options;
    gpu_options.index_mode = mode;
    auto table = GpuBackend::Open(**pool, "t", *root, gpu_options, nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_EQ((*table)->Stats().levels, gphash::kMaxLevels);
    std::mt19937_64 rng(11);
    Contents acknowledged;
    Status status;
    for (int round = 0; status.ok() && round < 2000; ++round) {
      Batch batch = RandomBatch(rng, 64, 8, 8);
      status = (*table)->Put(batch.keys.data(), batch.values.data(), batch.count);
      if (status.ok()) Apply(batch, 8, 8, &acknowledged);
    }
    ASSERT_TRUE(status.IsPoolFull()) << status.ToString();
    EXPECT_NE(status.message().find(temp.path() + ": table 't' root (offset "), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("cannot grow past 8 levels"), std::string::npos)
        << status.message();
    ASSERT_FALSE(acknowledged.empty());
    std::vector<uint8_t> keys, values(acknowledged.size() * 8), found(acknowledged.size());
    for (const auto& [key, value] : acknowledged) keys.insert(keys.end(), key.begin(), key.end());
    ASSERT_TRUE((*table)->Get(keys.data(), values.data(), found.data(), acknowledged.size()).ok());
    size_t i = 0;
    for (const auto& [key, value] : acknowledged) {
      ASSERT_EQ(found[i], 1) << i;
      ASSERT_EQ(std::memcmp(&values[i * 8], value.data(), 8), 0) << i;
      ++i;
    }
  }
}

// A resize whose bottom level cannot be emptied keeps it on the GPU as on the
// CPU (tests/gphash/cpu/gphash_resize_test.cc): the open finishes it with one
// more level, every key stays readable, the table goes on growing, and the
// CPU reads the same pairs.
TEST(GphashCrossBackend, ABottomLevelThatCannotBeEmptiedStaysOnBothBackends) {
  SKIP_WITHOUT_DEVICE();
  for (GpuIndexMode mode : kModes) {
    SCOPED_TRACE("mode " + std::to_string(static_cast<int>(mode)));
    testutil::TempPool temp("cross-kept-bottom");
    auto pool = pm::Pool::Create(temp.path(), 64 << 20, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    TableOptions options = gphash_test::Options(8, 8, /*levels=*/1, /*locations=*/1, /*slots=*/8);
    options.hash.initial_top_buckets = 16;
    auto root = GpuBackend::Create(**pool, 7, options);
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    GpuTableOptions gpu_options;
    gpu_options.index_mode = mode;
    auto keys_of = [](uint64_t first, uint64_t end) {
      std::vector<uint8_t> keys((end - first) * 8);
      for (uint64_t id = first; id < end; ++id)
        gphash_test::MakeKey(id, 8, &keys[(id - first) * 8]);
      return keys;
    };
    auto values_of = [](uint64_t first, uint64_t end, uint64_t version) {
      std::vector<uint8_t> values((end - first) * 8);
      for (uint64_t id = first; id < end; ++id) {
        gphash_test::MakeValue(id, version, 8, &values[(id - first) * 8]);
      }
      return values;
    };
    {
      auto table = GpuBackend::Open(**pool, "t", *root, gpu_options, nullptr);
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      ASSERT_TRUE((*table)->Put(keys_of(0, 24).data(), values_of(0, 24, 1).data(), 24).ok());
      ASSERT_EQ((*table)->Stats().levels, 1u);
    }
    std::vector<uint64_t> fillers;
    gphash_test::InterruptResizeWithFullTop(
        **pool, 7, *root, /*first_filler=*/1000000,
        [](uint64_t id, uint8_t* out) { gphash_test::MakeKey(id, 8, out); },
        [](uint64_t id, uint8_t* out) { gphash_test::MakeValue(id, 1, 8, out); }, &fillers);
    Contents expected;
    auto expect = [&](uint64_t id, uint64_t version) {
      uint8_t key[8], value[8];
      gphash_test::MakeKey(id, 8, key);
      gphash_test::MakeValue(id, version, 8, value);
      expected[std::string(reinterpret_cast<char*>(key), 8)] =
          std::string(reinterpret_cast<char*>(value), 8);
    };
    for (uint64_t id = 0; id < 24; ++id) expect(id, 1);
    for (uint64_t id : fillers) expect(id, 1);
    {
      auto table = GpuBackend::Open(**pool, "t", *root, gpu_options, nullptr);
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      gphash::Stats stats = (*table)->Stats();
      EXPECT_FALSE(stats.resizing);
      EXPECT_EQ(stats.levels, 2u);
      EXPECT_EQ(stats.resizes, 1u);
      EXPECT_EQ(stats.keys, expected.size());
      EXPECT_EQ(ScanAll(**table, 8, 8, "gpu"), expected);
      ASSERT_TRUE((*table)->Put(keys_of(100, 700).data(), values_of(100, 700, 2).data(), 600).ok());
      EXPECT_GT((*table)->Stats().resizes, 1u);
      for (uint64_t id = 100; id < 700; ++id) expect(id, 2);
      EXPECT_EQ(ScanAll(**table, 8, 8, "gpu"), expected);
    }
    auto table = GpuBackend::Open(**pool, "t", *root, gpu_options, nullptr);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_EQ(ScanAll(**table, 8, 8, "gpu"), expected);
    table->reset();
    auto on_cpu = gphash::cpu::CpuBackend::Open(**pool, "t", *root, 2, nullptr);
    ASSERT_TRUE(on_cpu.ok()) << on_cpu.status().ToString();
    EXPECT_EQ(ScanAll(**on_cpu, 8, 8, "cpu"), expected);
  }
}

// A root that cannot be trusted is the same error, word for word, on both
// backends: both read it through gphash::ReadGphash.
TEST(GphashCrossBackend, ACorruptRootIsTheSameErrorOnBothBackends) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("cross-corrupt-root");
  auto pool = pm::Pool::Create(temp.path(), 64 << 20, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  TableOptions options;
  options.expected_keys = 1000;
  auto root = GpuBackend::Create(**pool, 1, options);
  ASSERT_TRUE(root.ok());
  auto* stored = (*pool)->At<gphash::GphashRoot>(*root);
  for (uint64_t* field : {&stored->checksum, &stored->levelsets[0].levels[0].bucket_count}) {
    *field ^= 0x40;
    auto on_cpu = gphash::cpu::CpuBackend::Open(**pool, "t", *root, 2, nullptr);
    auto on_gpu = GpuBackend::Open(**pool, "t", *root, GpuTableOptions{}, nullptr);
    ASSERT_TRUE(on_cpu.status().IsCorruption()) << on_cpu.status().ToString();
    EXPECT_EQ(on_gpu.status().code(), on_cpu.status().code()) << on_gpu.status().ToString();
    EXPECT_EQ(on_gpu.status().message(), on_cpu.status().message());
    EXPECT_NE(on_cpu.status().message().find("table 't'"), std::string::npos);
    *field ^= 0x40;
  }
}

}  // namespace
}  // namespace gpkv::gphash::gpu
