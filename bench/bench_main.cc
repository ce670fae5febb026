// gpkv-bench: `gpkv bench` with RocksDB built in as a further system.
//
//   gpkv-bench --suite ycsb [options]     same options as `gpkv bench`
//
// A separate program so that the gpkv tool never depends on RocksDB.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "bench/gpkv_bench.h"
#include "bench/rocksdb_driver.h"

int main(int argc, char** argv) {
  CLI::App app("gpkv-bench: gpkv bench with RocksDB built in (see `gpkv-bench --help`)",
               "gpkv-bench");
  app.require_subcommand(1);
  int exit_code = 0;
  gpkv::bench::RegisterRocksdbDrivers();
  gpkv::bench::RegisterBenchCommand(app, &exit_code);
  // `gpkv-bench ARGS` means `gpkv bench ARGS`.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.push_back(argv[i]);
  if (args.empty() || args.back() != "bench") args.push_back("bench");
  try {
    app.parse(args);
  } catch (const CLI::ParseError& error) {
    int code = app.exit(error);
    return code == 0 ? 0 : 1;
  }
  return exit_code;
}
