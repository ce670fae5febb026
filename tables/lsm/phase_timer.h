// lsm::PhaseTimer: adds the host seconds of its scope to a sum, one phase of
// an ordered table's write profile (WriteCounters, the GPU backend's times).
//
// Who may call: tables/lsm/. Thread safety: as the sum it adds to.
#pragma once

#include <chrono>

namespace gpkv::lsm {

class PhaseTimer {
 public:
  explicit PhaseTimer(double* sum) : sum_(sum), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    *sum_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double* sum_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gpkv::lsm
