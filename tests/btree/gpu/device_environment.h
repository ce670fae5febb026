// The GPU programs of the B-tree's tests skip every test where this process
// has no usable CUDA device.
#pragma once

#include <gtest/gtest.h>

#include "gpu/device_memory.h"

namespace gpkv::btreetest {

class DeviceEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const Status usable = gpu::DeviceUsable();
    if (!usable.ok()) GTEST_SKIP() << usable.ToString();
  }
};

inline ::testing::Environment* const kDeviceEnvironment =
    ::testing::AddGlobalTestEnvironment(new DeviceEnvironment);

}  // namespace gpkv::btreetest
