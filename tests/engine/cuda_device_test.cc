// Options::cuda_device's validation at DB::Open.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "gpkv/db.h"
#include "test_util.h"

namespace gpkv {
namespace {

Options CpuOptions() {
  Options options;
  options.create_if_missing = true;
  options.pool_size = uint64_t{64} << 20;
  options.cpu_threads = 2;
  options.backend = Backend::kCpu;
  return options;
}

TEST(CudaDevice, ANegativeOrdinalIsInvalidArgumentNamingIt) {
  testutil::TempPool temp("device-negative");
  for (Backend backend : {Backend::kCpu, Backend::kAuto, Backend::kCuda}) {
    Options options = CpuOptions();
    options.backend = backend;
    options.cuda_device = -1;
    auto db = DB::Open(temp.path(), options);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), Code::kInvalidArgument) << db.status().ToString();
    EXPECT_NE(db.status().message().find("Options::cuda_device -1"), std::string::npos)
        << db.status().ToString();
  }
}

TEST(CudaDevice, AnOrdinalPastTheDevicesIsRefusedOrRunsOnTheCpuWithoutAny) {
  testutil::TempPool temp("device-past");
  Options options = CpuOptions();
  options.backend = Backend::kAuto;
  options.cuda_device = 1000;
  auto db = DB::Open(temp.path(), options);
  if (!db.ok()) {
    // A machine with CUDA devices, none of them number 1000.
    EXPECT_EQ(db.status().code(), Code::kInvalidArgument) << db.status().ToString();
    EXPECT_NE(db.status().message().find("Options::cuda_device 1000"), std::string::npos)
        << db.status().ToString();
    return;
  }
  // No device at all: kAuto runs on the CPU, as ever.
  auto info = (*db)->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->backend, "cpu");
}

}  // namespace
}  // namespace gpkv
