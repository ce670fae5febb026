// gpkv --version, and include/gpkv/version.h: the tool prints the release the
// header names and the pool format version this build opens.
#include <gtest/gtest.h>

#include <string>

#include "format/pool_layout.h"
#include "gpkv/version.h"
#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

TEST(Version, TheMacrosAndTheStringAgree) {
  const std::string joined = std::to_string(GPKV_VERSION_MAJOR) + "." +
                             std::to_string(GPKV_VERSION_MINOR) + "." +
                             std::to_string(GPKV_VERSION_PATCH);
  EXPECT_EQ(joined, GPKV_VERSION_STRING);
  EXPECT_GE(GPKV_VERSION_NUMBER, GPKV_MAKE_VERSION(0, 1, 0));
}

using ToolVersion = ToolTest;

TEST_F(ToolVersion, GpkvVersionPrintsTheReleaseAndThePoolFormat) {
  ToolResult result = Run({"--version"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  std::vector<std::string> lines = Lines(result.out);
  ASSERT_GE(lines.size(), 3u) << result.out;
  EXPECT_EQ(lines[0], "gpkv " GPKV_VERSION_STRING);
  EXPECT_EQ(
      lines[1].rfind("pool format version " + std::to_string(format::kFormatVersion) + " (", 0), 0u)
      << lines[1];
  EXPECT_NE(lines[2].find("gphash (persistent hash)"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("lsm (persistent ordered)"), std::string::npos) << lines[2];
}

TEST_F(ToolVersion, HelpNamesBusyAmongTheExitCodes) {
  ToolResult result = Run({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("3 other error (including: the pool is\nbusy"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("--version"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace gpkv::testing
