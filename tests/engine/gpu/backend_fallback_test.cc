// The engine's Backend::kAuto fallback on a machine with a usable GPU: a
// table the GPU cannot take runs on the CPU backend, and its stats say so in
// one message; a DB that asked for kCuda gets the GPU's error instead.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpkv/db.h"
#include "gpu/device_memory.h"
#include "test_util.h"

namespace gpkv {
namespace {

TEST(BackendFallback, ATableTheGpuCannotTakeRunsOnTheCpuUnderAutoAndFailsUnderCuda) {
  if (!gpu::DeviceUsable().ok()) GTEST_SKIP() << "no usable CUDA device";
  testutil::TempPool temp("fallback");
  Options options;
  options.create_if_missing = true;
  options.pool_size = 64 << 20;
  options.cpu_threads = 2;
  options.backend = Backend::kAuto;
  {
    auto db = DB::Open(temp.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_EQ((*db)->Info()->backend, "cuda");
    // A volatile hash table sized for 2^40 pairs of 32 + 128 bytes: no GPU
    // has the memory for its buckets (the CPU backend starts it small).
    TableOptions huge;
    huge.durability = Durability::kVolatile;
    huge.key_size = 32;
    huge.value_size = 128;
    huge.expected_keys = uint64_t{1} << 40;
    auto table = (*db)->CreateTable("huge", huge);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto stats = (*table)->Stats();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->backend, "cpu");
    EXPECT_NE(stats->fallback.find("table 'huge': runs on the CPU backend"), std::string::npos)
        << stats->fallback;
    std::vector<uint8_t> keys(32, 7);
    std::vector<uint8_t> values(128, 9);
    ASSERT_TRUE((*table)->Put(keys, values).ok());
    std::vector<uint8_t> read(128, 0);
    ASSERT_TRUE((*table)->Get(keys, read, {}).ok());
    EXPECT_EQ(read, values);

    auto small = (*db)->CreateTable("small", TableOptions{});
    ASSERT_TRUE(small.ok()) << small.status().ToString();
    auto small_stats = (*small)->Stats();
    ASSERT_TRUE(small_stats.ok()) << small_stats.status().ToString();
    EXPECT_EQ(small_stats->backend, "cuda");
    EXPECT_EQ(small_stats->fallback, "");
  }
  // Asked for the GPU by name: the table the GPU cannot take is an error.
  options.backend = Backend::kCuda;
  auto db = DB::Open(temp.path(), options);
  EXPECT_EQ(db.status().code(), Code::kOutOfDeviceMemory) << db.status().ToString();
}

}  // namespace
}  // namespace gpkv
