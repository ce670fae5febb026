// gpkv verify and gpkv repair: a clean pool verifies with exit 0, a corrupt
// one with exit 2 and a finding naming what is wrong. A damaged table is
// listed as such by info while the others dump, and repair drops only it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "corruption/pool_map.h"
#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolVerify : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(scratch_.ok());
    pool_ = scratch_.File("pool.gpkv");
    ASSERT_EQ(Run({"create", pool_, "--size", "64M"}).exit_code, 0);
    ASSERT_EQ(Run({"tables", "create", pool_, "t", "--expected-keys", "8K"}).exit_code, 0);
    ASSERT_EQ(Run({"load", pool_, "t", "--count", "5000"}).exit_code, 0);
  }
  ToolResult Run(const std::vector<std::string>& args) { return RunTool(scratch_, args); }
  // Flips the bits of one byte of the pool file.
  void FlipByte(uint64_t offset) {
    int fd = open(pool_.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    unsigned char byte = 0;
    ASSERT_EQ(pread(fd, &byte, 1, static_cast<off_t>(offset)), 1);
    byte = static_cast<unsigned char>(~byte);
    ASSERT_EQ(pwrite(fd, &byte, 1, static_cast<off_t>(offset)), 1);
    close(fd);
  }

  // Lines of `gpkv dump` of table `name`; -1 unless it exits 0.
  int DumpLines(const std::string& name) {
    ToolResult dump = Run({"dump", pool_, name});
    if (dump.exit_code != 0) return -1;
    std::istringstream lines(dump.out);
    int count = 0;
    for (std::string line; std::getline(lines, line);) count += !line.empty();
    return count;
  }

  ScratchDir scratch_;
  std::string pool_;
};

