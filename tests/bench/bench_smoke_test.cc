// Smoke test of gpkv-bench: tiny runs of every suite must finish, report
// positive rates for every system (RocksDB too when gpkv-bench was built with
// it), and every system must give the same answers to the same reads; the GPU
// suites (gpu, slab) must run on a device and say why not without one; the
// command line behaves like a Unix tool's.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Scratch(const std::string& name) {
  return ::testing::TempDir() + "gpkv_bench_smoke_" + std::to_string(getpid()) + "_" + name;
}

RunResult RunProgram(const std::string& program, const std::string& args) {
  const std::string out = Scratch("stdout"), err = Scratch("stderr");
  std::string command = program + " " + args + " >" + out + " 2>" + err;
  int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = Slurp(out);
  result.err = Slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return result;
}

// Whether gpkv-bench was built with RocksDB (`gpkv-bench --list-systems`).
bool RocksdbBuiltIn() {
  RunResult run = RunProgram(GPKV_BENCH_PATH, "--list-systems");
  return run.exit_code == 0 && run.out.find("rocksdb ") != std::string::npos;
}

// Common small-size options; pool and RocksDB directory in the test's scratch.
std::string SmallOptions() {
  return "--pool " + Scratch("pool.gpkv") + " --pool-size 64M --rocksdb-dir " + Scratch("rocksdb") +
         " --threads 2 --json";
}

// Every measurement finished with a positive rate; reads agree across systems.
void ExpectSane(const nlohmann::json& report, const std::vector<std::string>& systems) {
  ASSERT_TRUE(report.contains("results"));
  for (const std::string& system : systems) {
    bool seen = false;
    for (const auto& row : report["results"]) seen |= row["system"] == system;
    EXPECT_TRUE(seen) << "no results for " << system;
  }
  for (const auto& row : report["results"]) {
    SCOPED_TRACE(row.dump());
    EXPECT_EQ(row["error"], "");
    EXPECT_TRUE(row["complete"].get<bool>());
    EXPECT_GT(row["ops"].get<uint64_t>(), 0u);
    EXPECT_GT(row["mops"].get<double>(), 0.0);
    EXPECT_GT(row["p99_batch_us"].get<double>(), 0.0);
    const std::string workload = row["workload"];
    if (workload == "C" || workload == "search+") {
      EXPECT_EQ(row["found"], row["reads"]);  // every key read is present
    }
    if (workload == "search-") EXPECT_EQ(row["found"].get<uint64_t>(), 0u);
    if (workload == "delete") EXPECT_EQ(row["erased"], row["erases"]);
  }
  EXPECT_TRUE(report["sections"]["read_results_agree"].get<bool>());
  EXPECT_GT(report["sections"]["read_results_compared"].get<int>(), 0);
  EXPECT_FALSE(report["machine"]["cpu_model"].get<std::string>().empty());
  EXPECT_FALSE(report["command"].get<std::string>().empty());
  EXPECT_EQ(access(Scratch("pool.gpkv").c_str(), F_OK), -1) << "pool left behind";
}

// Runs gpkv-bench with `args` and SmallOptions(); it must exit 0 with a
// report that ExpectSane finds sane for `systems`.
void RunSane(const std::string& args, const std::vector<std::string>& systems,
             nlohmann::json* report) {
  RunResult run = RunProgram(GPKV_BENCH_PATH, args + " " + SmallOptions());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  *report = nlohmann::json::parse(run.out);
  ExpectSane(*report, systems);
}

TEST(BenchSmoke, FoundationSuiteReportsEverySystemAndTheLoadFactor) {
  nlohmann::json report;
  ASSERT_NO_FATAL_FAILURE(
      RunSane("--keys 20000 --batch 1024 --lf-keys 16384", {"gpkv", "libcuckoo"}, &report));
  EXPECT_EQ(report["suite"], "foundation");
  EXPECT_EQ(report["results"].size(), 10u);  // 5 workloads x 2 systems
  const auto& probe = report["sections"]["load_factor_before_first_resize"]["gpkv"];
  EXPECT_EQ(probe["error"], "");
  if (probe["resized"].get<bool>()) {
    EXPECT_GT(probe["load_factor"].get<double>(), 0.0);
    EXPECT_LE(probe["load_factor"].get<double>(), 1.0);
  }
  // gpkv's ratios to libcuckoo (get, insert), measured; no goals in the
  // report (they are in docs/bench/targets.json).
  ASSERT_EQ(report["ratios"].size(), 2u);
  for (const auto& ratio : report["ratios"]) {
    EXPECT_TRUE(ratio["measured"].get<bool>()) << ratio.dump();
    EXPECT_GT(ratio["value"].get<double>(), 0.0) << ratio.dump();
  }
  EXPECT_FALSE(report.contains("targets"));
}

