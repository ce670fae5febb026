// Smoke test of `gpkv bench` (and of gpkv-bench, its RocksDB build, when it
// was built): tiny runs of every suite must finish, report positive rates for
// every system, and every system must give the same answers to the same reads.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

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

std::string RocksdbProgram() {
  std::string tool = GPKV_TOOL_PATH;
  return tool.substr(0, tool.find_last_of('/') + 1) + "gpkv-bench";
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

TEST(BenchSmoke, FoundationSuiteReportsEverySystemAndTheLoadFactor) {
  RunResult run = RunProgram(GPKV_TOOL_PATH,
                             "bench --keys 20000 --batch 1024 --lf-keys 16384 " + SmallOptions());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  nlohmann::json report = nlohmann::json::parse(run.out);
  EXPECT_EQ(report["suite"], "foundation");
  ExpectSane(report, {"gpkv", "libcuckoo"});
  EXPECT_EQ(report["results"].size(), 10u);  // 5 workloads x 2 systems
  const auto& probe = report["sections"]["load_factor_before_first_resize"]["gpkv"];
  EXPECT_EQ(probe["error"], "");
  if (probe["resized"].get<bool>()) {
    EXPECT_GT(probe["load_factor"].get<double>(), 0.0);
    EXPECT_LE(probe["load_factor"].get<double>(), 1.0);
  }
  EXPECT_EQ(report["targets"].size(), 3u);
}

TEST(BenchSmoke, YcsbSuiteAgreesAcrossSystemsAndSizes) {
  RunResult run =
      RunProgram(GPKV_TOOL_PATH,
                 "bench --suite ycsb --keys 10000 --ops 5000 --batch 512 --key-size 8,32 "
                 "--value-size 8,128 " +
                     SmallOptions());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  nlohmann::json report = nlohmann::json::parse(run.out);
  ExpectSane(report, {"gpkv", "libcuckoo"});
  // 4 size pairs x 2 systems x (LOAD + A B C F x 2 distributions + D).
  EXPECT_EQ(report["results"].size(), 4u * 2u * 10u);
}

TEST(BenchSmoke, SweepSuiteRunsEveryBatchSize) {
  RunResult run =
      RunProgram(GPKV_TOOL_PATH,
                 "bench --suite sweep --keys 4096 --sweep-min 8 --sweep-max 10 " + SmallOptions());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  nlohmann::json report = nlohmann::json::parse(run.out);
  ExpectSane(report, {"gpkv", "libcuckoo"});
  EXPECT_EQ(report["results"].size(), 2u * (1u + 3u));  // LOAD + 3 batch sizes
}

TEST(BenchSmoke, RocksdbAgreesWithGpkv) {
  if (access(RocksdbProgram().c_str(), X_OK) != 0) {
    GTEST_SKIP() << RocksdbProgram() << " was not built (no librocksdb)";
  }
  RunResult run = RunProgram(RocksdbProgram(),
                             "--suite ycsb --keys 10000 --ops 5000 --batch 512 " + SmallOptions());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  nlohmann::json report = nlohmann::json::parse(run.out);
  ExpectSane(report, {"gpkv", "libcuckoo", "rocksdb", "rocksdb-nosync"});
  for (const auto& target : report["targets"]) EXPECT_TRUE(target["measured"].get<bool>());
  EXPECT_EQ(access(Scratch("rocksdb").c_str(), F_OK), -1) << "RocksDB directory left behind";
}

TEST(BenchSmoke, BadOptionIsAUsageError) {
  RunResult run = RunProgram(GPKV_TOOL_PATH, "bench --key-size 12 " + SmallOptions());
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.rfind("gpkv: ", 0), 0u) << run.err;
}

}  // namespace
