// The LSM family against std::map over more than a million mixed operations
// (lsm_oracle.h) on the CPU backend.
#include "lsm/lsm_oracle.h"

#include <gtest/gtest.h>

#include <tuple>

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

}  // namespace
}  // namespace gpkv
