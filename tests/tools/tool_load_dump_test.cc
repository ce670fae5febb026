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
            "# gpkv-dump format=1 kind=hash durability=persistent key_size=16 value_size=24 "
            "expected_keys=16384 levels=2 hash_locations=2 slots=8 top_buckets=0");
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
            "# gpkv-dump format=1 kind=hash durability=persistent key_size=8 value_size=8 "
            "expected_keys=16384 levels=2 hash_locations=2 slots=8 top_buckets=0\n");
}

// The first line of `gpkv dump POOL TABLE`.
std::string DumpHeader(const ToolResult& dump) { return Lines(dump.out).at(0); }

// `gpkv tables POOL --json` without what differs between pools (id, root).
nlohmann::json TablesWithoutPlace(const ToolResult& tables) {
  nlohmann::json json = nlohmann::json::parse(tables.out);
  for (nlohmann::json& table : json) {
    table.erase("id");
    table.erase("root_offset");
  }
  return json;
}

// load --create makes, from a dump's header, a table of every option the
// dumped one has, in a pool that lacked it, and loads the pairs into it.
TEST_F(ToolLoadDump, LoadCreateMakesTheDumpedTableWithItsOptions) {
  CreateTable("wide", {"--key-size", "16", "--value-size", "24", "--levels", "3",
                       "--hash-locations", "1", "--slots", "16"});
  CreateTable("events", {"--kind", "ordered", "--batch-entries", "64", "--log-batches", "4",
                         "--max-dead-percent", "30"});
  CreateTable("cache", {"--durability", "volatile", "--value-size", "16"});
  ASSERT_EQ(Run({"load", pool_, "wide", "--count", "2000"}).exit_code, 0);
  ASSERT_EQ(Run({"load", pool_, "events", "--count", "2000"}).exit_code, 0);
  const std::string copy = scratch_.File("copy.gpkv");
  ASSERT_EQ(Run({"create", copy, "--size", "64M"}).exit_code, 0);
  for (const char* table : {"wide", "events", "cache"}) {
    ToolResult dump = Run({"dump", pool_, table});
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    ToolResult load = Run({"load", copy, table, "--file", "-", "--create", "--json"}, dump.out);
    ASSERT_EQ(load.exit_code, 0) << table << ": " << load.err;
    nlohmann::json report = nlohmann::json::parse(load.out);
    EXPECT_EQ(report["created"], true) << load.out;
    EXPECT_EQ(report["pairs"].get<size_t>(), DumpedPairs(dump.out).size()) << table;
    ToolResult copied = Run({"dump", copy, table});
    ASSERT_EQ(copied.exit_code, 0) << copied.err;
    EXPECT_EQ(DumpHeader(copied), DumpHeader(dump)) << table;
  }
  EXPECT_EQ(TablesWithoutPlace(Run({"tables", copy, "--json"})),
            TablesWithoutPlace(Run({"tables", pool_, "--json"})));
  std::vector<std::string> wide = Lines(Run({"dump", copy, "wide"}).out);
  wide.erase(wide.begin());
  std::sort(wide.begin(), wide.end());
  EXPECT_EQ(wide.size(), 2000u);
  EXPECT_EQ(wide, SortedDump("wide"));
  EXPECT_EQ(Lines(Run({"dump", copy, "events"}).out), Lines(Run({"dump", pool_, "events"}).out));
  ToolResult verify = Run({"verify", copy});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// A header of an older gpkv (no expected keys, no family options) creates a
// table of its kind and sizes with the defaults of the rest.
TEST_F(ToolLoadDump, LoadCreateFromAnOlderHeaderTakesTheDefaults) {
  ToolResult load = Run(
      {"load", pool_, "t", "--file", "-", "--create"},
      "# gpkv-dump format=1 kind=ordered durability=persistent key_size=16 value_size=8\n1 2\n");
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_NE(load.out.find("created table 't' from the dump header"), std::string::npos) << load.out;
  EXPECT_EQ(DumpHeader(Run({"dump", pool_, "t"})),
            "# gpkv-dump format=1 kind=ordered durability=persistent key_size=16 value_size=8 "
            "expected_keys=1048576 batch_entries=65536 log_batches=1 max_dead_percent=50");
  EXPECT_EQ(SortedDump("t"), (std::vector<std::string>{"0x00000000000000000000000000000001 2"}));
}

// An existing table: --create checks the header against it as a load without
// --create does, and loads into it.
TEST_F(ToolLoadDump, LoadCreateIntoAnExistingTableChecksTheHeader) {
  CreateTable("t");
  CreateTable("wide", {"--key-size", "16", "--value-size", "24"});
  ASSERT_EQ(Run({"put", pool_, "wide", "1", "2"}).exit_code, 0);
  ToolResult other =
      Run({"load", pool_, "t", "--file", "-", "--create"}, Run({"dump", pool_, "wide"}).out);
  EXPECT_EQ(other.exit_code, 1) << other.err;
  EXPECT_NE(other.err.find("<stdin>:1: a dump of a table with 16-byte keys"), std::string::npos)
      << other.err;
  EXPECT_TRUE(SortedDump("t").empty());
  ToolResult same = Run({"load", pool_, "t", "--file", "-", "--create", "--json"},
                        "# gpkv-dump format=1 kind=hash durability=persistent key_size=8 "
                        "value_size=8\n5 6\n");
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(nlohmann::json::parse(same.out)["created"], false) << same.out;
  EXPECT_EQ(SortedDump("t"), (std::vector<std::string>{"5 6"}));
}

// --create needs the header on the first line, and a file; a header it
// cannot use creates nothing.
TEST_F(ToolLoadDump, LoadCreateWithoutAUsableHeaderCreatesNothing) {
  ToolResult no_header = Run({"load", pool_, "t", "--file", "-", "--create"}, "1 2\n");
  EXPECT_EQ(no_header.exit_code, 1) << no_header.err;
  EXPECT_NE(no_header.err.find("<stdin>:1: --create needs a dump header"), std::string::npos)
      << no_header.err;
  ToolResult bad_kind =
      Run({"load", pool_, "t", "--file", "-", "--create"},
          "# gpkv-dump format=1 kind=tree durability=persistent key_size=8 value_size=8\n");
  EXPECT_EQ(bad_kind.exit_code, 1) << bad_kind.err;
  ToolResult newer =
      Run({"load", pool_, "t", "--file", "-", "--create"},
          "# gpkv-dump format=2 kind=hash durability=persistent key_size=8 value_size=8\n");
  EXPECT_EQ(newer.exit_code, 5) << newer.err;
  ToolResult bad_option = Run({"load", pool_, "t", "--file", "-", "--create"},
                              "# gpkv-dump format=1 kind=hash durability=persistent key_size=8 "
                              "value_size=8 slots=5\n");
  EXPECT_EQ(bad_option.exit_code, 1) << bad_option.err;
  EXPECT_EQ(Run({"load", pool_, "t", "--count", "5", "--create"}).exit_code, 1);
  ToolResult tables = Run({"tables", pool_, "--json"});
  ASSERT_EQ(tables.exit_code, 0) << tables.err;
  EXPECT_TRUE(nlohmann::json::parse(tables.out).empty()) << tables.out;
}

TEST_F(ToolLoadDump, LoadedKeysSurviveAndCountInInfo) {
  CreateTable("t");
  ASSERT_EQ(Run({"load", pool_, "t", "--count", "20000", "--sequential"}).exit_code, 0);
  nlohmann::json info = nlohmann::json::parse(Run({"info", pool_, "--json"}).out);
  EXPECT_EQ(info["tables"][0]["stats"]["keys"], 20000);
}

}  // namespace
}  // namespace gpkv::testing
