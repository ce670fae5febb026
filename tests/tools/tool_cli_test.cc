// The gpkv tool as a Unix command: --help everywhere, exit codes 0 / 1 / 3,
// errors on stderr starting with "gpkv:", nothing on stdout on failure.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

using ToolCli = ToolTest;

TEST_F(ToolCli, NoArgumentsPrintsUsageOnStderrAndExits1) {
  ToolResult result = Run({});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("Usage"), std::string::npos) << result.err;
}

TEST_F(ToolCli, HelpOfEveryCommandExits0OnStdout) {
  const std::vector<std::vector<std::string>> commands = {
      {},      {"create"}, {"info"}, {"tables"}, {"tables", "create"}, {"tables", "drop"}, {"put"},
      {"get"}, {"del"},    {"load"}, {"dump"},   {"verify"},           {"repair"}};
  for (std::vector<std::string> command : commands) {
    command.push_back("--help");
    ToolResult result = Run(command);
    std::string shown = command.size() > 1 ? command[command.size() - 2] : "gpkv";
    EXPECT_EQ(result.exit_code, 0) << shown << ": " << result.err;
    EXPECT_NE(result.out.find("Usage"), std::string::npos) << shown << ": " << result.out;
    EXPECT_EQ(result.err, "") << shown;
  }
}

TEST_F(ToolCli, TopLevelHelpListsEveryCommand) {
  ToolResult result = Run({"--help"});
  for (const char* command :
       {"create", "info", "tables", "put", "get", "del", "load", "dump", "verify", "repair"}) {
    EXPECT_NE(result.out.find(command), std::string::npos) << command;
  }
  EXPECT_NE(result.out.find("Exit codes"), std::string::npos);
}

// The benchmark is a program of its own (gpkv-bench): the tool has no bench
// command.
TEST_F(ToolCli, BenchIsNotAToolCommand) {
  ToolResult result = Run({"bench", "--help"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("'bench' is not a gpkv command"), std::string::npos) << result.err;
}

TEST_F(ToolCli, UnknownCommandIsAUsageError) {
  ToolResult result = Run({"frobnicate", scratch_.File("pool.gpkv")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err.rfind("gpkv:", 0), 0u) << result.err;
}

TEST_F(ToolCli, MissingPositionalIsAUsageError) {
  for (std::vector<std::string> command :
       std::vector<std::vector<std::string>>{{"info"}, {"create"}, {"get", "pool"}, {"tables"}}) {
    ToolResult result = Run(command);
    EXPECT_EQ(result.exit_code, 1) << command[0] << ": " << result.err;
    EXPECT_EQ(result.err.rfind("gpkv:", 0), 0u) << result.err;
  }
}

TEST_F(ToolCli, UnknownOptionIsAUsageError) {
  ToolResult result = Run({"info", "--no-such-option", scratch_.File("pool.gpkv")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.rfind("gpkv:", 0), 0u) << result.err;
}

TEST_F(ToolCli, MissingPoolFileExits4NamingTheCommand) {
  ToolResult result = Run({"info", scratch_.File("absent.gpkv")});
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err.rfind("gpkv: info: ", 0), 0u) << result.err;
}

TEST_F(ToolCli, CreateMakesAPoolOfTheGivenSizeAndRefusesToOverwrite) {
  std::string pool = scratch_.File("pool.gpkv");
  ToolResult created = Run({"create", pool, "--size", "32M"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out, "");

  ToolResult info = Run({"info", pool, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  nlohmann::json json = nlohmann::json::parse(info.out);
  EXPECT_EQ(json["pool"]["pool_size"].get<uint64_t>(), uint64_t{32} << 20);
  EXPECT_TRUE(json["tables"].empty());

  ToolResult again = Run({"create", pool, "--size", "32M"});
  EXPECT_EQ(again.exit_code, 3);
  EXPECT_EQ(again.err.rfind("gpkv: create: ", 0), 0u) << again.err;
}

TEST_F(ToolCli, CreateRejectsASizeThatIsNotANumber) {
  ToolResult result = Run({"create", scratch_.File("pool.gpkv"), "--size", "lots"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.rfind("gpkv:", 0), 0u) << result.err;
}

TEST_F(ToolCli, InfoPrintsThePoolForPeople) {
  std::string pool = scratch_.File("pool.gpkv");
  ASSERT_EQ(Run({"create", pool, "--size", "16M"}).exit_code, 0);
  ToolResult info = Run({"info", pool});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("16.00 MiB"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("tables         0"), std::string::npos) << info.out;
}

}  // namespace
}  // namespace gpkv::testing
