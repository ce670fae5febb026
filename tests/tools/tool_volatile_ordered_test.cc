// The gpkv tool on a pool holding a volatile ordered table (the B-tree):
// created with --kind ordered --durability volatile, listed and shown as
// volatile ordered with its properties, every ordered command working on it
// within one command (its contents die with the command's process), and
// verify content with it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolVolatileOrdered : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("32M"));
    ToolResult created = Run({"tables", "create", pool_, "index", "--kind", "ordered",
                              "--durability", "volatile", "--key-size", "16", "--backend", "cpu"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }
};

TEST_F(ToolVolatileOrdered, ItIsListedAndShownWithItsProperties) {
  nlohmann::json tables = nlohmann::json::parse(Run({"tables", pool_, "--json"}).out);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0]["kind"], "ordered");
  EXPECT_EQ(tables[0]["durability"], "volatile");
  EXPECT_EQ(tables[0]["contents"], "memory (volatile: empty after reopen)");

  ToolResult info = Run({"info", pool_, "--json", "--backend", "cpu"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  nlohmann::json json = nlohmann::json::parse(info.out);
  const nlohmann::json& stats = json["tables"][0]["stats"];
  EXPECT_EQ(stats["family"], "btree");
  EXPECT_EQ(stats["keys"], 0);
  for (const char* name : {"btree.versions", "btree.tombstones", "btree.snapshots",
                           "btree.reclaimed", "btree.timestamp"}) {
    EXPECT_TRUE(stats["properties"].contains(name)) << name;
  }
}

TEST_F(ToolVolatileOrdered, OrderedCommandsWorkWithinOneCommand) {
  EXPECT_EQ(Run({"put", pool_, "index", "1", "2", "3", "4"}).exit_code, 0);
  // Each command opens the pool anew: the table is empty.
  ToolResult range = Run({"range", pool_, "index", "0", "10"});
  EXPECT_EQ(range.exit_code, 0) << range.err;
  EXPECT_EQ(range.out, "");
  ToolResult count = Run({"count", pool_, "index", "0", "10"});
  EXPECT_EQ(count.exit_code, 0) << count.err;
  EXPECT_EQ(count.out, "0\n");
  ToolResult load = Run({"load", pool_, "index", "--count", "5000", "--batch", "1000"});
  EXPECT_EQ(load.exit_code, 0) << load.err;
  EXPECT_NE(load.out.find("loaded 5000 pairs"), std::string::npos) << load.out;
  EXPECT_EQ(Run({"compact", pool_, "index"}).exit_code, 0);
  ToolResult dump = Run({"dump", pool_, "index"});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  // A new process: the table is empty, the dump is its header line alone.
  EXPECT_EQ(dump.out,
            "# gpkv-dump format=1 kind=ordered durability=volatile key_size=16 value_size=8 "
            "expected_keys=1048576\n");
  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("table 'index': volatile: nothing in the pool"), std::string::npos)
      << verify.out;
}

}  // namespace
}  // namespace gpkv::testing
