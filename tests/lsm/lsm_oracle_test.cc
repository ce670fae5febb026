// The LSM family against std::map over more than a million mixed operations
// (lsm_oracle.h) on the CPU backend.
#include "lsm/lsm_oracle.h"

#include <gtest/gtest.h>

#include <utility>

namespace gpkv {
namespace {

// (worker threads, b). b = 2^16 keeps batches of up to 4000 keys in the
// write buffer long enough that it holds several runs (write_buffer.h).
class LsmOracle : public ::testing::TestWithParam<std::pair<int, uint64_t>> {};

TEST_P(LsmOracle, MixedOperationsMatchAStdMapAcrossCompactionsAndReopens) {
  const auto [threads, batch_entries] = GetParam();
  lsmtest::RunOracle(Backend::kCpu, threads, batch_entries);
}

INSTANTIATE_TEST_SUITE_P(ThreadsAndB, LsmOracle,
                         ::testing::Values(std::pair<int, uint64_t>{1, 256},
                                           std::pair<int, uint64_t>{2, 256},
                                           std::pair<int, uint64_t>{2, uint64_t{1} << 16}));

}  // namespace
}  // namespace gpkv
