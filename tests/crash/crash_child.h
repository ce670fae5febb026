// Runs a crash-test workload in a forked child that may stop itself at a
// persist point, and reports back what it acknowledged.
//
// The child opens the pool (recovery runs: its persist points count too), then
// runs steps [first_step, steps.size()), and after each acknowledged step
// sends the step index and the persist points passed so far through a pipe.
// With CrashMode::kProcessKill it ends with _exit at persist point crash_at
// (every store so far is in the file); with kPowerFailure the stores not yet
// persisted are each kept or dropped first (testutil::PowerFailureSimulator);
// with kNone it only counts persist points. One worker thread per batch, so
// point k of one run is point k of the next. With a KillTimer (SIGKILL
// tests) the child has the kernel send it SIGKILL at a moment of its run.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "crash_workload.h"
#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "power_failure.h"
#include "tables/gphash/layout.h"

namespace gpkv::crashtest {

enum class CrashMode { kNone, kProcessKill, kPowerFailure };

inline Options ChildOptions(int cpu_threads = 1) {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = cpu_threads;
  return options;
}

struct ChildPlan {
  std::string path;
  CrashMode mode = CrashMode::kNone;
  uint64_t crash_at = 0;                     // persist point, counted from DB::Open
  uint64_t seed = 0;                         // which unpersisted words a power failure drops
  const std::vector<Step>* steps = nullptr;  // nullptr: open (recover) and exit
  size_t first_step = 0;
  int cpu_threads = 1;  // workers per batch; 1 keeps the persist points in a fixed order
  // With kNone: also report each resize's start and end (records 3 and 4),
  // seen at the persist point that publishes a table's LevelSet.
  bool report_resizes = false;

  // With kNone: SIGKILL from a kernel timer the child arms at persist point
  // `at_point` (0-based, from DB::Open), `delay` seconds later. The signal
  // comes at any instruction of any thread, a little after that point of the
  // work however much load stretches the run, and no other process's
  // scheduling delays it (a parent's sleep and wake-up would: on a loaded
  // machine, by more than a resize lasts).
  struct KillTimer {
    bool armed = false;
    uint64_t at_point = 0;
    double delay = 0;
  };
  KillTimer kill;
};

struct ChildOutcome {
  int exit_code = -1;
  size_t acknowledged = 0;  // index one past the last acknowledged step
  uint64_t points_after_open = 0;
  std::vector<uint64_t> points_at_ack;  // per acknowledged step
  uint64_t total_points = 0;            // when the child ran to the end
  uint64_t resizes_started = 0;         // with report_resizes
  bool crashed() const { return exit_code == pm::kCrashExitCode; }
  bool completed() const { return exit_code == 0; }
};

namespace detail {

enum RecordType : uint32_t {
  kOpened = 0,
  kAcknowledged = 1,
  kEnd = 2,
  kResizeStarted = 3,
  kResizeFinished = 4,
};

struct Record {
  uint32_t type;  // RecordType
  uint32_t step;
  uint64_t points;
  int64_t sent_ns;  // steady_clock (one clock for every process) when it was sent
};

inline int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline void Send(int fd, uint32_t type, uint32_t step) {
  Record record{type, step, pm::TEST_PersistPointCount(), SteadyNanos()};
  if (write(fd, &record, sizeof(record)) != sizeof(record)) _exit(13);
}

// Arms a one-shot timer that has the kernel send this process SIGKILL in
// `delay` seconds.
inline void ArmKillTimer(double delay) {
  sigevent event{};
  event.sigev_notify = SIGEV_SIGNAL;
  event.sigev_signo = SIGKILL;
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) _exit(14);
  itimerspec when{};
  auto nanos = std::max<int64_t>(static_cast<int64_t>(delay * 1e9), 1);  // 0 would disarm it
  when.it_value.tv_sec = nanos / 1000000000;
  when.it_value.tv_nsec = nanos % 1000000000;
  if (timer_settime(timer, 0, &when, nullptr) != 0) _exit(14);
}

// Watches the persist points for the publish of a table's active LevelSet
// word (root + 64; a root is a 4 KiB extent starting with its magic) and
// reports whether the published LevelSet has the resizing flag.
struct ResizeWatch {
  const uint8_t* base = nullptr;
  size_t size = 0;
  int fd = -1;
};
inline ResizeWatch g_resize_watch;
inline ChildPlan::KillTimer g_kill_timer;

inline void WatchMap(void*, const uint8_t* base, size_t size, const char*) {
  g_resize_watch.base = base;
  g_resize_watch.size = size;
}

inline void WatchPersist(void*, const void* address, size_t length, uint64_t index) {
  if (g_kill_timer.armed && index == g_kill_timer.at_point) ArmKillTimer(g_kill_timer.delay);
  const ResizeWatch& watch = g_resize_watch;
  const uint8_t* at = static_cast<const uint8_t*>(address);
  if (length != 8 || watch.base == nullptr || at < watch.base || at >= watch.base + watch.size) {
    return;
  }
  uint64_t offset = static_cast<uint64_t>(at - watch.base);
  if (offset % format::kPageSize != offsetof(gphash::GphashRoot, active_levelset)) return;
  const uint8_t* root = at - offsetof(gphash::GphashRoot, active_levelset);
  uint64_t magic, active;
  std::memcpy(&magic, root, 8);
  if (magic != gphash::kGphashRootMagic) return;
  std::memcpy(&active, at, 8);
  uint32_t flags;
  std::memcpy(&flags,
              root + offsetof(gphash::GphashRoot, levelsets) +
                  gphash::ActiveLevelSetIndex(active) * sizeof(gphash::LevelSet) +
                  offsetof(gphash::LevelSet, flags),
              sizeof(flags));
  Send(watch.fd, (flags & gphash::kLevelSetResizing) ? kResizeStarted : kResizeFinished, 0);
}

[[noreturn]] inline void RunChild(const ChildPlan& plan, int fd) {
  g_kill_timer = plan.kill;
  switch (plan.mode) {
    case CrashMode::kNone:
      if (plan.report_resizes || plan.kill.armed) {
        g_resize_watch.fd = fd;
        pm::TEST_SetMapHook(&WatchMap, nullptr);
        pm::TEST_SetPersistHook(&WatchPersist, nullptr);
      } else {
        pm::TEST_CountPersistPoints();
      }
      break;
    case CrashMode::kProcessKill:
      pm::TEST_CrashAtPersistPoint(plan.crash_at);
      break;
    case CrashMode::kPowerFailure: {
      // Lives until _exit: the hooks point at it.
      auto* simulator = new testutil::PowerFailureSimulator(plan.crash_at, plan.seed);
      simulator->Install();
      break;
    }
  }
  auto db = DB::Open(plan.path, ChildOptions(plan.cpu_threads));
  if (!db.ok()) {
    std::fprintf(stderr, "crash child: open: %s\n", db.status().ToString().c_str());
    _exit(10);
  }
  Send(fd, kOpened, 0);
  if (plan.steps != nullptr) {
    for (size_t i = plan.first_step; i < plan.steps->size(); ++i) {
      Status status = RunStep(**db, (*plan.steps)[i]);
      if (!status.ok()) {
        std::fprintf(stderr, "crash child: step %zu: %s\n", i, status.ToString().c_str());
        _exit(12);
      }
      Send(fd, kAcknowledged, static_cast<uint32_t>(i));
    }
  }
  Send(fd, kEnd, 0);
  _exit(0);
}

}  // namespace detail

