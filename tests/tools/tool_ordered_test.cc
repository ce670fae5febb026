// gpkv on an ordered table: tables create --kind ordered, put / get / del,
// range (and range --limit), count, compact, dump in key order, info's lsm.* properties, verify;
// and the ordered commands on a hash table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolOrdered : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("64M"));
    ToolResult table =
        Run({"tables", "create", pool_, "events", "--kind", "ordered", "--batch-entries", "16"});
    ASSERT_EQ(table.exit_code, 0) << table.err;
  }
};

TEST_F(ToolOrdered, PutRangeCountDelCompactDump) {
  std::vector<std::string> put = {"put", pool_, "events"};
  for (int key = 40; key >= 1; --key) {
    put.push_back(std::to_string(key * 10));
    put.push_back(std::to_string(key));
  }
  ToolResult putting = Run(put);
  ASSERT_EQ(putting.exit_code, 0) << putting.err;

  ToolResult range = Run({"range", pool_, "events", "95", "130"});
  ASSERT_EQ(range.exit_code, 0) << range.err;
  EXPECT_EQ(range.out, "100 10\n110 11\n120 12\n130 13\n");
  ToolResult count = Run({"count", pool_, "events", "0", "0xffff"});
  ASSERT_EQ(count.exit_code, 0) << count.err;
  EXPECT_EQ(count.out, "40\n");
  // JSON numbers as dump --json prints them.
  ToolResult range_json = Run({"range", pool_, "events", "95", "110", "--json"});
  ASSERT_EQ(range_json.exit_code, 0) << range_json.err;
  EXPECT_EQ(nlohmann::json::parse(range_json.out),
            nlohmann::json::parse(R"([{"key": 100, "value": 10}, {"key": 110, "value": 11}])"));
  // --limit N: the N smallest keys of the range; 0 (the default) all of them.
  ToolResult limited = Run({"range", "--limit", "2", pool_, "events", "95", "130"});
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  EXPECT_EQ(limited.out, "100 10\n110 11\n");
  ToolResult limited_json =
      Run({"range", pool_, "events", "0", "0xffff", "--limit", "1", "--json"});
  ASSERT_EQ(limited_json.exit_code, 0) << limited_json.err;
  EXPECT_EQ(nlohmann::json::parse(limited_json.out),
            nlohmann::json::parse(R"([{"key": 10, "value": 1}])"));
  ToolResult unlimited = Run({"range", "--limit", "0", pool_, "events", "95", "130"});
  ASSERT_EQ(unlimited.exit_code, 0) << unlimited.err;
  EXPECT_EQ(unlimited.out, range.out);
  EXPECT_EQ(Run({"range", "--limit", "-1", pool_, "events", "95", "130"}).exit_code, 1);
  ToolResult count_json = Run({"count", pool_, "events", "0", "0xffff", "--json"});
  ASSERT_EQ(count_json.exit_code, 0) << count_json.err;
  EXPECT_EQ(nlohmann::json::parse(count_json.out), nlohmann::json::parse(R"({"count": 40})"));

  ToolResult del = Run({"del", pool_, "events", "100", "110", "999"});
  EXPECT_EQ(del.exit_code, 4);
  EXPECT_EQ(del.out, "999 (not found)\n");
  ToolResult get = Run({"get", pool_, "events", "100", "120"});
  EXPECT_EQ(get.exit_code, 4);
  EXPECT_EQ(get.out, "100 (not found)\n120 12\n");

  ToolResult info = Run({"info", pool_, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("lsm.levels"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("lsm.dead-entries"), std::string::npos);

  ToolResult compact = Run({"compact", pool_, "events"});
  ASSERT_EQ(compact.exit_code, 0) << compact.err;
  ToolResult dump = Run({"dump", pool_, "events"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  std::vector<std::string> lines = Lines(dump.out);
  ASSERT_EQ(lines.size(), 39u);
  EXPECT_EQ(lines.front(),
            "# gpkv-dump format=1 kind=ordered durability=persistent key_size=8 value_size=8 "
            "expected_keys=1048576 batch_entries=16 log_batches=1 max_dead_percent=50");
  lines.erase(lines.begin());
  EXPECT_EQ(lines.front(), "10 1");
  EXPECT_EQ(lines[9], "120 12");  // 100 and 110 are gone; key order
  EXPECT_EQ(lines.back(), "400 40");

  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(ToolOrdered, OrderedCommandsOnAHashTableFail) {
  ASSERT_EQ(Run({"tables", "create", pool_, "h"}).exit_code, 0);
  ToolResult range = Run({"range", pool_, "h", "1", "2"});
  EXPECT_EQ(range.exit_code, 3);
  EXPECT_NE(range.err.find("hash table"), std::string::npos) << range.err;
  EXPECT_EQ(Run({"compact", pool_, "h"}).exit_code, 3);
  EXPECT_EQ(Run({"count", pool_, "events", "x", "2"}).exit_code, 1);
}

}  // namespace
}  // namespace gpkv::testing
