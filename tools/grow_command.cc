// `gpkv grow POOL --size 8G`: extends a closed pool to a larger size.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace gpkv::tools {
namespace {

struct GrowArgs {
  std::string path;
  uint64_t size = 0;
  int threads = 0;
};

int RunGrow(const GrowArgs& args) {
  Options options;
  options.pool_size = args.size;
  options.grow_if_smaller = true;
  // Growth touches no table; the tables' open-time recovery runs on the CPU.
  options.backend = Backend::kCpu;
  options.cpu_threads = args.threads;
  Result<std::unique_ptr<DB>> db = DB::Open(args.path, options);
  if (!db.ok()) return Fail("grow", db.status());
  Result<PoolInfo> info = (*db)->Info();
  if (!info.ok()) return Fail("grow", info.status());
  const uint64_t wanted = format::AlignUp(args.size, format::kPageSize);
  if (info->pool_size > wanted) {
    PrintError("grow", args.path + ": the pool is " + std::to_string(info->pool_size) + " bytes (" +
                           HumanBytes(info->pool_size) + "), more than --size " +
                           std::to_string(args.size) + "; a pool never shrinks");
    return CloseAfterWrite("grow", **db, kExitUsage);
  }
  return CloseAfterWrite("grow", **db, kExitOk);
}

}  // namespace

void RegisterGrowCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<GrowArgs>();
  CLI::App* cmd = app.add_subcommand("grow", "extend a pool to a larger size");
  cmd->footer(
      "Runs open-time recovery, extends the file and then publishes the new size: a crash\n"
      "leaves the old size or the new one. The pool must not be open elsewhere (exit 3).\n"
      "A size below the pool's is a usage error; its own size does nothing. The extent\n"
      "table keeps the capacity it got at create.\n"
      "Example: gpkv grow /dev/shm/pool.gpkv --size 8G");
  cmd->add_option("pool", args->path, "pool file to grow")->required();
  cmd->add_option("--size", args->size, "the new pool size (K, M, G suffixes: 1024s)")
      ->transform(CLI::AsSizeValue(false))
      ->required();
  cmd->add_option("--threads", args->threads, "CPU worker threads; 0 = all hardware threads")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([args, exit_code]() { *exit_code = RunGrow(*args); });
}

}  // namespace gpkv::tools
