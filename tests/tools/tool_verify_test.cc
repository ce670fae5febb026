// gpkv verify and gpkv repair: a clean pool verifies with exit 0, a corrupt
// one with exit 2 and a finding naming what is wrong, one a newer gpkv wrote
// with exit 5 ("written by a newer gpkv"). A damaged table is listed as such
// by info while the others dump, and repair drops only it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "corruption/pool_map.h"
#include "format/checksum.h"
#include "format/pool_layout.h"
#include "tools/tool_runner.h"

namespace gpkv::testing {
namespace {

class ToolVerify : public ToolTest {
 protected:
  void SetUp() override {
    ToolTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(CreatePool("64M"));
    ASSERT_EQ(Run({"tables", "create", pool_, "t", "--expected-keys", "8K"}).exit_code, 0);
    ASSERT_EQ(Run({"load", pool_, "t", "--count", "5000"}).exit_code, 0);
  }
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

  // Writes `version` into the pool header's format version; with
  // `checksum`, the header's checksum too (a header a gpkv of that version
  // wrote), else it no longer matches (a damaged version field).
  void SetFormatVersion(uint32_t version, bool checksum) {
    int fd = open(pool_.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    format::PoolHeader header{};
    ASSERT_EQ(pread(fd, &header, sizeof(header), 0), static_cast<ssize_t>(sizeof(header)));
    header.format_version = version;
    if (checksum)
      header.checksum = format::Checksum64(&header, offsetof(format::PoolHeader, checksum));
    ASSERT_EQ(pwrite(fd, &header, sizeof(header), 0), static_cast<ssize_t>(sizeof(header)));
    close(fd);
  }

  // Lines of `gpkv dump` of table `name`; -1 unless it exits 0.
  int DumpLines(const std::string& name) {
    ToolResult dump = Run({"dump", pool_, name});
    if (dump.exit_code != 0) return -1;
    return static_cast<int>(DumpedPairs(dump.out).size());
  }
};

// The allocated entries of the extent table of the pool file at `path`.
std::vector<format::ExtentEntry> AllocatedExtents(const std::string& path) {
  const std::string bytes = ReadWholeFile(path);
  format::PoolHeader header{};
  std::memcpy(&header, bytes.data(), sizeof(header));
  std::vector<format::ExtentEntry> extents;
  for (uint64_t i = 0; i < header.extent_capacity; ++i) {
    format::ExtentEntry entry{};
    std::memcpy(&entry, bytes.data() + header.extent_table_offset + i * sizeof(entry),
                sizeof(entry));
    if (entry.state == format::kExtentAllocated) extents.push_back(entry);
  }
  return extents;
}

// info --json gives each table's root offset and its extents: those the
// pool's extent table records for the table's id, the root among them.
TEST_F(ToolVerify, InfoJsonGivesEachTablesRootAndExtentsAsTheExtentTableRecordsThem) {
  ASSERT_EQ(Run({"tables", "create", pool_, "big", "--value-size", "32"}).exit_code, 0);
  ASSERT_EQ(Run({"tables", "create", pool_, "o", "--kind", "ordered", "--batch-entries", "256"})
                .exit_code,
            0);
  ASSERT_EQ(Run({"tables", "create", pool_, "cache", "--durability", "volatile"}).exit_code, 0);
  for (const char* name : {"big", "o"}) {
    ASSERT_EQ(Run({"load", pool_, name, "--count", "3000", "--backend", "cpu"}).exit_code, 0);
  }
  ToolResult json_text = Run({"info", pool_, "--json"});
  ASSERT_EQ(json_text.exit_code, 0) << json_text.err;
  nlohmann::json info = nlohmann::json::parse(json_text.out);
  ToolResult text = Run({"info", pool_});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::vector<format::ExtentEntry> allocated = AllocatedExtents(pool_);
  const char* kind_names[] = {"", "catalog", "table-root", "bucket-level", "value-chunk", "other"};
  ASSERT_EQ(info["tables"].size(), 4u);
  for (const auto& table : info["tables"]) {
    const std::string name = table["name"].get<std::string>();
    const uint32_t owner = static_cast<uint32_t>(table["id"].get<uint64_t>());
    std::set<std::tuple<uint64_t, uint64_t, std::string>> recorded;
    uint64_t root = 0;
    for (const format::ExtentEntry& extent : allocated) {
      if (extent.owner_table_id != owner || extent.kind == format::kExtentKindCatalog) continue;
      recorded.insert(
          std::make_tuple(extent.offset, extent.length, std::string(kind_names[extent.kind])));
      if (extent.kind == format::kExtentKindTableRoot) root = extent.offset;
    }
    std::set<std::tuple<uint64_t, uint64_t, std::string>> listed;
    for (const auto& extent : table["extents"]) {
      listed.insert(std::make_tuple(extent["offset"].get<uint64_t>(),
                                    extent["length"].get<uint64_t>(),
                                    extent["kind"].get<std::string>()));
    }
    EXPECT_EQ(table["root_offset"].get<uint64_t>(), root) << name;
    EXPECT_TRUE(listed == recorded) << name << ": " << table["extents"].dump();
    if (name == "cache") {
      EXPECT_EQ(root, 0u);
      EXPECT_TRUE(listed.empty());
      continue;
    }
    EXPECT_EQ(table["extents"][0]["offset"].get<uint64_t>(), root) << name;
    std::ostringstream root_line;
    root_line << "root         offset 0x" << std::hex << root;
    EXPECT_NE(text.out.find(root_line.str()), std::string::npos) << text.out;
  }
  for (const auto& table : info["tables"]) {
    const std::string name = table["name"].get<std::string>();
    std::set<std::string> kinds;
    for (const auto& extent : table["extents"]) kinds.insert(extent["kind"].get<std::string>());
    if (name == "big") {
      EXPECT_TRUE((kinds == std::set<std::string>{"table-root", "bucket-level", "value-chunk"}));
    }
    if (name == "o") EXPECT_TRUE((kinds == std::set<std::string>{"table-root", "other"}));
  }
}

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
  // A table's name and id as gpkv tables --json gives them.
  nlohmann::json tables = nlohmann::json::parse(Run({"tables", pool_, "--json"}).out);
  EXPECT_EQ(report["tables"][0]["name"], tables[0]["name"]);
  EXPECT_EQ(report["tables"][0]["id"], tables[0]["id"]);
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

TEST_F(ToolVerify, APoolOfANewerFormatIsUnsupportedNotCorrupt) {
  const uint32_t newer = format::kFormatVersion + 1;
  ASSERT_NO_FATAL_FAILURE(SetFormatVersion(newer, /*checksum=*/true));
  const std::string before = ReadWholeFile(pool_);
  const std::string message = "written by a newer gpkv (format " + std::to_string(newer) +
                              "; this build reads up to " + std::to_string(format::kFormatVersion) +
                              ")";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"verify", pool_},
                                             {"verify", pool_, "--json"},
                                             {"info", pool_},
                                             {"tables", pool_},
                                             {"dump", pool_, "t"},
                                             {"put", pool_, "t", "1", "2"},
                                             {"repair", pool_}}) {
    ToolResult result = Run(args);
    EXPECT_EQ(result.exit_code, 5) << args[0] << ": " << result.out << result.err;
    EXPECT_EQ(result.out, "") << args[0];
    EXPECT_EQ(result.err, "gpkv: " + args[0] + ": " + pool_ + ": " + message + "\n");
  }
  EXPECT_TRUE(ReadWholeFile(pool_) == before);  // left for the gpkv that wrote it
}

