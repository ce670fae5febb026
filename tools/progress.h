// A one-line progress display for long commands (load, verify, repair).
// It draws on stderr only when stderr is a terminal, so piped and redirected
// output never carries it; elsewhere every call is a no-op.
//
//   Progress progress("load", total_keys);
//   for (...) progress.Update(done);
//   progress.Finish();  // clears the line
//
// Thread safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gpkv::tools {

class Progress {
 public:
  // total == 0: unknown; the line shows the count and rate only.
  Progress(std::string label, uint64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  void set_total(uint64_t total) { total_ = total; }

  // Records `done` units and redraws at most ten times a second.
  void Update(uint64_t done);
  // Erases the line. Called by the destructor too; idempotent.
  void Finish();

 private:
  void Draw(uint64_t done);

  using Clock = std::chrono::steady_clock;
  const std::string label_;
  uint64_t total_;
  const bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

}  // namespace gpkv::tools
