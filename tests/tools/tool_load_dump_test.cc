// gpkv load and gpkv dump: generated and file loads, the dump format read
// back by load, and no progress line when stderr is not a terminal.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolLoadDump : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("128M"));
  }
  void CreateTable(const std::string& name, const std::vector<std::string>& options = {}) {
    std::vector<std::string> args = {"tables", "create", pool_, name, "--expected-keys", "16K"};
    args.insert(args.end(), options.begin(), options.end());
    ToolResult result = Run(args);
    ASSERT_EQ(result.exit_code, 0) << result.err;
  }
  std::vector<std::string> SortedDump(const std::string& table) {
    ToolResult dump = Run({"dump", pool_, table});
    EXPECT_EQ(dump.exit_code, 0) << dump.err;
    std::vector<std::string> lines = DumpedPairs(dump.out);
    std::sort(lines.begin(), lines.end());
    return lines;
  }
};

TEST_F(ToolLoadDump, LoadCountPutsThatManyKeysAndPrintsTheRate) {
  CreateTable("t");
  ToolResult load = Run({"load", pool_, "t", "--count", "10000", "--seed", "7"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_NE(load.out.find("loaded 10000 pairs into 't'"), std::string::npos) << load.out;
  EXPECT_NE(load.out.find("keys/s"), std::string::npos) << load.out;
  // stderr is a file here, not a terminal: no progress line.
  EXPECT_EQ(load.err, "");
  EXPECT_EQ(SortedDump("t").size(), 10000u);
}

TEST_F(ToolLoadDump, SequentialLoadGivesKeysFromStart) {
  CreateTable("t");
  ToolResult load = Run(
      {"load", pool_, "t", "--count", "5000", "--sequential", "--start", "100", "--batch", "64"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ToolResult get = Run({"get", pool_, "t", "100", "5099"});
  EXPECT_EQ(get.exit_code, 0) << get.out;
  ToolResult outside = Run({"get", pool_, "t", "99", "5100"});
  EXPECT_EQ(outside.exit_code, 4);
  EXPECT_EQ(outside.out, "99 (not found)\n5100 (not found)\n");
}

TEST_F(ToolLoadDump, DumpOutputLoadsBackIntoAnIdenticalTable) {
  CreateTable("source", {"--key-size", "16", "--value-size", "24"});
  CreateTable("copy", {"--key-size", "16", "--value-size", "24"});
  ASSERT_EQ(Run({"load", pool_, "source", "--count", "3000", "--seed", "3"}).exit_code, 0);
  ToolResult dump = Run({"dump", pool_, "source"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  std::string file = scratch_.File("pairs.txt");
  std::ofstream(file) << dump.out;

  ToolResult load = Run({"load", pool_, "copy", "--file", file});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  std::vector<std::string> source = SortedDump("source");
  EXPECT_EQ(source.size(), 3000u);
  EXPECT_EQ(SortedDump("copy"), source);
}

TEST_F(ToolLoadDump, DumpStartsWithAHeaderNamingKindAndSizes) {
  CreateTable("wide", {"--key-size", "16", "--value-size", "24"});
  ASSERT_EQ(Run({"put", pool_, "wide", "1", "2"}).exit_code, 0);
  ToolResult dump = Run({"dump", pool_, "wide"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  std::vector<std::string> lines = Lines(dump.out);
  ASSERT_EQ(lines.size(), 2u) << dump.out;
  EXPECT_EQ(lines[0],
            "# gpkv-dump format=1 kind=hash durability=persistent key_size=16 value_size=24");
}

TEST_F(ToolLoadDump, ADumpOfOtherSizesIsAUsageErrorAndLoadsNothing) {
  CreateTable("wide", {"--key-size", "16", "--value-size", "24"});
  CreateTable("narrow");
  ASSERT_EQ(Run({"put", pool_, "wide", "1", "2", "3", "4"}).exit_code, 0);
  ToolResult dump = Run({"dump", pool_, "wide"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  // Its numbers would fit the narrow table: only the header tells.
  ToolResult load = Run({"load", pool_, "narrow", "--file", "-"}, dump.out);
  EXPECT_EQ(load.exit_code, 1) << load.out << load.err;
  EXPECT_EQ(load.err.rfind("gpkv: load: invalid argument: <stdin>:1: a dump of a table with "
                           "16-byte keys and 24-byte values; table 'narrow' has 8-byte keys and "
                           "8-byte values",
                           0),
            0u)
      << load.err;
  EXPECT_TRUE(SortedDump("narrow").empty());
}

TEST_F(ToolLoadDump, ADumpOfANewerFormatIsUnsupported) {
  CreateTable("t");
  ToolResult load =
      Run({"load", pool_, "t", "--file", "-"},
          "# gpkv-dump format=2 kind=hash durability=persistent key_size=8 value_size=8\n1 2\n");
  EXPECT_EQ(load.exit_code, 5) << load.err;
  EXPECT_NE(load.err.find("<stdin>:1: written by a newer gpkv (dump format 2; this build reads "
                          "up to 1)"),
            std::string::npos)
      << load.err;
  EXPECT_TRUE(SortedDump("t").empty());
}

TEST_F(ToolLoadDump, LoadReadsStdinSkippingBlankAndCommentLines) {
  CreateTable("t");
  ToolResult load =
      Run({"load", pool_, "t", "--file", "-"}, "# key value\n1 10\n\n2 20\n  0x3 0x1e\n");
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_EQ(SortedDump("t"), (std::vector<std::string>{"1 10", "2 20", "3 30"}));
}

TEST_F(ToolLoadDump, ABadLineStopsTheLoadNamingTheLine) {
  CreateTable("t");
  ToolResult load = Run({"load", pool_, "t", "--file", "-"}, "1 10\n2 twenty\n");
  EXPECT_EQ(load.exit_code, 1);
  EXPECT_NE(load.err.find("<stdin>:2:"), std::string::npos) << load.err;
  EXPECT_EQ(load.err.rfind("gpkv: load: ", 0), 0u) << load.err;
}

TEST_F(ToolLoadDump, LoadNeedsExactlyOneSource) {
  CreateTable("t");
  EXPECT_EQ(Run({"load", pool_, "t"}).exit_code, 1);
  EXPECT_EQ(Run({"load", pool_, "t", "--count", "5", "--file", "-"}).exit_code, 1);
  EXPECT_EQ(Run({"load", pool_, "t", "--file", scratch_.File("absent.txt")}).exit_code, 3);
}

TEST_F(ToolLoadDump, DumpJsonIsAnArrayOfPairs) {
  CreateTable("t");
  ASSERT_EQ(Run({"put", pool_, "t", "1", "10", "2", "20"}).exit_code, 0);
  ToolResult dump = Run({"dump", pool_, "t", "--json"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  nlohmann::json pairs = nlohmann::json::parse(dump.out);
  ASSERT_EQ(pairs.size(), 2u);
  uint64_t sum = 0;
  for (const nlohmann::json& pair : pairs)
    sum += pair["key"].get<uint64_t>() * 1000 + pair["value"].get<uint64_t>();
  EXPECT_EQ(sum, 1010u + 2020u);

  CreateTable("empty");
  ToolResult empty = Run({"dump", pool_, "empty", "--json"});
  ASSERT_EQ(empty.exit_code, 0);
  EXPECT_TRUE(nlohmann::json::parse(empty.out).empty());
  EXPECT_EQ(Run({"dump", pool_, "empty"}).out,
            "# gpkv-dump format=1 kind=hash durability=persistent key_size=8 value_size=8\n");
}

TEST_F(ToolLoadDump, LoadedKeysSurviveAndCountInInfo) {
  CreateTable("t");
  ASSERT_EQ(Run({"load", pool_, "t", "--count", "20000", "--sequential"}).exit_code, 0);
  nlohmann::json info = nlohmann::json::parse(Run({"info", pool_, "--json"}).out);
  EXPECT_EQ(info["tables"][0]["stats"]["keys"], 20000);
}

}  // namespace
}  // namespace gpkv::testing
