// Options::cuda_device's validation at DB::Open, and what Stats says of
// where a CPU table runs (TableStats::device, mode).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "gpkv/db.h"
#include "test_util.h"

namespace gpkv {
namespace {

using testutil::TableOf;

Options CpuOptions() { return testutil::DbOptions(uint64_t{64} << 20, /*threads=*/2); }

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

TEST(CudaDevice, StatsOfACpuTableSayNoDeviceAndNoMode) {
  testutil::TempPool temp("device-stats");
  auto db = DB::Open(temp.path(), CpuOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  int index = 0;
  for (auto [kind, durability] : {std::make_pair(TableKind::kHash, Durability::kPersistent),
                                  std::make_pair(TableKind::kHash, Durability::kVolatile),
                                  std::make_pair(TableKind::kOrdered, Durability::kPersistent),
                                  std::make_pair(TableKind::kOrdered, Durability::kVolatile)}) {
    auto table = (*db)->CreateTable("t" + std::to_string(index++), TableOf(kind, durability));
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto stats = (*table)->Stats();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->backend, "cpu");
    EXPECT_EQ(stats->device, -1);
    EXPECT_EQ(stats->mode, "");
  }
}

}  // namespace
}  // namespace gpkv