TEST(BenchSmoke, YcsbSuiteAgreesAcrossSystemsAndSizes) {
  nlohmann::json report;
  ASSERT_NO_FATAL_FAILURE(
      RunSane("--suite ycsb --keys 10000 --ops 5000 --batch 512 --key-size 8,32 --value-size 8,128 "
              "--systems gpkv,libcuckoo",
              {"gpkv", "libcuckoo"}, &report));
  // 4 size pairs x 2 systems x (LOAD + A B C F x 2 distributions + D).
  EXPECT_EQ(report["results"].size(), 4u * 2u * 10u);
}

// The volatile table (the slab hash family through the engine) beside the
// persistent one and libcuckoo: the same answers to the same reads.
TEST(BenchSmoke, VolatileTableAgreesWithGpkvAndLibcuckoo) {
  nlohmann::json report;
  ASSERT_NO_FATAL_FAILURE(
      RunSane("--suite ycsb --keys 10000 --ops 5000 --batch 512 --value-size 8,128 --systems "
              "gpkv,gpkv-volatile,libcuckoo",
              {"gpkv", "gpkv-volatile", "libcuckoo"}, &report));
  // 2 value sizes x 3 systems x (LOAD + A B C F x 2 distributions + D).
  EXPECT_EQ(report["results"].size(), 2u * 3u * 10u);
}

TEST(BenchSmoke, SweepSuiteRunsEveryBatchSize) {
  nlohmann::json report;
  ASSERT_NO_FATAL_FAILURE(
      RunSane("--suite sweep --keys 4096 --sweep-min 8 --sweep-max 10 --systems gpkv,libcuckoo",
              {"gpkv", "libcuckoo"}, &report));
  EXPECT_EQ(report["results"].size(), 2u * (1u + 3u));  // LOAD + 3 batch sizes
}

TEST(BenchSmoke, RocksdbAgreesWithGpkv) {
  if (!RocksdbBuiltIn()) GTEST_SKIP() << "gpkv was built without RocksDB";
  // The ycsb suite's default systems: every one built in.
  nlohmann::json report;
  ASSERT_NO_FATAL_FAILURE(RunSane("--suite ycsb --keys 10000 --ops 5000 --batch 512",
                                  {"gpkv", "libcuckoo", "rocksdb", "rocksdb-nosync"}, &report));
  EXPECT_FALSE(report["ratios"].empty());
  for (const auto& ratio : report["ratios"]) EXPECT_TRUE(ratio["measured"].get<bool>());
  EXPECT_EQ(access(Scratch("rocksdb").c_str(), F_OK), -1) << "RocksDB directory left behind";
}

