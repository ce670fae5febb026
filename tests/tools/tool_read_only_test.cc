// Inspection that does not write: info, tables, get, dump, range and count
// open the pool read-only by default and leave it byte-for-byte as it was;
// on a pool a writer left by SIGKILL they answer as the recovered pool would,
// never that it is corrupt; --write recovers it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

constexpr int kKeys = 3000;

class ToolReadOnly : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("64M"));
    ASSERT_EQ(Run({"tables", "create", pool_, "h", "--expected-keys", "16K"}).exit_code, 0);
    ASSERT_EQ(Run({"tables", "create", pool_, "o", "--kind", "ordered", "--batch-entries", "256"})
                  .exit_code,
              0);
    for (const char* table : {"h", "o"}) {
      ToolResult load = Run({"load", pool_, table, "--count", std::to_string(kKeys), "--sequential",
                             "--start", "1", "--backend", "cpu"});
      ASSERT_EQ(load.exit_code, 0) << load.err;
    }
  }
  // The commands that inspect, each on the CPU backend.
  std::vector<std::vector<std::string>> Inspections() const {
    return {{"info", pool_},
            {"info", pool_, "--json"},
            {"tables", pool_},
            {"get", pool_, "h", "1", "2"},
            {"get", pool_, "o", "1", "2"},
            {"dump", pool_, "h"},
            {"dump", pool_, "o"},
            {"range", pool_, "o", "1", "100"},
            {"count", pool_, "o", "1", "100"}};
  }

  // A child process opens the pool, starts a batch of new keys on table
  // `table` and is killed by SIGKILL at the batch's persist point
  // `kill_at`.
  void KillAWriter(const std::string& table, uint64_t kill_at) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      Options options;
      options.backend = Backend::kCpu;
      options.cpu_threads = 1;
      auto db = DB::Open(pool_, options);
      if (!db.ok()) _exit(1);
      auto opened = (*db)->OpenTable(table);
      if (!opened.ok()) _exit(2);
      std::vector<uint64_t> keys(100), values(100, 7);
      for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = kKeys + 1 + i;
      kill_at_ = kill_at;
      pm::TEST_SetPersistHook(
          [](void*, const void*, size_t, uint64_t index) {
            if (index == kill_at_) raise(SIGKILL);
          },
          nullptr);
      (*opened)->Put(keys, values).IgnoreError();
      _exit(3);  // the batch had fewer persist points
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  }

  static inline uint64_t kill_at_ = 0;
};

TEST_F(ToolReadOnly, InspectionLeavesThePoolByteForByteUnchanged) {
  const std::string before = ReadWholeFile(pool_);
  for (const auto& args : Inspections()) {
    ToolResult result = Run(args);
    EXPECT_EQ(result.exit_code, 0) << args[0] << ": " << result.err;
  }
  EXPECT_TRUE(ReadWholeFile(pool_) == before);
}

// A hash table a writer left with a reserved slot (killed between reserving
// and publishing it: an even persist point of the batch, on one thread): a
// read-only open answers as the recovered table does without writing, so
// every inspection answers, the dump equals that of a copy recovered by
// --write, and the pool is left byte-for-byte as it was.
TEST_F(ToolReadOnly, APoolLeftBySigkillAnswersAsRecoveredAndIsNotWritten) {
  KillAWriter("h", 4);
  ASSERT_FALSE(HasFatalFailure());
  const std::string before = ReadWholeFile(pool_);
  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("reserved (INSERT)"), std::string::npos) << verify.out;

  ToolResult info = Run({"info", pool_});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("table 'h'"), std::string::npos) << info.out;
  ToolResult dump_hash = Run({"dump", pool_, "h"});
  EXPECT_EQ(dump_hash.exit_code, 0) << dump_hash.err;
  ToolResult dump_ordered = Run({"dump", pool_, "o"});
  EXPECT_EQ(dump_ordered.exit_code, 0) << dump_ordered.err;
  EXPECT_EQ(DumpedPairs(dump_ordered.out).size(), static_cast<size_t>(kKeys));
  for (const auto& args : Inspections()) {
    ToolResult result = Run(args);
    EXPECT_EQ(result.exit_code, 0) << args[0] << ": " << result.err;
  }
  EXPECT_TRUE(ReadWholeFile(pool_) == before);

  const std::string copy = scratch_.File("recovered.gpkv");
  std::filesystem::copy_file(pool_, copy);
  ToolResult recovered = Run({"info", copy, "--write"});
  EXPECT_EQ(recovered.exit_code, 0) << recovered.err;
  EXPECT_FALSE(ReadWholeFile(copy) == before);
  ToolResult recovered_dump = Run({"dump", copy, "h"});
  EXPECT_EQ(recovered_dump.exit_code, 0) << recovered_dump.err;
  std::vector<std::string> read_only_pairs = DumpedPairs(dump_hash.out);
  std::vector<std::string> recovered_pairs = DumpedPairs(recovered_dump.out);
  EXPECT_GE(read_only_pairs.size(), static_cast<size_t>(kKeys));
  std::sort(read_only_pairs.begin(), read_only_pairs.end());
  std::sort(recovered_pairs.begin(), recovered_pairs.end());
  EXPECT_TRUE(read_only_pairs == recovered_pairs);
  for (const char* key : {"1", "2", "3001", "3002"}) {
    ToolResult read_only_get = Run({"get", pool_, "h", key});
    ToolResult recovered_get = Run({"get", copy, "h", key});
    EXPECT_EQ(read_only_get.exit_code, recovered_get.exit_code) << key;
    EXPECT_EQ(read_only_get.out, recovered_get.out) << key;
  }
  EXPECT_TRUE(ReadWholeFile(pool_) == before);
}

// The same on the ordered table: its log is replayed in memory, so every
// inspection answers.
TEST_F(ToolReadOnly, AnOrderedTableLeftBySigkillAnswersReadOnly) {
  KillAWriter("o", 1);
  ASSERT_FALSE(HasFatalFailure());
  const std::string before = ReadWholeFile(pool_);
  ToolResult dump = Run({"dump", pool_, "o"});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_GE(DumpedPairs(dump.out).size(), static_cast<size_t>(kKeys));
  ToolResult count = Run({"count", pool_, "o", "1", std::to_string(kKeys)});
  EXPECT_EQ(count.exit_code, 0) << count.err;
  EXPECT_TRUE(ReadWholeFile(pool_) == before);
}

TEST_F(ToolReadOnly, WriteAndReadOnlyExcludeEachOther) {
  ToolResult both = Run({"info", pool_, "--write", "--read-only"});
  EXPECT_EQ(both.exit_code, 1) << both.err;
}

}  // namespace
}  // namespace gpkv::testing
