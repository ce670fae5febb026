// The command line of gpkv-bench: its options (CLI11), the --help text that
// lists every suite, system and GPU mode, and the checks that an option
// belongs to the suite it is given with. bench/gpkv_bench_main.cc parses with
// them and runs the suite.
//
// Who may call: bench/gpkv_bench_main.cc, tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/gpkv_bench.h"
#include "bench/gpu/btree_bench.h"
#include "bench/gpu/gpu_bench.h"
#include "bench/gpu/slab_bench.h"
#include "gpkv/status.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gpkv::bench {

// Exit codes of gpkv-bench, those of the gpkv tool: 0 ok, 1 usage, 2
// corruption found, 3 any other error.
constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;
constexpr int kExitCorruption = 2;
constexpr int kExitError = 3;

// An option that only some suites take.
struct SuiteOption {
  CLI::Option* option = nullptr;
  std::vector<std::string> suites;
};

// What the command line holds once parsed.
struct BenchArgs {
  BenchConfig config;                 // foundation, ycsb, sweep
  bench::gpu::GpuBenchConfig gpu;     // gpu
  bench::gpu::SlabBenchConfig slab;   // slab
  std::vector<int> slab_keys_log2;    // slab, btree: --keys-log2
  bool btree_device_batches = false;  // btree: --device-batches
  std::vector<uint64_t> batches;      // --batch: one size, or (btree) a list
  std::string backend = "cpu";
  bool no_calibration = false;
  bool list_systems = false;
  CLI::Option* keys = nullptr;       // --keys
  CLI::Option* keys_log2 = nullptr;  // --keys-log2
  CLI::Option* batch = nullptr;      // --batch
  CLI::Option* json = nullptr;       // --json [FILE]
  std::string json_value;
  std::string json_file;
  std::vector<SuiteOption> suite_options;
};

// The suites, systems and GPU modes, for --help.
std::string HelpFooter();

// Adds every option of gpkv-bench to `app`, bound to *args.
void AddOptions(CLI::App* app, BenchArgs* args);

// Empty when every option given belongs to the suite, else the usage error.
std::string OptionsOutsideSuite(const BenchArgs& args);

// Sets config.batch from --batch when it was given. InvalidArgument for a
// list of sizes outside the btree suite, which alone sweeps them.
Status ReadBatchOption(BenchArgs* args);

// The slab and btree suites' key counts: --keys-log2 (default 24,26; btree
// 20,22,24) and --keys; a --keys given alone replaces the default list.
// InvalidArgument naming the option for a log2 out of range.
Status SlabKeyCounts(const BenchArgs& args, std::vector<uint64_t>* counts);

}  // namespace gpkv::bench
