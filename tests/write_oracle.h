// Random mixed write batches (gpkv::Table::Write) checked against std::map:
// the batches mix puts and erases, put and erase one key several times
// within a batch, and their erased results are checked against the batch
// applied in order. Shared by the CPU tests and their GPU twins.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "gpkv/table.h"
#include "test_util.h"

namespace gpkv::testutil {

// A table family the write tests run on: its name (the suffix of the
// test's name), kind and durability.
struct WriteFamily {
  const char* name;
  TableKind kind;
  Durability durability;
};

// Every family: hash and ordered, persistent and volatile.
inline constexpr WriteFamily kWriteFamilies[] = {
    {"gphash", TableKind::kHash, Durability::kPersistent},
    {"slab", TableKind::kHash, Durability::kVolatile},
    {"lsm", TableKind::kOrdered, Durability::kPersistent},
    {"btree", TableKind::kOrdered, Durability::kVolatile}};

inline std::string WriteFamilyName(const ::testing::TestParamInfo<WriteFamily>& info) {
  return info.param.name;
}

// A table of `family` with keys of `key_size` bytes and values of 16. An
// LSM table gets b = 32 and a log of two halves of 4 batches: batches of the
// write tests' sizes go to the log, fill a half (a checkpoint), and flush at
// once.
inline TableOptions WriteTableOptions(const WriteFamily& family, uint32_t key_size) {
  TableOptions options;
  options.kind = family.kind;
  options.durability = family.durability;
  options.key_size = key_size;
  options.value_size = 16;
  options.expected_keys = 4096;
  if (family.kind == TableKind::kOrdered && family.durability == Durability::kPersistent) {
    options.ordered.batch_entries = 32;
    options.ordered.log_batches = 4;
  }
  return options;
}

// Keys are small integers in the first 8-byte word (the least significant),
// the other words zero: key order is the integers' order.
using WriteModel = std::map<uint64_t, std::vector<uint8_t>>;

inline std::vector<uint8_t> KeysOf(const std::vector<uint64_t>& ids, uint32_t key_size) {
  std::vector<uint8_t> keys(ids.size() * key_size, 0);
  for (size_t i = 0; i < ids.size(); ++i) std::memcpy(&keys[i * key_size], &ids[i], 8);
  return keys;
}

// One random Write batch of n operations on keys below key_space, applied
// to `table` and to `model`; its erased results checked.
inline void RandomWriteBatch(Table& table, WriteModel& model, std::mt19937_64& random, size_t n,
                             uint64_t key_space, uint64_t seed, const std::string& what) {
  const uint32_t key_size = table.options().key_size;
  const uint32_t value_size = table.options().value_size;
  std::vector<uint64_t> ids(n);
  std::vector<uint8_t> ops(n), values(n * value_size);
  const int erase_percent = static_cast<int>(random() % 80) + 10;
  for (size_t i = 0; i < n; ++i) {
    // A third of the operations reuse a key of this batch: overwrites and
    // erases of one key inside the batch.
    ids[i] = i > 0 && random() % 3 == 0 ? ids[random() % i] : random() % key_space;
    ops[i] = static_cast<uint8_t>(static_cast<int>(random() % 100) < erase_percent
                                      ? Table::WriteOp::kErase
                                      : Table::WriteOp::kPut);
    SplitMix64Fill(seed * 1000003 + i, &values[i * value_size], value_size);
  }
  std::vector<uint8_t> expected_erased(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (ops[i] == static_cast<uint8_t>(Table::WriteOp::kPut)) {
      model[ids[i]].assign(values.begin() + i * value_size, values.begin() + (i + 1) * value_size);
    } else {
      expected_erased[i] = model.erase(ids[i]) != 0 ? 1 : 0;
    }
  }
  const bool want_erased = random() % 4 != 0;
  std::vector<uint8_t> erased(want_erased ? n : 0, 0xee);
  const Status status = table.Write(KeysOf(ids, key_size), values, ops, erased);
  ASSERT_TRUE(status.ok()) << what << ": " << status.ToString();
  if (want_erased) EXPECT_EQ(erased, expected_erased) << what << ": erased results";
}

// The table holds exactly the model: Get of every key ever used (below
// key_space) and a Scan; for ordered tables, a Range over all keys in order.
inline void ExpectTableHolds(Table& table, const WriteModel& model, uint64_t key_space,
                             const std::string& what) {
  const uint32_t key_size = table.options().key_size;
  const uint32_t value_size = table.options().value_size;
  std::vector<uint64_t> ids(key_space);
  for (uint64_t id = 0; id < key_space; ++id) ids[id] = id;
  std::vector<uint8_t> values(key_space * value_size), found(key_space);
  ASSERT_TRUE(table.Get(KeysOf(ids, key_size), values, found).ok()) << what;
  for (uint64_t id = 0; id < key_space; ++id) {
    auto it = model.find(id);
    ASSERT_EQ(found[id], it != model.end() ? 1 : 0) << what << ": key " << id;
    if (it == model.end()) continue;
    ASSERT_TRUE(std::memcmp(&values[id * value_size], it->second.data(), value_size) == 0)
        << what << ": value of key " << id;
  }
  WriteModel scanned;
  ASSERT_TRUE(table
                  .Scan([&](const uint8_t* key, const uint8_t* value) {
                    uint64_t id = 0;
                    std::memcpy(&id, key, 8);
                    scanned[id].assign(value, value + value_size);
                    return true;
                  })
                  .ok());
  EXPECT_TRUE(scanned == model) << what << ": the scan holds " << scanned.size()
                                << " pairs, the model " << model.size();
  if (table.options().kind != TableKind::kOrdered) return;
  Table::RangeResults range;
  ASSERT_TRUE(table.Range(KeysOf({0}, key_size), KeysOf({key_space}, key_size), &range).ok());
  ASSERT_EQ(range.offsets.size(), 2u);
  ASSERT_EQ(range.offsets[1], model.size()) << what << ": range";
  size_t i = 0;
  for (const auto& [id, value] : model) {
    uint64_t key = 0;
    std::memcpy(&key, &range.keys[i * key_size], 8);
    ASSERT_EQ(key, id) << what << ": range entry " << i;
    ASSERT_TRUE(std::memcmp(&range.values[i * value_size], value.data(), value_size) == 0);
    ++i;
  }
}

// 120 rounds of RandomWriteBatch (1 to 150 operations on keys below 600) on
// the table "t" of *db, the table checked against a model every 10 rounds.
// With `reopen` (a persistent table) the DB is reopened from `path` with
// `options` every 40 rounds, *db and *table replaced, and checked again.
// `name` starts the text of each failure.
inline void RandomWriteRounds(std::unique_ptr<DB>* db, Table** table, const std::string& path,
                              const Options& options, bool reopen, std::mt19937_64& random,
                              const std::string& name) {
  WriteModel model;
  constexpr uint64_t kSpace = 600;
  for (int round = 0; round < 120; ++round) {
    const size_t n = random() % 4 == 0 ? 1 + random() % 150 : 1 + random() % 24;
    const std::string what = name + " round " + std::to_string(round);
    RandomWriteBatch(**table, model, random, n, kSpace, round, what);
    if (::testing::Test::HasFatalFailure()) return;
    if (round % 10 == 9) {
      ExpectTableHolds(**table, model, kSpace, what);
      if (::testing::Test::HasFatalFailure()) return;
    }
    if (round % 40 == 39 && reopen) {
      db->reset();
      auto reopened = DB::Open(path, options);
      ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
      *db = std::move(*reopened);
      auto opened = (*db)->OpenTable("t");
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      *table = *opened;
      ExpectTableHolds(**table, model, kSpace, what + " reopened");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace gpkv::testutil
