// Smoke test of `gpkv-bench --suite ordered`: its options parse and reach the
// suite (a tiny run reports exactly the batch sizes, table sizes and
// workloads asked for, each system agreeing with gpkv, and a ratio to
// RocksDB and to LMDB per case when they are built in; ranges of ~32 keys
// when asked for), and wrong or
// misplaced options are usage errors that name the option. Runs in about a
// second.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string Scratch(const std::string& name) {
  return ::testing::TempDir() + "gpkv_bench_ordered_" + std::to_string(getpid()) + "_" + name;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

RunResult RunBench(const std::string& args) {
  const std::string out = Scratch("stdout"), err = Scratch("stderr");
  const std::string command = std::string(GPKV_BENCH_PATH) + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = Slurp(out);
  result.err = Slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return result;
}

std::string Tiny() {
  return "--suite ordered --pool " + Scratch("pool.gpkv") + " --rocksdb-dir " + Scratch("rocksdb") +
         " --threads 2 --insert-min 4 --insert-max 5 --insert-keys 64 --table-sizes 8,6"
         " --ops 256 --batch 64 --lsm-batch 16";
}

TEST(BenchOrderedOptions, TinyRunReportsTheCasesAskedFor) {
  RunResult run = RunBench(Tiny() + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  EXPECT_EQ(report["suite"], "ordered");
  EXPECT_EQ(report["config"]["insert_min_log2"], 4);
  EXPECT_EQ(report["config"]["lsm_batch_entries"], 16);
  std::set<std::string> systems;
  std::set<std::string> cases;
  for (const auto& row : report["results"]) {
    SCOPED_TRACE(row.dump());
    EXPECT_EQ(row["error"], "");
    EXPECT_TRUE(row["complete"].get<bool>());
    EXPECT_GT(row["mops"].get<double>(), 0.0);
    systems.insert(row["system"].get<std::string>());
    cases.insert(row["workload"].get<std::string>() + " " + row["distribution"].get<std::string>() +
                 " " + std::to_string(row["batch_size"].get<uint64_t>()));
    if (row["workload"] == "get") EXPECT_EQ(row["found"], row["reads"]);  // present keys
    if (row["workload"] == "insert") EXPECT_EQ(row["ops"].get<uint64_t>(), 64u);
  }
  const std::set<std::string> expected = {
      "insert uniform 16", "insert uniform 32", "get 2^6 keys 64",
      "count 2^6 keys 64", "range 2^6 keys 64", "get 2^8 keys 64",
      "count 2^8 keys 64", "range 2^8 keys 64", "E 2^8 keys 64"};
  EXPECT_EQ(cases, expected);
  const bool rocksdb = systems.count("rocksdb") != 0;
  const bool lmdb = systems.count("lmdb") != 0;
  EXPECT_TRUE(systems.count("gpkv"));
  EXPECT_TRUE(systems.count("gpkv-btree-cpu"));  // the volatile ordered table
  EXPECT_EQ(report["sections"]["read_results_agree"], true);
  // With RocksDB: one ratio per insert batch size, per table size and for E;
  // with LMDB: one per insert batch size, and gets and ranges per table size.
  size_t measured = 0;
  for (const auto& ratio : report["ratios"]) measured += ratio["measured"].get<bool>();
  EXPECT_EQ(measured, (rocksdb ? 5u : 0u) + (lmdb ? 6u : 0u));
  EXPECT_FALSE(report.contains("targets"));
}

// LMDB, when built in, answers every query as gpkv does (found counts and
// range digests agree) and its ratios are in the report.
TEST(BenchOrderedOptions, LmdbAnswersAsGpkvDoes) {
  RunResult run = RunBench(Tiny() + " --systems gpkv,lmdb --json");
  if (run.exit_code != 0 && run.err.find("built without LMDB") != std::string::npos) {
    GTEST_SKIP() << "this gpkv-bench was built without LMDB";
  }
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  std::set<std::string> systems;
  for (const auto& row : report["results"]) systems.insert(row["system"].get<std::string>());
  EXPECT_EQ(systems, (std::set<std::string>{"gpkv", "lmdb"}));
  EXPECT_EQ(report["sections"]["read_results_agree"], true);
  EXPECT_GT(report["sections"]["read_results_compared"].get<int>(), 0);
  size_t lmdb_ratios = 0;
  for (const auto& ratio : report["ratios"]) {
    if (ratio["name"].get<std::string>().find("vs LMDB") != std::string::npos) {
      EXPECT_TRUE(ratio["measured"].get<bool>()) << ratio.dump();
      ++lmdb_ratios;
    }
  }
  EXPECT_EQ(lmdb_ratios, 6u);
}

TEST(BenchOrderedOptions, WorkloadsSelectWhatRuns) {
  RunResult run = RunBench(Tiny() + " --workloads range --systems gpkv --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  ASSERT_EQ(report["results"].size(), 2u);  // range on both table sizes
  for (const auto& row : report["results"]) EXPECT_EQ(row["workload"], "range");
}

// range32 runs only when --workloads names it; its queries hold about four
// times the pairs of range's, and every system answers them as gpkv does.
TEST(BenchOrderedOptions, RangesOfAbout32KeysRunWhenNamed) {
  RunResult run = RunBench(Tiny() + " --workloads range,range32 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  std::map<std::string, uint64_t> found;  // "workload system table" -> pairs
  std::set<std::string> systems;
  for (const auto& row : report["results"]) {
    SCOPED_TRACE(row.dump());
    EXPECT_EQ(row["error"], "");
    const std::string workload = row["workload"];
    ASSERT_TRUE(workload == "range" || workload == "range32");
    systems.insert(row["system"].get<std::string>());
    found[workload + " " + row["system"].get<std::string>() + " " +
          row["distribution"].get<std::string>()] = row["found"].get<uint64_t>();
  }
  EXPECT_TRUE(systems.count("gpkv"));
  EXPECT_TRUE(systems.count("gpkv-btree-cpu"));
  EXPECT_EQ(found.size(), 2 * 2 * systems.size());  // both workloads, both table sizes
  for (const std::string& system : systems) {
    for (const char* table : {"2^6 keys", "2^8 keys"}) {
      const std::string at = " " + system + " " + table;
      EXPECT_GT(found["range32" + at], 2 * found["range" + at]) << at;
    }
  }
  EXPECT_EQ(report["sections"]["read_results_agree"], true);
}

TEST(BenchOrderedOptions, TheVolatileOrderedTableRunsAsASystemOfItsOwn) {
  RunResult run = RunBench(Tiny() + " --workloads get,range --systems gpkv-btree-cpu --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  ASSERT_EQ(report["results"].size(), 4u);  // get and range on both table sizes
  for (const auto& row : report["results"]) {
    EXPECT_EQ(row["system"], "gpkv-btree-cpu");
    EXPECT_EQ(row["error"], "");
    if (row["workload"] == "get") EXPECT_EQ(row["found"], row["reads"]);
  }
}

TEST(BenchOrderedOptions, BadOrMisplacedOptionsAreUsageErrors) {
  const std::pair<std::string, std::string> cases[] = {
      {Tiny() + " --insert-min 6", "--insert-min"},
      {Tiny() + " --insert-max 27", "--insert-max"},
      {Tiny() + " --table-sizes 31", "--table-sizes"},
      {Tiny() + " --lsm-batch 1000", "--lsm-batch"},
      {Tiny() + " --insert-keys 0", "--insert-keys"},
      {Tiny() + " --workloads C", "--workloads"},
      {Tiny() + " --systems libcuckoo", "--systems"},
      {"--suite ycsb --insert-min 10", "--insert-min"},
      {"--suite foundation --table-sizes 10", "--table-sizes"},
  };
  for (const auto& [args, option] : cases) {
    RunResult run = RunBench(args);
    EXPECT_EQ(run.exit_code, 1) << args << ": " << run.err;
    EXPECT_EQ(run.err.rfind("gpkv-bench: ", 0), 0u) << args << ": " << run.err;
    EXPECT_NE(run.err.find(option), std::string::npos) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
  }
}

}  // namespace