// Forks a child running `plan`; returns its pid and the read end of its pipe.
inline pid_t StartChild(const ChildPlan& plan, int* read_fd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (child == 0) {
    close(fds[0]);
    detail::RunChild(plan, fds[1]);
  }
  close(fds[1]);
  *read_fd = fds[0];
  return child;
}

// Reads what the child acknowledged until it ends, and reaps it.
inline ChildOutcome FinishChild(pid_t child, int read_fd, size_t first_step) {
  ChildOutcome outcome;
  outcome.acknowledged = first_step;
  if (child < 0) return outcome;
  detail::Record record;
  while (read(read_fd, &record, sizeof(record)) == sizeof(record)) {
    if (record.type == detail::kOpened) {
      outcome.points_after_open = record.points;
    } else if (record.type == detail::kAcknowledged) {
      outcome.acknowledged = record.step + 1;
      outcome.points_at_ack.push_back(record.points);
    } else if (record.type == detail::kEnd) {
      outcome.total_points = record.points;
    } else if (record.type == detail::kResizeStarted) {
      ++outcome.resizes_started;
    }
  }
  close(read_fd);
  int status = 0;
  waitpid(child, &status, 0);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

inline ChildOutcome RunInChild(const ChildPlan& plan) {
  int read_fd = -1;
  pid_t child = StartChild(plan, &read_fd);
  return FinishChild(child, read_fd, plan.first_step);
}

// Multiplier of the sample counts (environment GPKV_CRASH_SCALE, default 1):
// sanitizer builds run a fraction, a soak run many times more.
inline double CrashScale() {
  const char* text = std::getenv("GPKV_CRASH_SCALE");
  if (text == nullptr) return 1.0;
  double scale = std::atof(text);
  return scale > 0 ? scale : 1.0;
}

inline uint64_t Scaled(uint64_t count) {
  uint64_t scaled = static_cast<uint64_t>(static_cast<double>(count) * CrashScale());
  return scaled < 1 ? 1 : scaled;
}

// Seed of the sampled tests (environment GPKV_CRASH_SEED, default `fallback`);
// printed with the totals so that a failure can be replayed.
inline uint64_t CrashSeed(uint64_t fallback) {
  const char* text = std::getenv("GPKV_CRASH_SEED");
  return text == nullptr ? fallback : std::strtoull(text, nullptr, 0);
}

class Stopwatch {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace gpkv::crashtest
