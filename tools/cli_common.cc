#include "tools/cli_common.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "tools/pool_format.h"

namespace gpkv::tools {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case Code::kOk:
      return kExitOk;
    case Code::kCorruption:
      return kExitCorruption;
    case Code::kInvalidArgument:
      return kExitUsage;
    case Code::kNotFound:
      return kExitNotFound;
    case Code::kBusy:  // another process holds the pool: an error, not damage
      return kExitError;
    default:
      return kExitError;
  }
}

void PrintError(const std::string& command, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "gpkv: %s: %s\n", command.c_str(), message.c_str());
}

std::string ErrorText(const Status& status) {
  std::string text = status.ToString();
  if (status.IsNeedsRecovery()) {
    text += " (run `gpkv verify POOL` to check the pool, or repeat with --write to recover it)";
  }
  return text;
}

int Fail(const std::string& command, const Status& status) {
  PrintError(command, ErrorText(status));
  return ExitCodeFor(status);
}

int FailOpen(const std::string& command, const std::string& path, const Status& status) {
  // The library refuses another version before it checks the header's
  // checksum; ForeignPoolFormat checks that the version is no damage.
  if (status.IsUnsupported()) {
    if (uint32_t format_version = ForeignPoolFormat(path)) {
      PrintError(command, ForeignPoolFormatText(path, format_version));
      return kExitUnsupported;
    }
  }
  return Fail(command, status);
}

int CloseAfterWrite(const std::string& command, DB& db, int exit_code) {
  Status closed = db.Close();
  if (!closed.ok()) return Fail(command, closed);
  return exit_code;
}

void AddPoolArgs(CLI::App* cmd, PoolArgs* args, bool can_write) {
  cmd->add_option("pool", args->path, "pool file")->required();
  if (!can_write) {
    args->read_only = true;
    CLI::Option* write = cmd->add_flag(
        "--write", args->write,
        "open the pool writable, running open-time recovery (default: read-only, nothing "
        "written; a table a crash left needing recovery answers as it will once recovered)");
    cmd->add_flag("--read-only", args->read_only, "open the pool read-only (the default)")
        ->excludes(write);
  }
  cmd->add_option("--backend", args->backend, "where batches run: auto | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--cuda-device", args->cuda_device,
                  "the CUDA device the tables run on with the CUDA backend")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "CPU worker threads; 0 = all hardware threads")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

Result<std::unique_ptr<DB>> OpenPool(const PoolArgs& args) {
  Options options;
  options.create_if_missing = false;
  options.read_only = args.read_only && !args.write;
  options.cpu_threads = args.threads;
  options.cuda_device = args.cuda_device;
  options.backend = args.backend == "cuda"  ? Backend::kCuda
                    : args.backend == "cpu" ? Backend::kCpu
                                            : Backend::kAuto;
  return DB::Open(args.path, options);
}

std::string HumanBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(text, sizeof(text), "%.2f %s", value, kUnits[unit]);
  }
  return text;
}

}  // namespace gpkv::tools
