// The volatile ordered table on a machine with a CUDA device: a DB on
// Backend::kAuto or kCuda runs it on the GPU backend (on the device
// Options::cuda_device names), and one on kCpu keeps it on the CPU.
#include <gtest/gtest.h>

#include "btree/btree_test_util.h"
#include "gpu/device_memory.h"
#include "tables/btree/table.h"

namespace gpkv::btreetest {
namespace {

#define SKIP_WITHOUT_DEVICE()                            \
  do {                                                   \
    ::gpkv::Status usable = ::gpkv::gpu::DeviceUsable(); \
    if (!usable.ok()) GTEST_SKIP() << usable.ToString(); \
  } while (0)

// A table of `backend`'s DB: its stats name the backend it runs on.
void ExpectRunsOn(Backend backend, const std::string& expected, const std::string& tag) {
  testutil::TempPool temp(tag);
  Options options = CpuOptions();
  options.backend = backend;
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
  EXPECT_EQ(stats->backend, expected);
  EXPECT_EQ(stats->fallback, "");
}

TEST(BtreeGpu, AutoRunsTheTableOnTheGpu) {
  SKIP_WITHOUT_DEVICE();
  ExpectRunsOn(Backend::kAuto, "cuda", "btree-gpu-auto");
}

TEST(BtreeGpu, ACudaDbRunsTheTableOnTheGpu) {
  SKIP_WITHOUT_DEVICE();
  ExpectRunsOn(Backend::kCuda, "cuda", "btree-gpu-cuda");
}

TEST(BtreeGpu, ACpuDbKeepsTheTableOnTheCpu) {
  SKIP_WITHOUT_DEVICE();
  ExpectRunsOn(Backend::kCpu, "cpu", "btree-gpu-cpu");
}

// A device number past the machine's devices: Unsupported, which the engine's
// rule turns into the CPU under kAuto.
TEST(BtreeGpu, ADeviceThatIsNotThereIsUnsupported) {
  SKIP_WITHOUT_DEVICE();
  auto table = btree::OpenEmptyTable("pool.gpkv: table 't'", "t", VolatileOrdered(), Backend::kCuda,
                                     1, gpu::DeviceCount() + 3);
  ASSERT_TRUE(table.status().IsUnsupported()) << table.status().ToString();
}

}  // namespace
}  // namespace gpkv::btreetest