TEST(BenchSmoke, RocksdbInABuildWithoutItIsAClearError) {
  if (RocksdbBuiltIn()) GTEST_SKIP() << "gpkv was built with RocksDB";
  RunResult run =
      RunProgram(GPKV_BENCH_PATH, "--suite ycsb --systems gpkv,rocksdb " + SmallOptions());
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_EQ(run.err.rfind("gpkv-bench: ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find("built without RocksDB"), std::string::npos) << run.err;
}

// A tiny GPU suite where a device is usable; elsewhere the reason, exit 3.
TEST(BenchSmoke, GpuSuiteRunsOnADeviceAndSaysWhyNotWithoutOne) {
  RunResult run = RunProgram(GPKV_BENCH_PATH,
                             "--suite gpu --keys 64K --modes mirror,cpu --batches 12 "
                             "--no-calibration --json");
  if (run.exit_code != 0) {
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_EQ(run.err.rfind("gpkv-bench: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find("CUDA"), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
    return;
  }
  // --json: stdout holds only the JSON lines; the tables went to stderr.
  EXPECT_NE(run.err.find("# device: "), std::string::npos) << run.err;
  std::istringstream lines(run.out);
  std::string line;
  int load_factors = 0, points = 0;
  while (std::getline(lines, line)) {
    nlohmann::json row = nlohmann::json::parse(line);
    if (row["kind"] == "load_factor") ++load_factors;
    if (row["kind"] == "table") {
      ++points;
      EXPECT_GT(row["mops"].get<double>(), 0.0) << line;
      EXPECT_EQ(row["keys"], 65536) << line;
    }
  }
  EXPECT_EQ(load_factors, 2);    // mirror, cpu
  EXPECT_EQ(points, 2 * 6 + 1);  // LOAD + 5 points each, and mirror's host-batch point
}

// Where the persistent peer's pool goes: tmpfs when the machine has it, as
// the GPU's mirror mode registers the pool mapping (a file on ext4 cannot be).
std::string PoolDir() {
  return std::filesystem::is_directory("/dev/shm") ? "/dev/shm/" : ::testing::TempDir();
}

// A tiny slab suite where a device is usable; elsewhere the reason, exit 3.
TEST(BenchSmoke, SlabSuiteRunsOnADeviceAndSaysWhyNotWithoutOne) {
  RunResult run = RunProgram(GPKV_BENCH_PATH,
                             "--suite slab --keys 64K --utilisation 60 --repeats 1 --batch "
                             "16K --allocations 1M --pool-dir " +
                                 PoolDir() + " --json");
  if (run.exit_code != 0) {
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_EQ(run.err.rfind("gpkv-bench: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find("CUDA"), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
    return;
  }
  // --json: stdout holds only the JSON lines; the tables went to stderr.
  EXPECT_NE(run.err.find("# device: "), std::string::npos) << run.err;
  // Measurements and ratios only: no verdicts (the goals are in
  // docs/bench/targets.json).
  EXPECT_EQ(run.err.find(" met\n"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("missed"), std::string::npos) << run.err;
  std::istringstream lines(run.out);
  std::string line;
  int slab_rows = 0, gphash_rows = 0, alloc_rows = 0, targets = 0, ratios = 0;
  while (std::getline(lines, line)) {
    nlohmann::json row = nlohmann::json::parse(line);
    if (row.contains("vs_gphash")) {
      ++ratios;
      EXPECT_GT(row["vs_gphash"].get<double>(), 0.0) << line;
    }
    if (row["kind"] == "slab") {
      EXPECT_GT(row["gops"].get<double>(), 0.0) << line;
      EXPECT_EQ(row["keys"], 65536) << line;
      (row["system"] == "slab_hash" ? slab_rows : gphash_rows)++;
      if (row["system"] == "slab_hash") {
        EXPECT_GT(row["utilisation"].get<double>(), 0.0) << line;
        EXPECT_LT(row["utilisation"].get<double>(), 1.0) << line;
      }
    }
    if (row["kind"] == "slab_alloc") {
      ++alloc_rows;
      EXPECT_GT(row["gops"].get<double>(), 0.0) << line;
    }
    if (row["kind"] == "target") ++targets;
  }
  EXPECT_EQ(slab_rows, 8 + 1);  // 8 phases at 60%, the growing build
  EXPECT_EQ(gphash_rows, 6);
  EXPECT_EQ(alloc_rows, 1);
  EXPECT_EQ(targets, 0);
  EXPECT_GE(ratios, 6);  // every slab_hash row with a gphash peer
}

// A tiny btree suite, from host and from device batches, where a device is
// usable; elsewhere the reason, exit 3.
TEST(BenchSmoke, BtreeSuiteRunsOnADeviceAndSaysWhyNotWithoutOne) {
  for (const bool device_batches : {false, true}) {
    SCOPED_TRACE(device_batches ? "device batches" : "host batches");
    RunResult run =
        RunProgram(GPKV_BENCH_PATH,
                   "--suite btree --keys 16K --repeats 1 --batch 4K "
                   "--pool-dir " +
                       PoolDir() + " --json" + (device_batches ? " --device-batches" : ""));
    if (run.exit_code != 0) {
      EXPECT_EQ(run.exit_code, 3) << run.err;
      EXPECT_EQ(run.err.rfind("gpkv-bench: ", 0), 0u) << run.err;
      EXPECT_NE(run.err.find("CUDA"), std::string::npos) << run.err;
      EXPECT_EQ(run.out, "");
      continue;
    }
    std::istringstream lines(run.out);
    std::string line;
    std::map<std::string, int> rows;
    while (std::getline(lines, line)) {
      nlohmann::json row = nlohmann::json::parse(line);
      EXPECT_EQ(row["kind"], "btree") << line;
      EXPECT_EQ(row["keys"], 16384) << line;
      EXPECT_EQ(row["batch"], 4096) << line;
      EXPECT_EQ(row["batches"], device_batches ? "device" : "host") << line;
      EXPECT_GT(row["gops"].get<double>(), 0.0) << line;
      rows[row["system"].get<std::string>()]++;
    }
    EXPECT_EQ(rows["btree-gpu"], 6 + 8);  // the phases, and the snapshot rows
    EXPECT_EQ(rows["lsm-gpu"], 6);
    EXPECT_EQ(rows["slab-hash-gpu"], 4);
  }
}

// A btree suite over two batch sizes runs every phase at each, and gives
// each snapshot row its cost beside its peer of the same batch size, where
// a device is usable; elsewhere the reason, exit 3.
TEST(BenchSmoke, BtreeSuiteSweepsBatchSizes) {
  RunResult run = RunProgram(GPKV_BENCH_PATH,
                             "--suite btree --keys 16K --repeats 1 --batch 2K,4K "
                             "--pool-dir " +
                                 PoolDir() + " --json");
  if (run.exit_code != 0) {
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_NE(run.err.find("CUDA"), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
    return;
  }
  EXPECT_NE(run.err.find("# batches of 2048, 4096 operations"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("# 16384 keys, batches of 4096"), std::string::npos) << run.err;
  std::istringstream lines(run.out);
  std::string line;
  std::map<std::string, int> rows;      // "system batch" -> rows
  std::map<std::string, double> rates;  // "operation batch" -> gops (btree-gpu)
  std::vector<nlohmann::json> snapshot_rows;
  while (std::getline(lines, line)) {
    nlohmann::json row = nlohmann::json::parse(line);
    const std::string batch = std::to_string(row["batch"].get<uint64_t>());
    rows[row["system"].get<std::string>() + " " + batch]++;
    if (row["system"] != "btree-gpu") continue;
    rates[row["operation"].get<std::string>() + " " + batch] = row["gops"].get<double>();
    if (row.contains("snapshot_cost")) snapshot_rows.push_back(row);
  }
  for (const char* batch : {"2048", "4096"}) {
    EXPECT_EQ(rows[std::string("btree-gpu ") + batch], 6 + 8) << batch;
    EXPECT_EQ(rows[std::string("lsm-gpu ") + batch], 6) << batch;
    EXPECT_EQ(rows[std::string("slab-hash-gpu ") + batch], 4) << batch;
  }
  ASSERT_EQ(snapshot_rows.size(), 2u * 7);  // all snapshot rows but update's own
  for (const nlohmann::json& row : snapshot_rows) {
    const std::string batch = std::to_string(row["batch"].get<uint64_t>());
    const double peer = rates.at(row["without"].get<std::string>() + " " + batch);
    EXPECT_NEAR(row["snapshot_cost"].get<double>(), peer / row["gops"].get<double>(),
                1e-2 * row["snapshot_cost"].get<double>())
        << row.dump();
  }
}

TEST(BenchSmoke, HelpListsEverySuiteSystemAndGpuModeAndExits0) {
  RunResult run = RunProgram(GPKV_BENCH_PATH, "--help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  for (const char* name : {"foundation",
                           "ycsb",
                           "sweep",
                           "gpu",
                           "slab",
                           "btree",
                           "gpkv",
                           "gpkv-volatile",
                           "libcuckoo",
                           "rocksdb",
                           "rocksdb-nosync",
                           "direct",
                           "mirror",
                           "staged",
                           "naive",
                           "--modes",
                           "--batches",
                           "--no-calibration",
                           "--json",
                           "--keys-log2",
                           "--utilisation",
                           "--repeats",
                           "--pool-dir",
                           "--allocations",
                           "--device-batches"}) {
    EXPECT_NE(run.out.find(name), std::string::npos) << name;
  }
}

TEST(BenchSmoke, UsageErrorsExit1NamingTheCommand) {
  for (const std::string& args : {std::string("--bogus"),
                                  "--key-size 12 " + SmallOptions(),
                                  std::string("--suite nosuch"),
                                  std::string("--systems nosuch"),
                                  std::string("--suite gpu --modes direct+bogus"),
                                  std::string("--suite gpu --modes nosuch"),
                                  std::string("--suite gpu --batches 40"),
                                  std::string("--suite gpu --threads 4"),
                                  std::string("--suite ycsb --modes direct"),
                                  std::string("--json a --json-file b"),
                                  std::string("--suite slab --keys-log2 40"),
                                  std::string("--suite slab --utilisation 0"),
                                  std::string("--suite slab --repeats 0"),
                                  std::string("--suite slab --threads 4"),
                                  std::string("--suite slab --modes mirror"),
                                  std::string("--suite gpu --repeats 3"),
                                  std::string("--suite ycsb --utilisation 50"),
                                  std::string("--suite btree --keys-log2 40"),
                                  std::string("--suite btree --repeats 0"),
                                  std::string("--suite btree --utilisation 50"),
                                  std::string("--suite slab --device-batches"),
                                  std::string("--suite slab --batch 4K,8K"),
                                  "--suite ycsb --batch 512,1024 " + SmallOptions(),
                                  std::string("--suite btree --batch 4K,0")}) {
    RunResult run = RunProgram(GPKV_BENCH_PATH, args);
    EXPECT_EQ(run.exit_code, 1) << args << ": " << run.err;
    EXPECT_EQ(run.err.rfind("gpkv-bench: ", 0), 0u) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
  }
}

}  // namespace