TEST_F(ToolVerify, ADamagedTableIsListedAsSuchTheOthersDumpAndRepairDropsOnlyIt) {
  for (const char* name : {"u", "v"}) {
    ASSERT_EQ(Run({"tables", "create", pool_, name, "--expected-keys", "8K"}).exit_code, 0);
    ASSERT_EQ(Run({"load", pool_, name, "--count", "5000"}).exit_code, 0);
  }
  corruption::PoolMap map = corruption::ReadPoolMap(pool_);
  ASSERT_EQ(map.tables.size(), 3u);
  ASSERT_EQ(map.tables[1].name, "u");
  FlipByte(map.tables[1].root + offsetof(gphash::GphashRoot, checksum));

  ToolResult text = Run({"info", pool_});
  EXPECT_EQ(text.exit_code, 2) << text.out << text.err;
  EXPECT_NE(text.out.find("table 'u'"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("damaged"), std::string::npos) << text.out;
  ToolResult json_text = Run({"info", pool_, "--json"});
  EXPECT_EQ(json_text.exit_code, 2) << json_text.err;
  nlohmann::json info = nlohmann::json::parse(json_text.out);
  ASSERT_EQ(info["tables"].size(), 3u);
  for (const auto& table : info["tables"]) {
    const bool damaged = table["name"] == "u";
    EXPECT_EQ(table["damaged"], damaged) << table.dump();
    if (damaged) {
      EXPECT_NE(table["error"].get<std::string>().find("corruption"), std::string::npos);
    } else {
      EXPECT_EQ(table["stats"]["keys"], 5000) << table.dump();
    }
  }
  EXPECT_EQ(DumpLines("t"), 5000);
  EXPECT_EQ(DumpLines("v"), 5000);
  EXPECT_EQ(Run({"dump", pool_, "u"}).exit_code, 2);

  ToolResult repair = Run({"repair", pool_, "--json"});
  ASSERT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  EXPECT_EQ(nlohmann::json::parse(repair.out)["tables_dropped"], 1) << repair.out;
  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  ToolResult after = Run({"info", pool_, "--json"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  nlohmann::json repaired = nlohmann::json::parse(after.out);
  ASSERT_EQ(repaired["tables"].size(), 2u);
  EXPECT_EQ(repaired["tables"][0]["name"], "t");
  EXPECT_EQ(repaired["tables"][1]["name"], "v");
  EXPECT_EQ(DumpLines("t"), 5000);
  EXPECT_EQ(DumpLines("v"), 5000);
}

TEST_F(ToolVerify, ACleanPoolVerifiesWithExit0) {
  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find(": ok ("), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("table 't': 5000 keys"), std::string::npos) << verify.out;
  EXPECT_EQ(verify.err, "");

  ToolResult json = Run({"verify", pool_, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_FALSE(report["corruption"].get<bool>());
  ASSERT_EQ(report["tables"].size(), 1u);
  EXPECT_EQ(report["tables"][0]["keys"], 5000);
}

TEST_F(ToolVerify, ACorruptHeaderIsReportedWithExit2) {
  FlipByte(72);  // PoolHeader.created_unix_ns: the header checksum no longer matches
  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("corruption"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("CORRUPT"), std::string::npos) << verify.out;
  EXPECT_EQ(verify.err.rfind("gpkv: verify: ", 0), 0u) << verify.err;

  ToolResult json = Run({"verify", pool_, "--json"});
  EXPECT_EQ(json.exit_code, 2);
  nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_TRUE(report["corruption"].get<bool>());
  bool header_finding = false;
  for (const nlohmann::json& finding : report["findings"]) {
    if (finding["severity"] == "corruption" &&
        finding["message"].get<std::string>().find("header") != std::string::npos) {
      header_finding = true;
    }
  }
  EXPECT_TRUE(header_finding) << json.out;

  // Opening the pool for anything else fails with the corruption exit code.
  ToolResult info = Run({"info", pool_});
  EXPECT_EQ(info.exit_code, 2) << info.err;
  EXPECT_EQ(info.err.rfind("gpkv: info: corruption", 0), 0u) << info.err;
  // Nothing to salvage without a header.
  EXPECT_EQ(Run({"repair", pool_}).exit_code, 2);
}

TEST_F(ToolVerify, RepairDropsACorruptSlotAndThenThePoolVerifies) {
  corruption::PoolMap map = corruption::ReadPoolMap(pool_);
  ASSERT_EQ(map.tables.size(), 1u);
  ASSERT_FALSE(map.tables[0].valid_slots.empty());
  // A key byte that no longer matches its fingerprint and bucket.
  FlipByte(map.tables[0].valid_slots[0].key_offset);

  ToolResult verify = Run({"verify", pool_});
  ASSERT_EQ(verify.exit_code, 2) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("table 't'"), std::string::npos) << verify.out;

  ToolResult repair = Run({"repair", pool_, "--json"});
  ASSERT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  nlohmann::json report = nlohmann::json::parse(repair.out);
  EXPECT_GE(report["slots_cleared"].get<uint64_t>(), 1u) << repair.out;
  EXPECT_EQ(report["tables_dropped"], 0);

  ToolResult after = Run({"verify", pool_});
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  nlohmann::json info = nlohmann::json::parse(Run({"info", pool_, "--json"}).out);
  EXPECT_EQ(info["tables"][0]["stats"]["keys"], 4999);
}

TEST_F(ToolVerify, RepairOfACleanPoolChangesNothing) {
  ToolResult repair = Run({"repair", pool_});
  EXPECT_EQ(repair.exit_code, 0) << repair.err;
  EXPECT_NE(repair.out.find("tables dropped      0"), std::string::npos) << repair.out;
  ToolResult json = Run({"repair", pool_, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["tables_dropped"], 0);
  EXPECT_EQ(report["extents_freed"], 0);
  EXPECT_EQ(Run({"verify", pool_}).exit_code, 0);
  nlohmann::json info = nlohmann::json::parse(Run({"info", pool_, "--json"}).out);
  EXPECT_EQ(info["tables"][0]["stats"]["keys"], 5000);
}

TEST_F(ToolVerify, VerifyOfAMissingFileExits3) {
  ToolResult verify = Run({"verify", scratch_.File("absent.gpkv")});
  EXPECT_EQ(verify.exit_code, 3);
  EXPECT_EQ(verify.err.rfind("gpkv: verify: ", 0), 0u) << verify.err;
}

}  // namespace
}  // namespace gpkv::testing
