// gpkv tables / put / get / del on a real pool: what they print and how they
// exit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolKv : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("64M"));
  }
  void CreateTable(const std::string& name, const std::vector<std::string>& options = {}) {
    std::vector<std::string> args = {"tables", "create", pool_, name, "--expected-keys", "4K"};
    args.insert(args.end(), options.begin(), options.end());
    ToolResult result = Run(args);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "");
  }
};

TEST_F(ToolKv, TablesCreateListAndDrop) {
  CreateTable("users");
  CreateTable("wide", {"--key-size", "16", "--value-size", "32"});

  ToolResult list = Run({"tables", pool_});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::vector<std::string> lines = Lines(list.out);
  ASSERT_EQ(lines.size(), 3u) << list.out;
  EXPECT_EQ(lines[0].rfind("NAME", 0), 0u);
  EXPECT_NE(list.out.find("users"), std::string::npos);
  EXPECT_NE(list.out.find("2L-2H-8S"), std::string::npos);

  ToolResult json_list = Run({"tables", pool_, "--json"});
  ASSERT_EQ(json_list.exit_code, 0) << json_list.err;
  nlohmann::json tables = nlohmann::json::parse(json_list.out);
  ASSERT_EQ(tables.size(), 2u);
  for (const nlohmann::json& table : tables) {
    if (table["name"] == "wide") {
      EXPECT_EQ(table["key_size"], 16);
      EXPECT_EQ(table["value_size"], 32);
      EXPECT_EQ(table["kind"], "hash");
      EXPECT_EQ(table["durability"], "persistent");
    }
  }

  ToolResult dropped = Run({"tables", "drop", pool_, "users"});
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  tables = nlohmann::json::parse(Run({"tables", pool_, "--json"}).out);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0]["name"], "wide");
}

