// `gpkv info` says where each table runs: backend, device (none on the CPU)
// and mode; `--cuda-device` chooses the device and refuses a bad ordinal.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolInfoDevice : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("32M"));
    ASSERT_EQ(Run({"tables", "create", pool_, "kept", "--expected-keys", "4K"}).exit_code, 0);
  }
};

TEST_F(ToolInfoDevice, ACpuTableRunsOnNoDevice) {
  ToolResult info = Run({"info", pool_, "--backend", "cpu"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("  backend      cpu\n  device       none\n"), std::string::npos)
      << info.out;
  EXPECT_EQ(info.out.find("  mode "), std::string::npos) << info.out;

  ToolResult json_text = Run({"info", pool_, "--json", "--backend", "cpu"});
  ASSERT_EQ(json_text.exit_code, 0) << json_text.err;
  nlohmann::json json = nlohmann::json::parse(json_text.out);
  ASSERT_EQ(json["tables"].size(), 1u);
  const nlohmann::json& stats = json["tables"][0]["stats"];
  EXPECT_EQ(stats["backend"], "cpu");
  ASSERT_TRUE(stats.contains("device"));
  EXPECT_TRUE(stats["device"].is_null());
  EXPECT_EQ(stats["mode"], "");
}

TEST_F(ToolInfoDevice, ANegativeDeviceIsAUsageError) {
  ToolResult info = Run({"info", pool_, "--cuda-device", "-1"});
  EXPECT_EQ(info.exit_code, 1);
  EXPECT_EQ(info.err.rfind("gpkv:", 0), 0u) << info.err;
}

}  // namespace
}  // namespace gpkv::testing
