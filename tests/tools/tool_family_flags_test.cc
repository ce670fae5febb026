// gpkv tables create with the families' own flags: a flag fills the options
// of its family's tables, a flag of another family is a usage error naming
// the flag and the kind, and the help lists each family's flags under it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tables/registry.h"
#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolFamilyFlags : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("64M"));
  }
  ToolResult CreateTable(const std::string& name, const std::vector<std::string>& options) {
    std::vector<std::string> args = {"tables", "create", pool_, name, "--expected-keys", "4K"};
    args.insert(args.end(), options.begin(), options.end());
    return Run(args);
  }
};

TEST_F(ToolFamilyFlags, AnOrderedFlagOnAHashTableIsAUsageError) {
  ToolResult refused = CreateTable("t", {"--kind", "hash", "--max-dead-percent", "40"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_EQ(refused.err.rfind("gpkv: tables create: ", 0), 0u) << refused.err;
  EXPECT_NE(refused.err.find("--max-dead-percent"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("not of persistent hash tables"), std::string::npos) << refused.err;
  EXPECT_EQ(Run({"tables", pool_}).out, "");  // nothing was created
}

TEST_F(ToolFamilyFlags, AHashFlagOnAnOrderedTableIsAUsageError) {
  ToolResult refused = CreateTable("t", {"--kind", "ordered", "--slots", "16"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_EQ(refused.err.rfind("gpkv: tables create: ", 0), 0u) << refused.err;
  EXPECT_NE(refused.err.find("--slots"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("not of persistent ordered tables"), std::string::npos) << refused.err;
  EXPECT_EQ(Run({"tables", pool_}).out, "");
}

TEST_F(ToolFamilyFlags, FlagsOfTheTablesFamilyFillItsOptions) {
  ToolResult hash = CreateTable("h", {"--levels", "3", "--hash-locations", "1", "--slots", "16"});
  ASSERT_EQ(hash.exit_code, 0) << hash.err;
  ToolResult ordered =
      CreateTable("o", {"--kind", "ordered", "--batch-entries", "1K", "--log-batches", "4"});
  ASSERT_EQ(ordered.exit_code, 0) << ordered.err;

  ToolResult list = Run({"tables", pool_});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find(" 3L-1H-16S "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(" b=1024,M=4 "), std::string::npos) << list.out;
  nlohmann::json tables = nlohmann::json::parse(Run({"tables", pool_, "--json"}).out);
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0]["geometry"]["levels"], 3);
  EXPECT_EQ(tables[0]["geometry"]["hash_locations"], 1);
  EXPECT_EQ(tables[0]["geometry"]["slots_per_bucket"], 16);
  EXPECT_FALSE(tables[1].contains("geometry"));
}

TEST_F(ToolFamilyFlags, LogFlagsMakeALoggedHashTable) {
  ToolResult created =
      CreateTable("l", {"--kind", "hash", "--batch-entries", "16", "--log-batches", "2"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ToolResult list = Run({"tables", pool_});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find(" logged b=16,M=2 "), std::string::npos) << list.out;
  nlohmann::json tables = nlohmann::json::parse(Run({"tables", pool_, "--json"}).out);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0]["log"]["batch_entries"], 16);
  EXPECT_EQ(tables[0]["log"]["log_batches"], 2);
  ASSERT_EQ(Run({"put", pool_, "l", "7", "70"}).exit_code, 0);
  ToolResult got = Run({"get", pool_, "l", "7"});
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_NE(got.out.find("70"), std::string::npos) << got.out;
  ToolResult dump = Run({"dump", pool_, "l"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_NE(dump.out.find(" log_batches=2 batch_entries=16\n"), std::string::npos) << dump.out;
  ToolResult info = Run({"info", pool_});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("  log          2 batches of 16 entries (each write batch a log record"),
            std::string::npos)
      << info.out;
  EXPECT_EQ(Run({"verify", pool_}).exit_code, 0);
  // A dump loads into a new logged table.
  ToolResult loaded = Run({"load", pool_, "copy", "--file", "-", "--create"}, dump.out);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  nlohmann::json after = nlohmann::json::parse(Run({"tables", pool_, "--json"}).out);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1]["log"]["log_batches"], 2);
}

TEST_F(ToolFamilyFlags, AFlagRefusedByItsOwnCheckIsStillAUsageError) {
  ToolResult refused = CreateTable("t", {"--kind", "ordered", "--log-batches", "0"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("--log-batches"), std::string::npos) << refused.err;
  refused = CreateTable("t", {"--slots", "5"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("--slots"), std::string::npos) << refused.err;
}

TEST_F(ToolFamilyFlags, VolatileOrderedTablesAreCreatedWithoutTheLsmsFlags) {
  ToolResult created = CreateTable("t", {"--kind", "ordered", "--durability", "volatile"});
  EXPECT_EQ(created.exit_code, 0) << created.err;
  ToolResult list = Run({"tables", pool_});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("volatile"), std::string::npos) << list.out;
  ToolResult refused =
      CreateTable("u", {"--kind", "ordered", "--durability", "volatile", "--batch-entries", "1K"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("--batch-entries"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("not of volatile ordered tables"), std::string::npos) << refused.err;
}

// The index of the first family (in registration order) with flag `name`.
size_t DeclaringFamily(const std::string& name) {
  for (size_t i = 0; i < tables::Families().size(); ++i) {
    for (const tables::CliFlag& flag : tables::Families()[i]->cli().Flags()) {
      if (flag.name == name) return i;
    }
  }
  return tables::Families().size();
}

TEST_F(ToolFamilyFlags, HelpListsEachFamilysFlagsUnderItsFamily) {
  ToolResult help = Run({"tables", "create", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  // Each family's heading, where it starts in the help.
  std::vector<size_t> starts;
  for (const tables::TableFamily* family : tables::Families()) {
    const std::string heading = std::string(tables::DurabilityName(family->durability())) + " " +
                                tables::KindName(family->kind()) + " tables (" + family->name() +
                                ")";
    starts.push_back(family->cli().Flags().empty() ? std::string::npos : help.out.find(heading));
    if (!family->cli().Flags().empty()) {
      EXPECT_NE(starts.back(), std::string::npos) << heading << " in\n" << help.out;
    }
  }
  for (size_t i = 0; i < tables::Families().size(); ++i) {
    if (starts[i] == std::string::npos) continue;
    size_t end = std::string::npos;  // the next heading
    for (size_t start : starts) {
      if (start != std::string::npos && start > starts[i]) end = std::min(end, start);
    }
    for (const tables::CliFlag& flag : tables::Families()[i]->cli().Flags()) {
      // A flag two families share is listed once, under the first of them.
      if (DeclaringFamily(flag.name) != i) continue;
      const size_t at = help.out.find(std::string(flag.name) + " ");
      EXPECT_GT(at, starts[i]) << flag.name << " in\n" << help.out;
      EXPECT_LT(at, end) << flag.name << " in\n" << help.out;
    }
  }
}

}  // namespace
}  // namespace gpkv::testing
