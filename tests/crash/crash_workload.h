// A large, seeded workload for the sampled crash tests, the model it is
// checked against, and the check itself.
//
// The workload is a list of steps, each one acknowledged call: a put or erase
// batch (default 256 operations) on a table with inline values (8 bytes) or
// on one with value cells (100 bytes), or a catalog change (create / drop of
// a scratch table, whose names are reused so a dropped table must not come
// back). Tables start small (expected_keys 128) and grow to thousands of keys:
// every table resizes several times. Put batches mix new keys, updates
// (cells replaced out of place and reused) and reinserts of erased keys, and a
// few keys twice in one batch (the last occurrence wins).
//
// The check after a crash: every step acknowledged before the crash is
// applied; each operation of the step in flight is either applied or absent
// (for a key written twice in the batch: any prefix of its operations); a
// table created or dropped in flight is either there with its contents or
// not; nothing else is in the tables (Scan); Stats().keys agrees; and verify
// reports nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpkv/db.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv::crashtest {

constexpr char kInlineTable[] = "inline";
constexpr char kCellTable[] = "cells";
constexpr uint32_t kCellValueSize = 100;

struct Step {
  enum class Kind : uint8_t { kPut, kErase, kCreateTable, kDropTable };
  Kind kind = Kind::kPut;
  std::string table;
  uint32_t value_size = 8;  // kCreateTable
  std::vector<uint64_t> keys;
  std::vector<uint8_t> values;  // kPut: keys.size() * value size of the table
};

struct TableModel {
  uint32_t value_size = 8;
  std::unordered_map<uint64_t, std::string> pairs;
};
using Model = std::map<std::string, TableModel>;

// Value bytes of the write of `key` by step `step`, op `op`: distinct for
// every write, so a torn or stale value never matches the expected one.
inline std::string ValueFor(uint64_t key, uint64_t step, uint64_t op, uint32_t value_size) {
  std::string value(value_size, '\0');
  testutil::SplitMix64Fill(
      key ^ (step * 0x9e3779b97f4a7c15ULL) ^ (op << 48) ^ 0x5851f42d4c957f2dULL,
      reinterpret_cast<uint8_t*>(value.data()), value_size);
  return value;
}

inline void Apply(const Step& step, Model& model) {
  switch (step.kind) {
    case Step::Kind::kCreateTable:
      model[step.table] = TableModel{step.value_size, {}};
      return;
    case Step::Kind::kDropTable:
      model.erase(step.table);
      return;
    case Step::Kind::kPut: {
      TableModel& table = model.at(step.table);
      for (size_t i = 0; i < step.keys.size(); ++i) {
        table.pairs[step.keys[i]] = std::string(
            reinterpret_cast<const char*>(&step.values[i * table.value_size]), table.value_size);
      }
      return;
    }
    case Step::Kind::kErase: {
      TableModel& table = model.at(step.table);
      for (uint64_t key : step.keys) table.pairs.erase(key);
      return;
    }
  }
}

struct WorkloadParams {
  uint64_t total_ops = 20000;
  uint32_t batch = 256;
  uint64_t seed = 1;
};

// The tables the workload expects to exist before its first step.
inline std::vector<std::pair<std::string, TableOptions>> InitialTables() {
  TableOptions inline_options;
  inline_options.value_size = 8;
  inline_options.expected_keys = 128;
  TableOptions cell_options = inline_options;
  cell_options.value_size = kCellValueSize;
  return {{kInlineTable, inline_options}, {kCellTable, cell_options}};
}

inline Model InitialModel() {
  Model model;
  for (const auto& [name, options] : InitialTables()) {
    model[name] = TableModel{options.value_size, {}};
  }
  return model;
}

class WorkloadBuilder {
 public:
  explicit WorkloadBuilder(const WorkloadParams& params)
      : params_(params), random_(params.seed), model_(InitialModel()) {}

