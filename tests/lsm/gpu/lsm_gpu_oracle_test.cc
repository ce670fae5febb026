// The LSM family against std::map over more than a million mixed operations
// (lsm/lsm_oracle.h) on the GPU backend (lsm::gpu::GpuBackend).
#include <gtest/gtest.h>

#include <tuple>

#include "gpu/device_memory.h"
#include "lsm/lsm_oracle.h"

namespace gpkv {
namespace {

// (worker threads, b, M), as the CPU oracle.
class LsmGpuOracle : public ::testing::TestWithParam<std::tuple<int, uint64_t, uint32_t>> {};

TEST_P(LsmGpuOracle, MixedOperationsMatchAStdMapAcrossCompactionsAndReopens) {
  Status usable = gpu::DeviceUsable();
  if (!usable.ok()) GTEST_SKIP() << usable.ToString();
  const auto [threads, batch_entries, log_batches] = GetParam();
  lsmtest::RunOracle(Backend::kCuda, threads, batch_entries, log_batches);
}

INSTANTIATE_TEST_SUITE_P(ThreadsBAndM, LsmGpuOracle,
                         ::testing::Values(std::tuple<int, uint64_t, uint32_t>{2, 256, 1},
                                           std::tuple<int, uint64_t, uint32_t>{2, 256, 8},
                                           std::tuple<int, uint64_t, uint32_t>{2, uint64_t{1} << 16,
                                                                               1}));

}  // namespace
}  // namespace gpkv
