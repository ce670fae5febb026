#include "tools/progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace gpkv::tools {
namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

// "12.3M" style counts keep the line short.
std::string ShortCount(double count) {
  char text[32];
  if (count >= 1e9) {
    std::snprintf(text, sizeof(text), "%.1fG", count / 1e9);
  } else if (count >= 1e6) {
    std::snprintf(text, sizeof(text), "%.1fM", count / 1e6);
  } else if (count >= 1e4) {
    std::snprintf(text, sizeof(text), "%.1fK", count / 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%.0f", count);
  }
  return text;
}

}  // namespace

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)),
      total_(total),
      enabled_(isatty(STDERR_FILENO) == 1),
      start_(Clock::now()),
      last_draw_(start_ - kRedrawInterval) {}

Progress::~Progress() { Finish(); }

void Progress::Update(uint64_t done) {
  if (!enabled_) return;
  Clock::time_point now = Clock::now();
  if (now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  Draw(done);
}

void Progress::Draw(uint64_t done) {
  double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  // \r returns to the start of the line, \x1b[K erases what is left of the
  // previous draw.
  if (total_ > 0) {
    double percent = 100.0 * static_cast<double>(done) / static_cast<double>(total_);
    std::fprintf(stderr, "\r%s: %s / %s (%.0f%%) %s/s\x1b[K", label_.c_str(),
                 ShortCount(static_cast<double>(done)).c_str(),
                 ShortCount(static_cast<double>(total_)).c_str(), percent,
                 ShortCount(rate).c_str());
  } else {
    std::fprintf(stderr, "\r%s: %s %s/s\x1b[K", label_.c_str(),
                 ShortCount(static_cast<double>(done)).c_str(), ShortCount(rate).c_str());
  }
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace gpkv::tools