  std::vector<Step> Build() {
    uint64_t ops = 0;
    int scratch_round = 0;
    bool scratch_live = false;
    while (ops < params_.total_ops) {
      size_t index = steps_.size();
      if (index % 16 == 7) {
        // Catalog change: create "scratch-<n % 2>" (a name reused after its
        // drop), fill it in the next step, drop it some steps later.
        std::string name = "scratch-" + std::to_string(scratch_round % 2);
        if (!scratch_live) {
          Step create;
          create.kind = Step::Kind::kCreateTable;
          create.table = name;
          create.value_size = (scratch_round % 2 == 0) ? 8 : kCellValueSize;
          Push(std::move(create));
          Push(PutBatch(name, 64));
          ops += 64;
          scratch_live = true;
        } else {
          Step drop;
          drop.kind = Step::Kind::kDropTable;
          drop.table = name;
          Push(std::move(drop));
          scratch_live = false;
          ++scratch_round;
        }
        continue;
      }
      const std::string table = (random_() & 1) ? kInlineTable : kCellTable;
      uint32_t kind = random_() % 100;
      if (kind < 22 && model_.at(table).pairs.size() > params_.batch) {
        Push(EraseBatch(table, params_.batch));
      } else {
        Push(PutBatch(table, params_.batch));
      }
      ops += params_.batch;
    }
    return std::move(steps_);
  }

 private:
  void Push(Step step) {
    Apply(step, model_);
    steps_.push_back(std::move(step));
  }

  uint64_t NewKey() {
    // Mostly random keys; now and then the extremes (every key value is legal).
    uint32_t pick = random_() % 1000;
    if (pick == 0 && used_.insert(0).second) return 0;
    if (pick == 1 && used_.insert(~uint64_t{0}).second) return ~uint64_t{0};
    for (;;) {
      uint64_t key = random_();
      if (used_.insert(key).second) return key;
    }
  }

  Step PutBatch(const std::string& table_name, uint32_t count) {
    Step step;
    step.kind = Step::Kind::kPut;
    step.table = table_name;
    const TableModel& table = model_.at(table_name);
    std::vector<uint64_t>& erased = erased_[table_name];
    std::set<uint64_t> in_batch;
    std::vector<uint64_t> live;
    if (!table.pairs.empty()) {
      for (const auto& pair : table.pairs) {
        if (random_() % 8 == 0) live.push_back(pair.first);
        if (live.size() >= count) break;
      }
    }
    for (uint32_t op = 0; op < count; ++op) {
      uint32_t pick = random_() % 100;
      uint64_t key;
      if (pick < 2 && !step.keys.empty()) {
        key = step.keys[random_() % step.keys.size()];  // twice in one batch
      } else if (pick < 32 && !live.empty()) {
        key = live[random_() % live.size()];  // update (a new cell for cell tables)
      } else if (pick < 40 && !erased.empty()) {
        size_t at = random_() % erased.size();
        key = erased[at];  // reinsert of an erased key
        erased[at] = erased.back();
        erased.pop_back();
      } else {
        key = NewKey();
      }
      if (pick >= 2 && !in_batch.insert(key).second) key = NewKey();
      in_batch.insert(key);
      step.keys.push_back(key);
      std::string value = ValueFor(key, steps_.size(), op, table.value_size);
      step.values.insert(step.values.end(), value.begin(), value.end());
    }
    return step;
  }

  Step EraseBatch(const std::string& table_name, uint32_t count) {
    Step step;
    step.kind = Step::Kind::kErase;
    step.table = table_name;
    const TableModel& table = model_.at(table_name);
    std::set<uint64_t> chosen;
    for (const auto& pair : table.pairs) {
      if (chosen.size() >= count * 9 / 10) break;
      if (random_() % 3 == 0) chosen.insert(pair.first);
    }
    while (chosen.size() < count) chosen.insert(random_());  // mostly absent keys
    for (uint64_t key : chosen) {
      step.keys.push_back(key);
      if (table.pairs.count(key) != 0) erased_[table_name].push_back(key);
    }
    std::shuffle(step.keys.begin(), step.keys.end(), random_);
    return step;
  }

  WorkloadParams params_;
  std::mt19937_64 random_;
  Model model_;
  std::vector<Step> steps_;
  std::set<uint64_t> used_;
  std::map<std::string, std::vector<uint64_t>> erased_;
};

inline std::vector<Step> BuildWorkload(const WorkloadParams& params) {
  return WorkloadBuilder(params).Build();
}

