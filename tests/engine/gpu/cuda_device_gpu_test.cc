// The device a DB runs on (Options::cuda_device) on a machine with one, and
// what Stats says of where each table runs (TableStats::device, mode).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "engine/gpu/device_zero.h"
#include "gpkv/db.h"
#include "gpu/device_memory.h"
#include "test_util.h"

namespace gpkv {
namespace {

using testutil::CudaOptions;

TEST(CudaDeviceGpu, StatsNameTheDeviceAndTheIndexMode) {
  SKIP_WITHOUT_DEVICE_0();
  testutil::TempPool temp("async-stats");
  Options options = CudaOptions();
  options.hash_gpu.index_mode = HashGpuIndexMode::kMirror;
  {
    auto db = DB::Open(temp.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto hash = (*db)->CreateTable("hash", TableOptions{});
    ASSERT_TRUE(hash.ok()) << hash.status().ToString();
    TableOptions ordered;
    ordered.kind = TableKind::kOrdered;
    auto lsm = (*db)->CreateTable("ordered", ordered);
    ASSERT_TRUE(lsm.ok()) << lsm.status().ToString();
    auto hash_stats = (*hash)->Stats();
    ASSERT_TRUE(hash_stats.ok()) << hash_stats.status().ToString();
    EXPECT_EQ(hash_stats->backend, "cuda");
    EXPECT_EQ(hash_stats->device, 0);
    EXPECT_EQ(hash_stats->mode, "mirror");
    auto lsm_stats = (*lsm)->Stats();
    ASSERT_TRUE(lsm_stats.ok()) << lsm_stats.status().ToString();
    EXPECT_EQ(lsm_stats->backend, "cuda");
    EXPECT_EQ(lsm_stats->device, 0);
    EXPECT_EQ(lsm_stats->mode, "");
  }
  options.hash_gpu.index_mode = HashGpuIndexMode::kStaged;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto hash = (*db)->OpenTable("hash");
  ASSERT_TRUE(hash.ok()) << hash.status().ToString();
  auto stats = (*hash)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->mode, "staged");
}

TEST(CudaDeviceGpu, ADeviceThisMachineDoesNotHaveIsRefusedByName) {
  SKIP_WITHOUT_DEVICE_0();
  testutil::TempPool temp("async-device");
  Options options = CudaOptions();
  options.cuda_device = gpu::DeviceCount();  // one past the last
  for (Backend backend : {Backend::kCuda, Backend::kAuto}) {
    options.backend = backend;
    auto db = DB::Open(temp.path(), options);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), Code::kInvalidArgument) << db.status().ToString();
    EXPECT_NE(db.status().message().find("cuda_device " + std::to_string(options.cuda_device)),
              std::string::npos)
        << db.status().ToString();
  }
}

}  // namespace
}  // namespace gpkv
