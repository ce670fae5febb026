// The public tuning of the GPU hash table (Options::hash_gpu,
// Options::gpu_cache_fraction) reaches the CUDA backend through the engine,
// and the backend's cache of hot buckets reports its counters as
// "gphash.cache-*" properties: a DB opened in direct mode with a cache has
// one and counts the reads of its gets; mirror mode and a zero fraction
// have none. Device test: skipped when no CUDA device is usable (label
// `gpu`).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpkv/db.h"
#include "gpu_test_util.h"
#include "test_util.h"

namespace gpkv::gphash::gpu::gpu_test {
namespace {

constexpr uint64_t kKeys = uint64_t{1} << 16;

// The value of property `name` of `table`, or -1 when it has none.
double PropertyOf(Table& table, const char* name) {
  auto value = table.GetProperty(name);
  return value.ok() ? *value : -1;
}

// Opens a pool with `options` on the CUDA backend, loads kKeys keys, gets
// them all twice and returns the table's cache counters (slots, get reads
// served by the cache plus those over the link).
void LoadAndGet(const char* tag, Options options, double* cache_buckets, double* get_reads) {
  testutil::TempPool pool(tag);
  options.create_if_missing = true;
  options.pool_size = uint64_t{64} << 20;
  options.backend = ::gpkv::Backend::kCuda;
  auto db = DB::Open(pool.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions table_options;
  table_options.expected_keys = kKeys;
  auto table = (*db)->CreateTable("users", table_options);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> keys(kKeys), values(kKeys);
  for (uint64_t i = 0; i < kKeys; ++i) {
    keys[i] = i * 0x9e3779b97f4a7c15ull;
    values[i] = i + 1;
  }
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  std::vector<uint64_t> got(kKeys);
  std::vector<uint8_t> found(kKeys);
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE((*table)->Get(keys, got, found).ok());
    ASSERT_EQ(got, values);
  }
  *cache_buckets = PropertyOf(**table, "gphash.cache-buckets");
  *get_reads = PropertyOf(**table, "gphash.cache-get-reads") +
               PropertyOf(**table, "gphash.cache-get-pool-reads");
  EXPECT_GE(PropertyOf(**table, "gphash.cache-table-buckets"), *cache_buckets);
  EXPECT_GE(PropertyOf(**table, "gphash.cache-reloads"), 0);
  EXPECT_GE(PropertyOf(**table, "gphash.cache-buckets-loaded"), 0);
}

TEST(GphashGpuOptions, DirectModeWithACacheCountsItsReads) {
  SKIP_WITHOUT_DEVICE();
  Options options;
  options.hash_gpu.index_mode = HashGpuIndexMode::kDirect;
  options.gpu_cache_fraction = 0.5;
  double cache_buckets = 0, get_reads = 0;
  LoadAndGet("options-direct", options, &cache_buckets, &get_reads);
  EXPECT_GT(cache_buckets, 0);
  EXPECT_GT(get_reads, 0);
}

TEST(GphashGpuOptions, MirrorModeAndAZeroFractionKeepNoCache) {
  SKIP_WITHOUT_DEVICE();
  for (const bool mirror : {true, false}) {
    Options options;
    options.hash_gpu.index_mode = mirror ? HashGpuIndexMode::kMirror : HashGpuIndexMode::kDirect;
    options.gpu_cache_fraction = mirror ? 0.5 : 0;
    double cache_buckets = -1, get_reads = -1;
    LoadAndGet(mirror ? "options-mirror" : "options-nocache", options, &cache_buckets, &get_reads);
    EXPECT_EQ(cache_buckets, 0) << (mirror ? "mirror" : "direct without a cache");
    EXPECT_EQ(get_reads, 0) << (mirror ? "mirror" : "direct without a cache");
  }
}

}  // namespace
}  // namespace gpkv::gphash::gpu::gpu_test
