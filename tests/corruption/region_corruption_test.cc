// Damage in every region of a pool: header, both superblocks, extent table,
// catalog, table roots, LevelSets, buckets (slot words, keys, value words),
// value cells, empty slots and free heap. For each region, many copies of a
// healthy pool each get random bits or bytes flipped (seeded), and then:
//  - recovery::VerifyPool never fails to produce a report, and reports
//    corruption where the damage is detectable (checksummed or cross-checked
//    bytes) and none where the bytes do not matter;
//  - `gpkv verify` exits 2 exactly when the report has corruption, else 0;
//  - DB::Open either refuses with Corruption / Unsupported naming an offset,
//    or succeeds and every key the damage could not touch reads back its
//    value (for checksummed regions: every key);
//  - recovery::RepairPool salvages: afterwards verify finds no corruption and
//    every key the damage could not touch is there with its value; what it
//    dropped, it reports.
// Never a crash. Each region prints a "[crash totals]" line.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "damage.h"
#include "gpkv/db.h"
#include "pool_map.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::corruption {
namespace {

constexpr uint64_t kPoolSize = 4 << 20;
constexpr uint32_t kCellValueSize = 100;

double Scale() {
  const char* text = std::getenv("GPKV_CRASH_SCALE");
  double scale = text ? std::atof(text) : 1.0;
  return scale > 0 ? scale : 1.0;
}

Options OpenOptions() {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = 1;
  return options;
}

std::string ValueOf(uint64_t key, uint32_t value_size, uint64_t version) {
  std::string value(value_size, '\0');
  uint64_t word = key * 0x9e3779b97f4a7c15ULL + version;
  for (uint32_t i = 0; i < value_size; ++i) {
    if (i % 8 == 0) word = word * 6364136223846793005ULL + 1442695040888963407ULL;
    value[i] = static_cast<char>(word >> (8 * (i % 8)));
  }
  return value;
}

// table id -> key -> value
using Contents = std::map<uint64_t, std::map<uint64_t, std::string>>;

struct Totals {
  uint64_t trials = 0, detected = 0, open_refused = 0, open_correct = 0, repaired = 0,
           repair_refused = 0, keys_salvaged = 0, keys_dropped = 0, values_damaged = 0;
  std::map<std::string, uint64_t> problems;
  std::vector<std::string> examples;

