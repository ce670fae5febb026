// The volatile ordered table on a machine with a CUDA device: the family has
// no GPU backend yet, so a DB on Backend::kAuto runs it on the CPU backend
// and says why (TableStats::fallback), and a DB on kCuda gets Unsupported.
#include <gtest/gtest.h>

#include "btree/btree_test_util.h"
#include "gpu/device_memory.h"

namespace gpkv::btreetest {
namespace {

#define SKIP_WITHOUT_DEVICE()                            \
  do {                                                   \
    ::gpkv::Status usable = ::gpkv::gpu::DeviceUsable(); \
    if (!usable.ok()) GTEST_SKIP() << usable.ToString(); \
  } while (0)

TEST(BtreeGpu, AutoRunsTheTableOnTheCpuAndSaysWhy) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("btree-gpu-auto");
  Options options = CpuOptions();
  options.backend = Backend::kAuto;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("t", VolatileOrdered());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_TRUE((*table)->Put(std::vector<uint64_t>{2, 1}, std::vector<uint64_t>{20, 10}).ok());
  std::vector<uint64_t> lo{0}, hi{5}, counts(1);
  ASSERT_TRUE((*table)->Count(lo, hi, counts).ok());
  EXPECT_EQ(counts[0], 2u);
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->backend, "cpu");
  EXPECT_NE(stats->fallback.find("table 't': runs on the CPU backend"), std::string::npos)
      << stats->fallback;
  EXPECT_NE(stats->fallback.find("no GPU backend"), std::string::npos) << stats->fallback;
}

TEST(BtreeGpu, ACudaDbGetsUnsupported) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("btree-gpu-cuda");
  Options options = CpuOptions();
  options.backend = Backend::kCuda;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("t", VolatileOrdered());
  ASSERT_TRUE(table.status().IsUnsupported()) << table.status().ToString();
  EXPECT_NE(table.status().message().find("no GPU backend"), std::string::npos)
      << table.status().ToString();
}

}  // namespace
}  // namespace gpkv::btreetest
