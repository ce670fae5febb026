// `gpkv create POOL [--size 1G]`: makes a new, empty pool file.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "gpkv/db.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace gpkv::tools {
namespace {

struct CreateArgs {
  std::string path;
  uint64_t size = uint64_t{1} << 30;
};

int RunCreate(const CreateArgs& args) {
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.pool_size = args.size;
  options.backend = Backend::kCpu;  // creating touches no table: no device needed
  Result<std::unique_ptr<DB>> db = DB::Open(args.path, options);
  if (!db.ok()) return Fail("create", db.status());
  return kExitOk;
}

}  // namespace

void RegisterCreateCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CreateArgs>();
  CLI::App* cmd = app.add_subcommand("create", "create a new, empty pool file");
  cmd->footer(
      "Fails if the file exists. Any file system works; a pool on /dev/shm (tmpfs),\n"
      "hugetlbfs or a DAX file system lets the GPU work on the pool directly.\n"
      "Example: gpkv create /dev/shm/pool.gpkv --size 4G");
  cmd->add_option("pool", args->path, "pool file to create")->required();
  cmd->add_option("--size", args->size,
                  "pool size; `gpkv grow` extends it (K, M, G suffixes: 1024s)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  cmd->callback([args, exit_code]() { *exit_code = RunCreate(*args); });
}

}  // namespace gpkv::tools