  void Problem(const std::string& kind, const std::string& what) {
    if (++problems[kind] <= 3) examples.push_back(kind + ": " + what);
  }
  uint64_t problem_count() const {
    uint64_t n = 0;
    for (const auto& [kind, count] : problems) n += count;
    return n;
  }
};

int ToolVerifyExit(const std::string& path) {
  std::string command = std::string(GPKV_TOOL_PATH) + " verify '" + path + "' >/dev/null 2>&1";
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string Describe(const Damage& d) {
  char text[96];
  std::snprintf(text, sizeof(text), "byte 0x%llx ^= 0x%02x",
                static_cast<unsigned long long>(d.offset), d.mask.empty() ? 0 : d.mask[0]);
  return text;
}

class RegionCorruption : public ::testing::TestWithParam<Region> {
 protected:
  static void SetUpTestSuite() {
    clean_ = new testutil::TempPool("corrupt-clean");
    contents_ = new Contents();
    Options options = OpenOptions();
    options.create_if_missing = true;
    options.pool_size = kPoolSize;
    std::mt19937_64 random(4242);
    {
      auto db = DB::Open(clean_->path(), options);
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      for (uint32_t value_size : {8u, kCellValueSize}) {
        TableOptions table_options;
        table_options.value_size = value_size;
        table_options.expected_keys = 256;  // resized at least once
        std::string name = value_size == 8 ? "inline" : "cells";
        auto table = (*db)->CreateTable(name, table_options);
        ASSERT_TRUE(table.ok()) << table.status().ToString();
        auto listed = (*db)->ListTables();
        uint64_t id = listed->back().id;
        auto& pairs = (*contents_)[id];
        std::vector<uint64_t> keys;
        for (int i = 0; i < 1500; ++i) keys.push_back(random() | 1);
        std::string values;
        for (uint64_t key : keys) values += ValueOf(key, value_size, 0);
        ASSERT_TRUE((*table)->Put(ConstBytes(keys), ConstBytes(values.data(), values.size())).ok());
        for (uint64_t key : keys) pairs[key] = ValueOf(key, value_size, 0);
        // Updates (new cells, old ones reused) and erases.
        std::vector<uint64_t> updates(keys.begin(), keys.begin() + 300);
        values.clear();
        for (uint64_t key : updates) values += ValueOf(key, value_size, 1);
        ASSERT_TRUE(
            (*table)->Put(ConstBytes(updates), ConstBytes(values.data(), values.size())).ok());
        for (uint64_t key : updates) pairs[key] = ValueOf(key, value_size, 1);
        std::vector<uint64_t> erases(keys.end() - 200, keys.end());
        ASSERT_TRUE((*table)->Erase(ConstBytes(erases)).ok());
        for (uint64_t key : erases) pairs.erase(key);
      }
    }
    auto report = recovery::VerifyPool(clean_->path(), nullptr);
    ASSERT_TRUE(report.ok());
    ASSERT_TRUE(report->findings.empty()) << report->findings[0].message;
    map_ = new PoolMap(ReadPoolMap(clean_->path()));
    ASSERT_EQ(map_->tables.size(), 2u);
  }

  static void TearDownTestSuite() {
    delete map_;
    delete contents_;
    delete clean_;
    map_ = nullptr;
    contents_ = nullptr;
    clean_ = nullptr;
  }

  void SetUp() override {
    if (map_ == nullptr) GTEST_SKIP() << "no clean pool";
  }

  bool AtRisk(const Damage& d, uint64_t table_id, uint64_t key, bool whole_tables) const {
    if (whole_tables && d.tables_at_risk.count(table_id) != 0) return true;
    return d.keys_at_risk.count({table_id, key}) != 0;
  }

  struct ContentCheck {
    uint64_t bad = 0;       // keys not at risk that are missing or wrong
    uint64_t salvaged = 0;  // keys with their value
    uint64_t dropped = 0;   // keys at risk that are gone
    uint64_t damaged = 0;   // keys at risk that read a damaged value (undetectable)
    std::string first;      // the first bad key
    // Tables whose OpenTable refused with Corruption (whole_tables false:
    // damage stays with its table, the others must serve every key).
    std::vector<Status> refused_tables;
  };

  // Reads every key of every table (found by id: repair may rename) from the
  // pool at path.
  ContentCheck CheckContents(const std::string& path, const Damage& d, bool whole_tables) {
    ContentCheck check;
    std::string* first = &check.first;
    auto db = DB::Open(path, OpenOptions());
    if (!db.ok()) {
      *first = "open: " + db.status().ToString();
      check.bad = 1;
      return check;
    }
    auto listed = (*db)->ListTables();
    if (!listed.ok()) {
      *first = "ListTables: " + listed.status().ToString();
      check.bad = 1;
      return check;
    }
    uint64_t& bad = check.bad;
    for (const auto& [table_id, pairs] : *contents_) {
      std::string name;
      for (const TableInfo& info : *listed) {
        if (info.id == table_id) name = info.name;
      }
      auto table =
          name.empty()
              ? Result<Table*>(Status::NotFound("no table with id " + std::to_string(table_id)))
              : (*db)->OpenTable(name);
      if (!table.ok()) {
        if (whole_tables && d.tables_at_risk.count(table_id) != 0) {
          check.dropped += pairs.size();
          continue;
        }
        if (!whole_tables && table.status().IsCorruption()) {
          check.refused_tables.push_back(table.status());
          continue;
        }
        if (first->empty())
          *first = "table id " + std::to_string(table_id) + ": " + table.status().ToString();
        bad += pairs.size();
        continue;
      }
      const uint32_t value_size = (*table)->options().value_size;
      std::vector<uint64_t> keys;
      for (const auto& pair : pairs) keys.push_back(pair.first);
      std::vector<uint8_t> values(keys.size() * value_size), found(keys.size());
      Status got = (*table)->Get(ConstBytes(keys), MutableBytes(values), MutableBytes(found));
      if (!got.ok()) {
        if (first->empty()) *first = "Get: " + got.ToString();
        bad += keys.size();
        continue;
      }
      for (size_t i = 0; i < keys.size(); ++i) {
        bool intact = found[i] && std::memcmp(&values[i * value_size], pairs.at(keys[i]).data(),
                                              value_size) == 0;
        if (intact) {
          ++check.salvaged;
        } else if (AtRisk(d, table_id, keys[i], whole_tables)) {
          ++(found[i] ? check.damaged : check.dropped);
        } else {
          ++bad;
          if (first->empty()) {
            char text[96];
            std::snprintf(text, sizeof(text), "table '%s' key %016llx %s", name.c_str(),
                          static_cast<unsigned long long>(keys[i]),
                          found[i] ? "has a wrong value" : "is missing");
            *first = text;
          }
        }
      }
    }
    return check;
  }

  void RunTrial(const Damage& d, bool run_tool, Totals& totals) {
    const std::string where = Describe(d);
    std::filesystem::copy_file(clean_->path(), damaged_.path(),
                               std::filesystem::copy_options::overwrite_existing);
    for (size_t i = 0; i < d.mask.size(); ++i)
      testutil::FlipByte(damaged_.path(), d.offset + i, d.mask[i]);
    ++totals.trials;

    // 1. verify
    auto report = recovery::VerifyPool(damaged_.path(), nullptr);
    if (!report.ok()) {
      totals.Problem("verify returned an error", where + ": " + report.status().ToString());
      return;
    }
    bool corrupt = report->HasCorruption();
    if (corrupt) ++totals.detected;
    if (d.expect == Expect::kDetect && !corrupt) {
      totals.Problem("verify missed it", where);
    }
    if (d.expect == Expect::kHarmless && corrupt) {
      totals.Problem("verify reports harmless damage", where + ": " + report->findings[0].message);
    }
    if (d.expect_finding && report->findings.empty()) {
      totals.Problem("verify says nothing", where);
    }
    if (run_tool) {
      int code = ToolVerifyExit(damaged_.path());
      if (code != (corrupt ? 2 : 0)) {
        totals.Problem("gpkv verify exit code", where + ": exit " + std::to_string(code) +
                                                    ", report corrupt=" + std::to_string(corrupt));
      }
    }

    // 2. open a copy: refuse with a located error, or serve every key the
    // damage could not touch.
    std::filesystem::copy_file(damaged_.path(), opened_.path(),
                               std::filesystem::copy_options::overwrite_existing);
    auto db = DB::Open(opened_.path(), OpenOptions());
    if (!db.ok()) {
      ++totals.open_refused;
      const Status& s = db.status();
      if (!s.IsCorruption() && !s.IsUnsupported()) {
        totals.Problem("open failed without Corruption", where + ": " + s.ToString());
      } else if (s.message().find("offset 0x") == std::string::npos) {
        totals.Problem("open error names no offset", where + ": " + s.ToString());
      }
      if (d.expect == Expect::kHarmless) {
        totals.Problem("open refuses harmless damage", where + ": " + s.ToString());
      }
    } else {
      db->reset();
      ContentCheck check = CheckContents(opened_.path(), d, /*whole_tables=*/false);
      // A damaged table refuses as the open did before: with a located
      // Corruption, and never for harmless damage.
      for (const Status& s : check.refused_tables) {
        if (s.message().find("offset 0x") == std::string::npos) {
          totals.Problem("open error names no offset", where + ": " + s.ToString());
        }
        if (d.expect == Expect::kHarmless) {
          totals.Problem("open refuses harmless damage", where + ": " + s.ToString());
        }
      }
      if (check.bad != 0) {
        totals.Problem("open succeeded with wrong data", where + ": " + check.first);
      } else if (!check.refused_tables.empty()) {
        ++totals.open_refused;
      } else {
        ++totals.open_correct;
      }
    }

    // 3. repair the damaged pool itself.
    auto repaired = recovery::RepairPool(damaged_.path(), nullptr);
    if (!repaired.ok()) {
      ++totals.repair_refused;
      if (!d.repair_may_refuse) {
        totals.Problem("repair refused", where + ": " + repaired.status().ToString());
      }
      return;
    }
    ++totals.repaired;
    auto after = recovery::VerifyPool(damaged_.path(), nullptr);
    if (!after.ok() || after->HasCorruption()) {
      totals.Problem(
          "verify after repair finds corruption",
          where + ": " + (after.ok() ? after->findings[0].message : after.status().ToString()));
      return;
    }
    ContentCheck check = CheckContents(damaged_.path(), d, /*whole_tables=*/true);
    totals.keys_salvaged += check.salvaged;
    totals.keys_dropped += check.dropped;
    totals.values_damaged += check.damaged;
    if (check.bad != 0) totals.Problem("repair lost intact keys", where + ": " + check.first);
    const recovery::Report& r = *repaired;
    bool reported =
        r.slots_cleared || r.duplicates_removed || r.tables_dropped || !r.findings.empty();
    if (check.dropped != 0 && !reported) {
      totals.Problem("repair dropped keys without a word", where);
    }
  }

  static testutil::TempPool* clean_;
  static Contents* contents_;
  static PoolMap* map_;
  testutil::TempPool damaged_{"corrupt-damaged"};
  testutil::TempPool opened_{"corrupt-opened"};
};

testutil::TempPool* RegionCorruption::clean_ = nullptr;
Contents* RegionCorruption::contents_ = nullptr;
PoolMap* RegionCorruption::map_ = nullptr;

TEST_P(RegionCorruption, IsReportedRefusedOrHarmlessAndRepairSalvagesTheRest) {
  const Region& region = GetParam();
  std::mt19937_64 random(std::hash<std::string>()(region.name) ^ 0xc0ffee);
  const uint64_t trials = static_cast<uint64_t>(60 * Scale()) + 1;
  Totals totals;
  for (uint64_t i = 0; i < trials; ++i) {
    Damage damage = region.pick(*map_, random);
    RunTrial(damage, /*run_tool=*/i < 3, totals);
  }
  std::printf(
      "[crash totals] corruption %s: %llu damaged pools checked, %llu reported corrupt by "
      "verify, %llu opens refused, %llu opens with every intact key correct, %llu repairs "
      "(%llu refused), %llu keys salvaged, %llu at-risk keys dropped, %llu damaged values "
      "undetectable, %llu problems\n",
      region.name, static_cast<unsigned long long>(totals.trials),
      static_cast<unsigned long long>(totals.detected),
      static_cast<unsigned long long>(totals.open_refused),
      static_cast<unsigned long long>(totals.open_correct),
      static_cast<unsigned long long>(totals.repaired),
      static_cast<unsigned long long>(totals.repair_refused),
      static_cast<unsigned long long>(totals.keys_salvaged),
      static_cast<unsigned long long>(totals.keys_dropped),
      static_cast<unsigned long long>(totals.values_damaged),
      static_cast<unsigned long long>(totals.problem_count()));
  std::fflush(stdout);
  for (const auto& [kind, count] : totals.problems) {
    ADD_FAILURE() << region.name << ": " << kind << " in " << count << " of " << totals.trials
                  << " trials";
  }
  for (const std::string& example : totals.examples) ADD_FAILURE() << "e.g. " << example;
}

INSTANTIATE_TEST_SUITE_P(Regions, RegionCorruption, ::testing::ValuesIn(kRegions),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gpkv::corruption
