// gpkv-bench: the benchmark program. Parses the options
// (bench/gpkv_bench_options.h), runs one suite of the benchmark engine
// (bench/gpkv_bench.h; the GPU suite bench/gpu/gpu_bench.h; the slab hash's
// suite bench/gpu/slab_bench.h; the B-tree's bench/gpu/btree_bench.h) with a progress line on a
// terminal, and prints the report: a table, or JSON with --json.
//
// Exit codes: 0 ok, 1 usage, 2 corruption found, 3 other error. Errors go to stderr as
// "gpkv-bench: <message>"; the report goes to stdout; the progress line
// appears on stderr only when it is a terminal.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/gpkv_bench.h"
#include "bench/gpkv_bench_options.h"
#include "bench/gpu/btree_bench.h"
#include "bench/gpu/gpu_bench.h"
#include "bench/gpu/slab_bench.h"

namespace gpkv::bench {
namespace {

constexpr const char* kDescription =
    "gpkv-bench: measure gpkv beside libcuckoo and RocksDB (suites foundation, ycsb, sweep), an "
    "ordered table beside RocksDB and LMDB (suite ordered), the CUDA backend's modes beside the "
    "CPU "
    "backend and a naive GPU table (suite gpu), the volatile slab hash beside the persistent "
    "hash table (suite slab), or the volatile ordered table beside the LSM and the slab hash "
    "(suite btree): a table, or JSON with --json.\n"
    "Exit codes: 0 ok, 1 usage, 2 corruption found, 3 other error.";

// Prints "gpkv-bench: <message>" to stderr.
void PrintError(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "gpkv-bench: %s\n", message.c_str());
}

// The exit code for a failed Status: 1 for an argument refused, 2 for
// corruption, 3 otherwise.
int ExitCodeFor(const Status& status) {
  if (status.ok()) return kExitOk;
  if (status.IsInvalidArgument()) return kExitUsage;
  return status.IsCorruption() ? kExitCorruption : kExitError;
}

// The engine's progress as a one-line display on stderr, drawn only when
// stderr is a terminal and at most ten times a second; erased when a
// measurement ends.
class TerminalProgress : public ProgressSink {
 public:
  void Start(const std::string& label, uint64_t total) override {
    label_ = label;
    total_ = total;
    start_ = Clock::now();
    last_draw_ = start_ - kRedrawInterval;
  }
  void Update(uint64_t done) override {
    if (!enabled_) return;
    const Clock::time_point now = Clock::now();
    if (now - last_draw_ < kRedrawInterval) return;
    last_draw_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
    // \r returns to the start of the line, \x1b[K erases the rest of the
    // previous draw.
    if (total_ > 0) {
      const double percent = 100.0 * static_cast<double>(done) / static_cast<double>(total_);
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
  void Finish() override {
    if (!drawn_) return;
    std::fprintf(stderr, "\r\x1b[K");
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

  // "12.3M" style counts keep the line short.
  static std::string ShortCount(double count) {
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

  const bool enabled_ = isatty(STDERR_FILENO) == 1;
  bool drawn_ = false;
  std::string label_;
  uint64_t total_ = 0;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

// Where the JSON report goes.
struct JsonTarget {
  bool to_stdout = false;  // instead of the table
  std::string file;        // as well as the table
};

// Fills *target from --json [FILE] and --json-file; false (after the usage
// error) when they name two files.
bool ReadJsonTarget(const BenchArgs& args, JsonTarget* target) {
  if (args.json->count() > 0) {
    target->to_stdout = args.json_value.empty();
    target->file = args.json_value;
  }
  if (!args.json_file.empty()) {
    if (!target->file.empty() && target->file != args.json_file) {
      PrintError("--json=" + target->file + " and --json-file " + args.json_file +
                 ": one JSON file at a time");
      return false;
    }
    target->file = args.json_file;
  }
  return true;
}

// Writes `text` to `path`; false (after the error) when it cannot.
bool WriteFile(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  bool written = file != nullptr && std::fputs(text.c_str(), file) >= 0;
  if (file != nullptr) written &= std::fclose(file) == 0;
  if (!written) PrintError(path + ": cannot write the JSON report");
  return written;
}

int RunCpuSuite(const BenchConfig& config, const JsonTarget& json) {
  Status valid = ValidateConfig(config);
  if (!valid.ok()) {
    PrintError(valid.message());
    return ExitCodeFor(valid);
  }
  TerminalProgress progress;
  BenchReport report;
  bool ok = RunBench(config, &progress, &report);
  if (json.to_stdout) {
    PrintJson(report, stdout);
  } else {
    PrintText(report, stdout);
  }
  std::fflush(stdout);
  if (!json.file.empty()) {
    std::FILE* file = std::fopen(json.file.c_str(), "w");
    if (file == nullptr) {
      PrintError(json.file + ": cannot write the JSON report");
      return kExitError;
    }
    PrintJson(report, file);
    std::fclose(file);
  }
  if (!ok) {
    PrintError("some measurements failed (see the notes in the report)");
    return kExitError;
  }
  return kExitOk;
}

// A suite that prints its lines for people as it measures and returns JSON
// lines (gpu, slab): `valid` is its configuration check, `run` the run.
int RunLineSuite(const Status& valid,
                 const std::function<Status(std::FILE* text, std::string* json_lines)>& run,
                 const JsonTarget& json) {
  if (!valid.ok()) {
    PrintError(valid.message());
    return ExitCodeFor(valid);
  }
  // JSON on stdout: the lines for people go to stderr.
  std::string json_lines;
  Status ran = run(json.to_stdout ? stderr : stdout, &json_lines);
  std::fflush(stdout);
  if (!ran.ok()) {
    PrintError(ran.ToString());
    return kExitError;
  }
  if (json.to_stdout) std::fputs(json_lines.c_str(), stdout);
  if (!json.file.empty() && !WriteFile(json.file, json_lines)) return kExitError;
  return kExitOk;
}

int RunBenchCommand(BenchArgs& args) {
  if (args.list_systems) {
    for (const SystemInfo& system : BuiltInSystems()) {
      std::printf("%-16s %s\n", system.name.c_str(), system.durability.c_str());
    }
    return kExitOk;
  }
  std::string misplaced = OptionsOutsideSuite(args);
  if (!misplaced.empty()) {
    PrintError(misplaced);
    return kExitUsage;
  }
  Status batch = ReadBatchOption(&args);
  if (!batch.ok()) {
    PrintError(batch.message());
    return ExitCodeFor(batch);
  }
  JsonTarget json;
  if (!ReadJsonTarget(args, &json)) return kExitUsage;
  if (args.config.suite == "gpu") {
    args.gpu.keys = args.config.keys;
    args.gpu.calibrate = !args.no_calibration;
    return RunLineSuite(
        gpu::ValidateGpuBenchConfig(args.gpu),
        [&](std::FILE* text, std::string* lines) {
          return gpu::RunGpuBench(args.gpu, text, lines);
        },
        json);
  }
  if (args.config.suite == "slab") {
    Status keys = SlabKeyCounts(args, &args.slab.keys);
    if (!keys.ok()) {
      PrintError(keys.message());
      return ExitCodeFor(keys);
    }
    if (args.batch->count() > 0) args.slab.batch = args.config.batch;
    args.slab.seed = args.config.seed;
    return RunLineSuite(
        gpu::ValidateSlabBenchConfig(args.slab),
        [&](std::FILE* text, std::string* lines) {
          return gpu::RunSlabBench(args.slab, text, lines);
        },
        json);
  }
  if (args.config.suite == "btree") {
    gpu::BtreeBenchConfig btree;
    if (args.keys_log2->count() == 0 && args.keys->count() == 0) args.slab_keys_log2 = {20, 22, 24};
    Status keys = SlabKeyCounts(args, &btree.keys);
    if (!keys.ok()) {
      PrintError(keys.message());
      return ExitCodeFor(keys);
    }
    if (args.batch->count() > 0) btree.batches = args.batches;
    btree.seed = args.config.seed;
    btree.repeats = args.slab.repeats;
    btree.pool_dir = args.slab.pool_dir;
    btree.device_batches = args.btree_device_batches;
    return RunLineSuite(
        gpu::ValidateBtreeBenchConfig(btree),
        [&](std::FILE* text, std::string* lines) { return gpu::RunBtreeBench(btree, text, lines); },
        json);
  }
  args.config.backend = args.backend == "cuda"   ? Backend::kCuda
                        : args.backend == "auto" ? Backend::kAuto
                                                 : Backend::kCpu;
  return RunCpuSuite(args.config, json);
}

// Help requests exit 0 with their text on stdout; every other parse error
// is a usage error.
int HandleParseError(const CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    return app.exit(error);
  }
  std::fprintf(stderr, "gpkv-bench: %s\ngpkv-bench: see 'gpkv-bench --help'\n", error.what());
  return kExitUsage;
}

}  // namespace
}  // namespace gpkv::bench

int main(int argc, char** argv) {
  CLI::App app(gpkv::bench::kDescription, "gpkv-bench");
  gpkv::bench::BenchArgs args;
  gpkv::bench::AddOptions(&app, &args);
  app.footer(gpkv::bench::HelpFooter());
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return gpkv::bench::HandleParseError(app, error);
  }
  return gpkv::bench::RunBenchCommand(args);
}
