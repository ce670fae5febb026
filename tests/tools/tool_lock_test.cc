// One writer per pool, through the gpkv tool: while one `gpkv load` writes a
// pool, a second `gpkv load` of another table of that pool (and any other
// command that opens it) exits 3 with a message naming the pool; the first
// finishes, and the pool verifies clean with every pair it loaded.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolLock : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("64M"));
    for (const char* table : {"a", "b"}) {
      ToolResult result = Run({"tables", "create", pool_, table, "--expected-keys", "32K"});
      ASSERT_EQ(result.exit_code, 0) << result.err;
    }
  }
  // The message a command refused for the lock prints on stderr.
  void ExpectBusy(const ToolResult& result, const std::string& command) {
    EXPECT_EQ(result.exit_code, 3) << result.out << result.err;
    EXPECT_EQ(result.err.rfind("gpkv: " + command + ": busy: " + pool_ + ": ", 0), 0u)
        << result.err;
    EXPECT_NE(result.err.find("another process (or another open in this process) has the pool "
                              "open for writing"),
              std::string::npos)
        << result.err;
  }
};

// "KEY VALUE" lines of `count` distinct keys, as `gpkv dump` prints them.
std::vector<std::string> Pairs(uint64_t count) {
  std::vector<std::string> lines;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t key = i * 0x9e3779b97f4a7c15ULL + 1;  // odd multiplier: distinct keys
    lines.push_back(std::to_string(key) + " " + std::to_string(key ^ 0x5555));
  }
  return lines;
}

std::string Joined(const std::vector<std::string>& lines, size_t begin, size_t end) {
  std::string text;
  for (size_t i = begin; i < end; ++i) text += lines[i] + "\n";
  return text;
}

TEST_F(ToolLock, ASecondLoadWhileOneWritesExitsThreeAndTheFirstFinishesIntact) {
  signal(SIGPIPE, SIG_IGN);  // a first load that died shows as a failed write
  const std::vector<std::string> pairs = Pairs(20000);
  RunningTool first =
      StartTool(scratch_, {"load", pool_, "a", "--file", "-", "--batch", "1000"}, "first");
  ASSERT_GT(first.pid, 0);
  // More than a pipe holds: once it is written, the first load has opened
  // the pool (it reads its input only after that) and holds it.
  ASSERT_TRUE(FeedTool(first, Joined(pairs, 0, pairs.size() / 2)));

  ExpectBusy(Run({"load", pool_, "b", "--count", "1000"}), "load");
  ExpectBusy(Run({"dump", pool_, "a", "--read-only"}), "dump");
  ExpectBusy(Run({"verify", pool_}), "verify");
  ExpectBusy(Run({"repair", pool_, "--dry-run"}), "repair");

  ASSERT_TRUE(FeedTool(first, Joined(pairs, pairs.size() / 2, pairs.size())));
  ToolResult loaded = FinishTool(first);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  EXPECT_NE(loaded.out.find("loaded 20000 pairs into 'a'"), std::string::npos) << loaded.out;

  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find(": ok ("), std::string::npos) << verify.out;
  ToolResult dump = Run({"dump", pool_, "a"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  std::vector<std::string> dumped = DumpedPairs(dump.out);
  std::vector<std::string> expected = pairs;
  std::sort(dumped.begin(), dumped.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dumped, expected);
  ToolResult other = Run({"dump", pool_, "b"});  // the refused load wrote nothing
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_TRUE(DumpedPairs(other.out).empty()) << other.out;
}

}  // namespace
}  // namespace gpkv::testing