// Runs one step against an open DB.
inline Status RunStep(DB& db, const Step& step) {
  switch (step.kind) {
    case Step::Kind::kCreateTable: {
      TableOptions table_options;
      table_options.value_size = step.value_size;
      table_options.expected_keys = 64;
      return db.CreateTable(step.table, table_options).status();
    }
    case Step::Kind::kDropTable:
      return db.DropTable(step.table);
    case Step::Kind::kPut:
    case Step::Kind::kErase: {
      auto table = db.OpenTable(step.table);
      if (!table.ok()) return table.status();
      if (step.kind == Step::Kind::kPut) return (*table)->Put(step.keys, step.values);
      return (*table)->Erase(step.keys);
    }
  }
  return Status::InvalidArgument("unknown step");
}

// What a check found. Empty `first_error` means the pool is as expected.
struct CheckResult {
  uint64_t lost_writes = 0;    // acknowledged state missing or wrong
  uint64_t half_applied = 0;   // an op of the step in flight neither applied nor absent
  uint64_t phantom_pairs = 0;  // pairs no step wrote
  bool verify_failed = false;
  std::string first_error;
  bool ok() const { return first_error.empty(); }
  void Fail(const std::string& what) {
    if (first_error.empty()) first_error = what;
  }
};

inline std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 16); ++i) {
    out += kDigits[static_cast<uint8_t>(bytes[i]) >> 4];
    out += kDigits[static_cast<uint8_t>(bytes[i]) & 15];
  }
  if (bytes.size() > 16) out += "..";
  return out;
}

// Every key ever written to each table name by steps [0, end).
inline std::map<std::string, std::vector<uint64_t>> KeyUniverse(const std::vector<Step>& steps,
                                                                size_t end) {
  std::map<std::string, std::set<uint64_t>> sets;
  for (size_t i = 0; i < end && i < steps.size(); ++i) {
    if (steps[i].kind == Step::Kind::kPut || steps[i].kind == Step::Kind::kErase) {
      sets[steps[i].table].insert(steps[i].keys.begin(), steps[i].keys.end());
    }
  }
  std::map<std::string, std::vector<uint64_t>> out;
  for (auto& [name, keys] : sets) out[name].assign(keys.begin(), keys.end());
  return out;
}

// Checks one table against the states it may be in: `allowed[key]` lists the
// values (nullopt = absent) the key may hold.
inline void CheckTable(Table& table, const std::string& name, const std::vector<uint64_t>& universe,
                       const std::map<uint64_t, std::vector<std::optional<std::string>>>& in_flight,
                       const TableModel& before, CheckResult& result) {
  const uint32_t value_size = table.options().value_size;
  std::vector<uint8_t> values(universe.size() * value_size);
  std::vector<uint8_t> found(universe.size());
  Status status = table.Get(universe, values, found);
  if (!status.ok()) {
    result.Fail("table '" + name + "': Get: " + status.ToString());
    return;
  }
  uint64_t found_count = 0;
  std::unordered_map<uint64_t, std::string> got_pairs;
  for (size_t i = 0; i < universe.size(); ++i) {
    std::optional<std::string> got;
    if (found[i]) {
      got = std::string(reinterpret_cast<const char*>(&values[i * value_size]), value_size);
      ++found_count;
      got_pairs[universe[i]] = *got;
    }
    auto expected_it = before.pairs.find(universe[i]);
    std::optional<std::string> expected;
    if (expected_it != before.pairs.end()) expected = expected_it->second;
    if (got == expected) continue;
    auto flight = in_flight.find(universe[i]);
    if (flight != in_flight.end() &&
        std::find(flight->second.begin(), flight->second.end(), got) != flight->second.end()) {
      continue;
    }
    char key_text[32];
    std::snprintf(key_text, sizeof(key_text), "%016llx",
                  static_cast<unsigned long long>(universe[i]));
    std::string what = "table '" + name + "' key " + key_text + ": has " +
                       (got ? Hex(*got) : "nothing") + ", expected " +
                       (expected ? Hex(*expected) : "nothing");
    if (flight != in_flight.end()) {
      ++result.half_applied;
      result.Fail(what + " or a value of the batch in flight");
    } else {
      ++result.lost_writes;
      result.Fail(what);
    }
  }
  // Nothing beyond what the steps wrote, and each pair as Get sees it.
  uint64_t scanned = 0;
  Status scan = table.Scan([&](const uint8_t* key_bytes, const uint8_t* value_bytes) {
    uint64_t key;
    std::memcpy(&key, key_bytes, sizeof(key));
    ++scanned;
    auto it = got_pairs.find(key);
    if (it == got_pairs.end() || std::memcmp(it->second.data(), value_bytes, value_size) != 0) {
      ++result.phantom_pairs;
      result.Fail("table '" + name + "': Scan visits a pair Get does not return");
    }
    return true;
  });
  if (!scan.ok()) result.Fail("table '" + name + "': Scan: " + scan.ToString());
  if (scanned != found_count) {
    result.Fail("table '" + name + "': Scan visits " + std::to_string(scanned) +
                " pairs, Get finds " + std::to_string(found_count));
  }
  auto stats = table.Stats();
  if (!stats.ok()) {
    result.Fail("table '" + name + "': Stats: " + stats.status().ToString());
  } else if (stats->keys != found_count) {
    result.Fail("table '" + name + "': Stats().keys is " + std::to_string(stats->keys) +
                ", Get finds " + std::to_string(found_count));
  }
}