TEST_F(ToolVerify, ADamagedFormatVersionIsCorruption) {
  // The header's checksum does not hold: the version is no newer gpkv's.
  ASSERT_NO_FATAL_FAILURE(SetFormatVersion(format::kFormatVersion + 1, /*checksum=*/false));
  ToolResult verify = Run({"verify", pool_});
  EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("CORRUPT"), std::string::npos) << verify.out;
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

TEST_F(ToolVerify, RepairDryRunOfACleanPoolExits0AndWritesNothing) {
  const std::string before = ReadWholeFile(pool_);
  ToolResult dry = Run({"repair", pool_, "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find(pool_ + ": nothing to repair\n"), std::string::npos) << dry.out;
  ToolResult json = Run({"repair", pool_, "--dry-run", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_TRUE(report["dry_run"].get<bool>());
  EXPECT_FALSE(report["changed"].get<bool>());
  EXPECT_TRUE(ReadWholeFile(pool_) == before);
}

TEST_F(ToolVerify, RepairDryRunSaysWhatRepairWouldChangeAndWritesNothing) {
  corruption::PoolMap map = corruption::ReadPoolMap(pool_);
  ASSERT_EQ(map.tables.size(), 1u);
  ASSERT_FALSE(map.tables[0].valid_slots.empty());
  FlipByte(map.tables[0].valid_slots[0].key_offset);
  const std::string before = ReadWholeFile(pool_);
  // The dry run's copy goes to TMPDIR, which the child inherits.
  const std::string copies = scratch_.File("tmp");
  ASSERT_TRUE(std::filesystem::create_directory(copies));
  ASSERT_EQ(setenv("TMPDIR", copies.c_str(), 1), 0);
  ToolResult dry = Run({"repair", pool_, "--dry-run", "--json"});
  ToolResult text = Run({"repair", pool_, "--dry-run"});
  unsetenv("TMPDIR");
  EXPECT_EQ(dry.exit_code, 2) << dry.out << dry.err;
  nlohmann::json predicted = nlohmann::json::parse(dry.out);
  EXPECT_TRUE(predicted["dry_run"].get<bool>());
  EXPECT_TRUE(predicted["changed"].get<bool>());
  EXPECT_EQ(predicted["path"], pool_);
  EXPECT_GE(predicted["slots_cleared"].get<uint64_t>(), 1u) << dry.out;
  EXPECT_EQ(dry.out.find("gpkv-dry-run"), std::string::npos) << dry.out;  // names the pool
  EXPECT_EQ(text.exit_code, 2) << text.out << text.err;
  EXPECT_NE(text.out.find(pool_ + ": repair would change it (dry run: nothing was written)"),
            std::string::npos)
      << text.out;
  EXPECT_TRUE(ReadWholeFile(pool_) == before);
  EXPECT_TRUE(std::filesystem::is_empty(copies));  // the copies are gone
  EXPECT_EQ(Run({"verify", pool_}).exit_code, 2);

  // Repair then does what the dry run said.
  ToolResult repair = Run({"repair", pool_, "--json"});
  ASSERT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  nlohmann::json done = nlohmann::json::parse(repair.out);
  EXPECT_FALSE(done["dry_run"].get<bool>());
  EXPECT_TRUE(done["changed"].get<bool>());
  for (const char* count : {"slots_cleared", "duplicates_removed", "cells_reclaimed",
                            "extents_freed", "tables_dropped"}) {
    EXPECT_EQ(done[count], predicted[count]) << count;
  }
  EXPECT_EQ(done["findings"], predicted["findings"]);
  EXPECT_EQ(Run({"repair", pool_, "--dry-run"}).exit_code, 0);
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

TEST_F(ToolVerify, VerifyOfAMissingFileExits4) {
  ToolResult verify = Run({"verify", scratch_.File("absent.gpkv")});
  EXPECT_EQ(verify.exit_code, 4);
  EXPECT_EQ(verify.err.rfind("gpkv: verify: ", 0), 0u) << verify.err;
}

}  // namespace
}  // namespace gpkv::testing
