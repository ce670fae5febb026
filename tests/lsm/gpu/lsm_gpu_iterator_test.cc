// Table::NewIterator and Range's per-query limit on the LSM's GPU backend
// against a std::map (ordered_iterator_oracle.h): the CPU backend's oracle
// of tables/ordered_iterator_test.cc, run on the device.
#include <gtest/gtest.h>

#include <cstdint>

#include "gpu/device_memory.h"
#include "ordered_iterator_oracle.h"

namespace gpkv {
namespace {

class LsmGpuIteratorOracle : public ::testing::TestWithParam<uint32_t> {};

TEST_P(LsmGpuIteratorOracle, SeeksStepsBoundsAndLimitedRangesMatchAStdMap) {
  Status usable = gpu::DeviceUsable();
  if (!usable.ok()) GTEST_SKIP() << usable.ToString();
  itertest::RunIteratorOracle(Backend::kCuda, Durability::kPersistent, GetParam());
}

INSTANTIATE_TEST_SUITE_P(KeySizes, LsmGpuIteratorOracle, ::testing::Values(8u, 16u, 32u));

}  // namespace
}  // namespace gpkv
