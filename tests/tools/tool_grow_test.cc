// `gpkv grow POOL --size N`: exit codes, and a full pool that takes more
// pairs after it grew.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolGrow : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(scratch_.ok());
    pool_ = scratch_.File("pool.gpkv");
    ToolResult created = Run({"create", pool_, "--size", "4M"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }
  ToolResult Run(const std::vector<std::string>& args) { return RunTool(scratch_, args); }
  std::string Info() {
    ToolResult info = Run({"info", pool_, "--json"});
    EXPECT_EQ(info.exit_code, 0) << info.err;
    return info.out;
  }

  ScratchDir scratch_;
  std::string pool_;
};

TEST_F(ToolGrow, GrowsThePoolAndItsOwnSizeDoesNothing) {
  ToolResult grown = Run({"grow", pool_, "--size", "8M"});
  ASSERT_EQ(grown.exit_code, 0) << grown.err;
  EXPECT_EQ(grown.err, "");
  EXPECT_NE(Info().find("\"pool_size\": 8388608"), std::string::npos) << Info();
  ToolResult again = Run({"grow", pool_, "--size", "8M"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(Info().find("\"pool_size\": 8388608"), std::string::npos) << Info();
  ToolResult verified = Run({"verify", pool_});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

TEST_F(ToolGrow, ASmallerSizeIsAUsageErrorAndTheSizeStays) {
  ToolResult smaller = Run({"grow", pool_, "--size", "2M"});
  EXPECT_EQ(smaller.exit_code, 1) << smaller.err;
  EXPECT_EQ(smaller.err.rfind("gpkv: grow: " + pool_ + ": the pool is 4194304 bytes", 0), 0u)
      << smaller.err;
  EXPECT_NE(smaller.err.find("never shrinks"), std::string::npos) << smaller.err;
  EXPECT_NE(Info().find("\"pool_size\": 4194304"), std::string::npos) << Info();
}

TEST_F(ToolGrow, MissingSizeOrBadSizeIsAUsageError) {
  EXPECT_EQ(Run({"grow", pool_}).exit_code, 1);
  EXPECT_EQ(Run({"grow", pool_, "--size", "lots"}).exit_code, 1);
  EXPECT_EQ(Run({"grow", "--size", "8M"}).exit_code, 1);
}

TEST_F(ToolGrow, AMissingPoolExitsFour) {
  ToolResult missing = Run({"grow", scratch_.File("none.gpkv"), "--size", "8M"});
  EXPECT_EQ(missing.exit_code, 4) << missing.err;  // not found
  EXPECT_NE(missing.err.find("no such pool file"), std::string::npos) << missing.err;
}

TEST_F(ToolGrow, ABusyPoolExitsThreeAndKeepsItsSize) {
  {
    Options options;
    options.backend = Backend::kCpu;
    auto holder = DB::Open(pool_, options);  // this process writes the pool
    ASSERT_TRUE(holder.ok()) << holder.status().ToString();
    ToolResult busy = Run({"grow", pool_, "--size", "8M"});
    EXPECT_EQ(busy.exit_code, 3) << busy.err;
    EXPECT_EQ(busy.err.rfind("gpkv: grow: busy: " + pool_ + ": ", 0), 0u) << busy.err;
  }
  EXPECT_NE(Info().find("\"pool_size\": 4194304"), std::string::npos) << Info();
}

TEST_F(ToolGrow, AFullPoolTakesMorePairsAfterItGrew) {
  ToolResult table = Run({"tables", "create", pool_, "t", "--expected-keys", "1K"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  ToolResult full = Run({"load", pool_, "t", "--sequential", "--count", "200K"});
  ASSERT_EQ(full.exit_code, 3) << full.out << full.err;
  EXPECT_NE(full.err.find("pool full"), std::string::npos) << full.err;

  ToolResult grown = Run({"grow", pool_, "--size", "64M"});
  ASSERT_EQ(grown.exit_code, 0) << grown.err;
  ToolResult loaded = Run({"load", pool_, "t", "--sequential", "--count", "200K"});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  EXPECT_NE(loaded.out.find("loaded 204800 pairs into 't'"), std::string::npos) << loaded.out;
  ToolResult last = Run({"get", pool_, "t", "204799"});
  EXPECT_EQ(last.exit_code, 0) << last.err;
  EXPECT_NE(Info().find("\"pool_size\": 67108864"), std::string::npos) << Info();
  ToolResult verified = Run({"verify", pool_});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

}  // namespace
}  // namespace gpkv::testing
