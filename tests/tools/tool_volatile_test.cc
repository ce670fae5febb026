// The gpkv tool on a pool holding a volatile hash table (slab_hash): created
// with --durability volatile, listed and shown as volatile, its pairs alive
// within one command only, and verify / repair content with it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolVolatile : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("32M"));
    ToolResult created = Run({"tables", "create", pool_, "cache", "--durability", "volatile",
                              "--value-size", "16", "--expected-keys", "4K", "--backend", "cpu"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
    ASSERT_EQ(Run({"tables", "create", pool_, "kept", "--expected-keys", "4K"}).exit_code, 0);
    ASSERT_EQ(Run({"put", pool_, "kept", "1", "100"}).exit_code, 0);
  }
};

TEST_F(ToolVolatile, TablesListsItAsVolatileWithoutAGeometry) {
  ToolResult list = Run({"tables", pool_});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::vector<std::string> lines = Lines(list.out);
  ASSERT_EQ(lines.size(), 3u) << list.out;
  EXPECT_NE(lines[1].find("cache"), std::string::npos);
  EXPECT_NE(lines[1].find("volatile"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].find("2L-2H-8S"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("2L-2H-8S"), std::string::npos) << lines[2];

  nlohmann::json json = nlohmann::json::parse(Run({"tables", pool_, "--json"}).out);
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["durability"], "volatile");
  EXPECT_EQ(json[0]["value_size"], 16);
  EXPECT_FALSE(json[0].contains("geometry"));
  EXPECT_EQ(json[0]["contents"], "memory (volatile: empty after reopen)");
  EXPECT_EQ(json[1]["contents"], "pool");
}

TEST_F(ToolVolatile, PairsLiveWithinOneCommandOnly) {
  ToolResult put = Run({"put", pool_, "cache", "1", "2", "3", "4"});
  EXPECT_EQ(put.exit_code, 0) << put.err;
  // The next command opens the pool again: the table is empty.
  ToolResult get = Run({"get", pool_, "cache", "1", "3"});
  EXPECT_EQ(get.exit_code, 4) << get.err;
  EXPECT_EQ(get.out, "1 (not found)\n3 (not found)\n");
  ToolResult del = Run({"del", pool_, "cache", "1"});
  EXPECT_EQ(del.exit_code, 4);
  EXPECT_EQ(Run({"del", pool_, "cache", "1", "-f"}).exit_code, 0);
  ToolResult load = Run({"load", pool_, "cache", "--count", "20000", "--batch", "5000"});
  EXPECT_EQ(load.exit_code, 0) << load.err;
  EXPECT_NE(load.out.find("loaded 20000 pairs"), std::string::npos) << load.out;
  ToolResult dump = Run({"dump", pool_, "cache"});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(dump.out,
            "# gpkv-dump format=1 kind=hash durability=volatile key_size=8 value_size=16 "
            "expected_keys=4096\n");
  // The persistent table beside it keeps its pair.
  EXPECT_EQ(Run({"get", pool_, "kept", "1"}).out, "1 100\n");
}

TEST_F(ToolVolatile, InfoShowsItAsVolatileWithItsProperties) {
  ToolResult info = Run({"info", pool_, "--backend", "cpu"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("table 'cache' (id 1): hash, volatile, key 8 B, value 16 B"),
            std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("volatile     contents live in memory, empty after reopen"),
            std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("family       slab_hash"), std::string::npos) << info.out;
  // Where the engine runs it; no fallback line when it runs where asked.
  EXPECT_NE(info.out.find("backend      cpu"), std::string::npos) << info.out;
  EXPECT_EQ(info.out.find("fallback"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("slab_hash.memory-utilisation"), std::string::npos) << info.out;

  ToolResult json_text = Run({"info", pool_, "--json", "--backend", "cpu"});
  ASSERT_EQ(json_text.exit_code, 0) << json_text.err;
  nlohmann::json json = nlohmann::json::parse(json_text.out);
  ASSERT_EQ(json["tables"].size(), 2u);
  const nlohmann::json& cache = json["tables"][0];
  EXPECT_EQ(cache["durability"], "volatile");
  EXPECT_EQ(cache["stats"]["family"], "slab_hash");
  EXPECT_EQ(cache["stats"]["backend"], "cpu");
  EXPECT_FALSE(cache["stats"].contains("fallback"));
  EXPECT_EQ(cache["stats"]["keys"], 0);
  EXPECT_GT(cache["stats"]["bytes"].get<uint64_t>(), 0u);
  for (const char* name :
       {"slab_hash.buckets", "slab_hash.slabs", "slab_hash.slots", "slab_hash.dead-slots",
        "slab_hash.load-factor", "slab_hash.memory-utilisation", "slab_hash.super-blocks",
        "slab_hash.rehashes", "slab_hash.rehash-seconds", "slab_hash.flushes"}) {
    EXPECT_TRUE(cache["stats"]["properties"].contains(name)) << name;
  }
  EXPECT_GT(cache["stats"]["properties"]["slab_hash.slots"].get<uint64_t>(), 4096u);
  EXPECT_EQ(json["tables"][1]["stats"]["keys"], 1);
}

TEST_F(ToolVolatile, VerifyAndRepairAcceptAPoolWithAVolatileTable) {
  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("table 'cache': volatile: nothing in the pool"), std::string::npos)
      << verify.out;
  EXPECT_NE(verify.out.find(": ok ("), std::string::npos) << verify.out;
  nlohmann::json report = nlohmann::json::parse(Run({"verify", pool_, "--json"}).out);
  EXPECT_FALSE(report["corruption"].get<bool>());
  ASSERT_EQ(report["tables"].size(), 2u);
  EXPECT_EQ(report["tables"][0]["name"], "cache");

  ToolResult repair = Run({"repair", pool_, "--json"});
  ASSERT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  nlohmann::json repaired = nlohmann::json::parse(repair.out);
  EXPECT_EQ(repaired["tables_dropped"], 0);
  EXPECT_EQ(repaired["extents_freed"], 0);
  // Still declared, still a volatile table, the other table intact.
  nlohmann::json tables = nlohmann::json::parse(Run({"tables", pool_, "--json"}).out);
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0]["name"], "cache");
  EXPECT_EQ(tables[0]["durability"], "volatile");
  EXPECT_EQ(Run({"get", pool_, "kept", "1"}).out, "1 100\n");
  EXPECT_EQ(Run({"verify", pool_}).exit_code, 0);
}

TEST_F(ToolVolatile, AGeometryForAVolatileTableIsRefusedSayingWhy) {
  ToolResult refused =
      Run({"tables", "create", pool_, "bad", "--durability", "volatile", "--levels", "3"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_EQ(refused.err.rfind("gpkv: tables create: ", 0), 0u) << refused.err;
  EXPECT_NE(refused.err.find("persistent hash tables"), std::string::npos) << refused.err;
}

TEST_F(ToolVolatile, DroppingItLeavesThePoolAsBefore) {
  nlohmann::json before = nlohmann::json::parse(Run({"info", pool_, "--json"}).out);
  ToolResult drop = Run({"tables", "drop", pool_, "cache"});
  ASSERT_EQ(drop.exit_code, 0) << drop.err;
  nlohmann::json after = nlohmann::json::parse(Run({"info", pool_, "--json"}).out);
  ASSERT_EQ(after["tables"].size(), 1u);
  EXPECT_EQ(after["tables"][0]["name"], "kept");
  // The catalog shrank by an entry; no table extent was freed.
  EXPECT_EQ(after["pool"]["extents"], before["pool"]["extents"]);
}

}  // namespace
}  // namespace gpkv::testing