// Opens the pool at `path` (recovery), checks it against the workload with
// `acknowledged` steps acknowledged, closes it and verifies it.
inline CheckResult CheckAfterCrash(const std::string& path, const std::vector<Step>& steps,
                                   size_t acknowledged, const Options& options) {
  CheckResult result;
  Model before = InitialModel();
  for (size_t i = 0; i < acknowledged; ++i) Apply(steps[i], before);
  const Step* flight = acknowledged < steps.size() ? &steps[acknowledged] : nullptr;
  Model after = before;
  if (flight != nullptr) Apply(*flight, after);
  auto universe = KeyUniverse(steps, flight != nullptr ? acknowledged + 1 : acknowledged);
  {
    auto db = DB::Open(path, options);
    if (!db.ok()) {
      result.Fail("open after the crash: " + db.status().ToString());
      return result;
    }
    std::set<std::string> names;
    for (const auto& entry : before) names.insert(entry.first);
    for (const auto& entry : after) names.insert(entry.first);
    auto listed = (*db)->ListTables();
    if (!listed.ok()) {
      result.Fail("ListTables: " + listed.status().ToString());
      return result;
    }
    for (const TableInfo& info : *listed) {
      if (names.count(info.name) == 0) result.Fail("table '" + info.name + "' should not exist");
    }
    for (const std::string& name : names) {
      bool in_before = before.count(name) != 0, in_after = after.count(name) != 0;
      auto table = (*db)->OpenTable(name);
      if (!table.ok()) {
        if (table.status().IsNotFound() && !(in_before && in_after)) continue;  // in flight
        ++result.lost_writes;
        result.Fail("table '" + name + "': " + table.status().ToString());
        continue;
      }
      // A table created in flight is empty; one dropped in flight is whole.
      const TableModel& state = in_before ? before.at(name) : after.at(name);
      std::map<uint64_t, std::vector<std::optional<std::string>>> allowed;
      if (flight != nullptr && flight->table == name && in_before && in_after) {
        const uint32_t value_size = state.value_size;
        for (size_t i = 0; i < flight->keys.size(); ++i) {
          std::optional<std::string> value;
          if (flight->kind == Step::Kind::kPut) {
            value = std::string(reinterpret_cast<const char*>(&flight->values[i * value_size]),
                                value_size);
          }
          allowed[flight->keys[i]].push_back(value);
        }
      }
      static const std::vector<uint64_t> kNoKeys;
      auto keys = universe.find(name);
      CheckTable(**table, name, keys == universe.end() ? kNoKeys : keys->second, allowed, state,
                 result);
    }
  }
  auto report = recovery::VerifyPool(path, nullptr);
  if (!report.ok()) {
    result.verify_failed = true;
    result.Fail("verify: " + report.status().ToString());
  } else if (!report->findings.empty()) {
    result.verify_failed = true;
    result.Fail("verify after recovery: " + report->findings[0].message);
  }
  return result;
}

}  // namespace gpkv::crashtest