TEST_F(ToolKv, TablesCreateRejectsBadSizesAsUsage) {
  ToolResult result = Run({"tables", "create", pool_, "t", "--key-size", "7"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.rfind("gpkv:", 0), 0u) << result.err;
  result = Run({"tables", "create", pool_, "t", "--value-size", "129"});
  EXPECT_EQ(result.exit_code, 1);
}

TEST_F(ToolKv, TablesCreateTwiceExits3AndDropOfAbsentTableExits4) {
  CreateTable("users");
  ToolResult again = Run({"tables", "create", pool_, "users"});
  EXPECT_EQ(again.exit_code, 3);
  EXPECT_EQ(again.err.rfind("gpkv: tables create: ", 0), 0u) << again.err;
  ToolResult drop = Run({"tables", "drop", pool_, "absent"});
  EXPECT_EQ(drop.exit_code, 4);
  EXPECT_EQ(drop.err.rfind("gpkv: tables drop: ", 0), 0u) << drop.err;
}

TEST_F(ToolKv, PutThenGetPrintsKeyValueLines) {
  CreateTable("users");
  ToolResult put = Run({"put", pool_, "users", "1", "100", "2", "200", "0x10", "0xff"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_EQ(put.out, "");

  ToolResult get = Run({"get", pool_, "users", "1", "2", "16"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "1 100\n2 200\n16 255\n");

  ToolResult read_only = Run({"get", "--read-only", pool_, "users", "2"});
  EXPECT_EQ(read_only.exit_code, 0) << read_only.err;
  EXPECT_EQ(read_only.out, "2 200\n");

  ToolResult hex = Run({"get", pool_, "users", "--hex", "10"});
  ASSERT_EQ(hex.exit_code, 0) << hex.err;
  EXPECT_EQ(hex.out, "0x0000000000000010 0x00000000000000ff\n");
}

TEST_F(ToolKv, GetJsonGivesEachKeyWhetherFoundAndItsValue) {
  CreateTable("users");
  ASSERT_EQ(Run({"put", pool_, "users", "1", "100"}).exit_code, 0);
  ToolResult get = Run({"get", pool_, "users", "1", "99", "--json"});
  EXPECT_EQ(get.exit_code, 4) << get.err;  // 99 is not there, --json or not
  EXPECT_EQ(get.err, "");
  nlohmann::json pairs = nlohmann::json::parse(get.out);
  EXPECT_EQ(pairs, nlohmann::json::parse(R"([{"key": 1, "found": true, "value": 100},
                                             {"key": 99, "found": false}])"));

  CreateTable("wide", {"--key-size", "16"});
  ASSERT_EQ(Run({"put", pool_, "wide", "5", "6"}).exit_code, 0);
  ToolResult wide = Run({"get", pool_, "wide", "5", "--json"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  // A key wider than 8 bytes is the text the plain output prints.
  EXPECT_EQ(nlohmann::json::parse(wide.out)[0]["key"], "0x00000000000000000000000000000005");
  EXPECT_EQ(nlohmann::json::parse(wide.out)[0]["value"], 6);
}

TEST_F(ToolKv, LoadJsonReportsThePairsLoaded) {
  CreateTable("users");
  ToolResult load = Run({"load", pool_, "users", "--count", "100", "--json"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  nlohmann::json report = nlohmann::json::parse(load.out);
  EXPECT_EQ(report["table"], "users");
  EXPECT_EQ(report["pairs"], 100);
  EXPECT_TRUE(report["seconds"].is_number());
  EXPECT_TRUE(report["keys_per_second"].is_number());
}

TEST_F(ToolKv, ErrorsUnderJsonGoToStderrWithTheExitCode) {
  CreateTable("users");
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"get", pool_, "absent", "1", "--json"},
                                             {"dump", pool_, "absent", "--json"},
                                             {"info", scratch_.File("absent.gpkv"), "--json"},
                                             {"tables", scratch_.File("absent.gpkv"), "--json"},
                                             {"verify", scratch_.File("absent.gpkv"), "--json"}}) {
    ToolResult result = Run(args);
    EXPECT_EQ(result.exit_code, 4) << args[0] << ": " << result.err;
    EXPECT_EQ(result.out, "") << args[0];
    EXPECT_EQ(result.err.rfind("gpkv: " + args[0] + ": not found: ", 0), 0u) << result.err;
  }
}

TEST_F(ToolKv, PutReplacesAndTheLastDuplicateWins) {
  CreateTable("users");
  ASSERT_EQ(Run({"put", pool_, "users", "7", "1", "7", "2"}).exit_code, 0);
  EXPECT_EQ(Run({"get", pool_, "users", "7"}).out, "7 2\n");
  ASSERT_EQ(Run({"put", pool_, "users", "7", "3"}).exit_code, 0);
  EXPECT_EQ(Run({"get", pool_, "users", "7"}).out, "7 3\n");
}

TEST_F(ToolKv, GetOfAbsentKeyPrintsNotFoundAndExits4) {
  CreateTable("users");
  ASSERT_EQ(Run({"put", pool_, "users", "1", "100"}).exit_code, 0);
  ToolResult get = Run({"get", pool_, "users", "1", "99"});
  EXPECT_EQ(get.exit_code, 4);
  EXPECT_EQ(get.out, "1 100\n99 (not found)\n");
  EXPECT_EQ(get.err, "");
}

TEST_F(ToolKv, DelErasesAndReportsAbsentKeysUnlessForced) {
  CreateTable("users");
  ASSERT_EQ(Run({"put", pool_, "users", "1", "100", "2", "200"}).exit_code, 0);
  ToolResult del = Run({"del", pool_, "users", "1"});
  EXPECT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(del.out, "");
  EXPECT_EQ(Run({"get", pool_, "users", "1"}).out, "1 (not found)\n");

  ToolResult absent = Run({"del", pool_, "users", "1", "2"});
  EXPECT_EQ(absent.exit_code, 4);
  EXPECT_EQ(absent.out, "1 (not found)\n");
  EXPECT_EQ(Run({"get", pool_, "users", "2"}).exit_code, 4);

  ToolResult forced = Run({"del", "-f", pool_, "users", "1"});
  EXPECT_EQ(forced.exit_code, 0);
  EXPECT_EQ(forced.out, "");
}

TEST_F(ToolKv, WideKeysAndValuesPrintAsFullWidthHex) {
  CreateTable("wide", {"--key-size", "16", "--value-size", "3"});
  ASSERT_EQ(Run({"put", pool_, "wide", "0x0102030405060708090a0b0c0d0e0f10", "0xabcdef"}).exit_code,
            0);
  ASSERT_EQ(Run({"put", pool_, "wide", "5", "65535"}).exit_code, 0);
  ToolResult get = Run({"get", pool_, "wide", "0x0102030405060708090a0b0c0d0e0f10", "0x5"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out,
            "0x0102030405060708090a0b0c0d0e0f10 11259375\n"
            "0x00000000000000000000000000000005 65535\n");
}

TEST_F(ToolKv, NumbersThatDoNotFitAreUsageErrors) {
  CreateTable("small", {"--value-size", "1"});
  ToolResult too_big = Run({"put", pool_, "small", "1", "256"});
  EXPECT_EQ(too_big.exit_code, 1);
  EXPECT_NE(too_big.err.find("does not fit in 1 byte"), std::string::npos) << too_big.err;
  EXPECT_EQ(Run({"put", pool_, "small", "1", "255"}).exit_code, 0);
  EXPECT_EQ(Run({"put", pool_, "small", "18446744073709551616", "1"}).exit_code, 1);
  EXPECT_EQ(Run({"put", pool_, "small", "0x1ffffffffffffffff", "1"}).exit_code, 1);
  EXPECT_EQ(Run({"get", pool_, "small", "12abc"}).exit_code, 1);
  EXPECT_EQ(Run({"put", pool_, "small", "1"}).exit_code, 1);  // no value
}

TEST_F(ToolKv, OperationsOnAnAbsentTableExit4) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"get", pool_, "absent", "1"},
                                             {"put", pool_, "absent", "1", "2"},
                                             {"del", pool_, "absent", "1"},
                                             {"dump", pool_, "absent"}}) {
    ToolResult result = Run(args);
    EXPECT_EQ(result.exit_code, 4) << args[0] << ": " << result.err;
    EXPECT_EQ(result.err.rfind("gpkv: " + args[0] + ": not found: ", 0), 0u) << result.err;
    EXPECT_EQ(result.out, "") << args[0];
  }
}

TEST_F(ToolKv, InfoShowsEveryTableWithItsCounters) {
  CreateTable("users");
  ASSERT_EQ(Run({"put", pool_, "users", "1", "1", "2", "2", "3", "3"}).exit_code, 0);
  ToolResult info = Run({"info", pool_, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  nlohmann::json json = nlohmann::json::parse(info.out);
  ASSERT_EQ(json["tables"].size(), 1u);
  EXPECT_EQ(json["tables"][0]["name"], "users");
  EXPECT_EQ(json["tables"][0]["stats"]["keys"], 3);
  EXPECT_GT(json["pool"]["used_bytes"].get<uint64_t>(), 0u);

  ToolResult text = Run({"info", pool_});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("table 'users'"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("keys         3"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace gpkv::testing
