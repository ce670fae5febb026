// The LSM family against std::map over more than a million mixed operations
// (lsm_oracle.h) on the CPU backend.
#include "lsm/lsm_oracle.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "lsm/lsm_layers.h"

namespace gpkv {
namespace {

// (worker threads, b, M). b = 2^16 keeps batches of up to 4000 keys in the
// write buffer long enough that it holds several runs (write_buffer.h); so
// does M = 8 with b = 256, whose log holds batches larger than b.
class LsmOracle : public ::testing::TestWithParam<std::tuple<int, uint64_t, uint32_t>> {};

TEST_P(LsmOracle, MixedOperationsMatchAStdMapAcrossCompactionsAndReopens) {
  const auto [threads, batch_entries, log_batches] = GetParam();
  lsmtest::RunOracle(Backend::kCpu, threads, batch_entries, log_batches);
}

INSTANTIATE_TEST_SUITE_P(ThreadsBAndM, LsmOracle,
                         ::testing::Values(std::tuple<int, uint64_t, uint32_t>{1, 256, 1},
                                           std::tuple<int, uint64_t, uint32_t>{2, 256, 1},
                                           std::tuple<int, uint64_t, uint32_t>{2, 256, 8},
                                           std::tuple<int, uint64_t, uint32_t>{2, uint64_t{1} << 16,
                                                                               1}));

// The layered workload (lsm_layers.h: runs on levels 0, 1, 2 and 4 behind
// the write buffer, most keys' newest entry past the first source a get
// searches) against a std::map, its gets through the levels' run filters;
// the GPU backend's oracle test runs it too.
TEST(LsmOracleLayers, GetsThroughTheLevelsFiltersMatchAStdMap) {
  for (const uint64_t u : {uint64_t{64}, uint64_t{1024}}) {
    SCOPED_TRACE("b = " + std::to_string(u));
    ASSERT_NO_FATAL_FAILURE(lsmtest::RunLayeredOracle(Backend::kCpu, u, OrderedGpuOptions()));
  }
}

}  // namespace
}  // namespace gpkv
