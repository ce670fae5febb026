// Table::NewIterator and Range's per-query limit on the CPU backends of both
// ordered families (the LSM, persistent; the B-tree, volatile) against a
// std::map (ordered_iterator_oracle.h), and the calls' edge cases and
// errors. The LSM's GPU backend runs the same oracle in
// lsm/gpu/lsm_gpu_iterator_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gpkv/db.h"
#include "ordered_iterator_oracle.h"
#include "test_util.h"

namespace gpkv {
namespace {

// (durability, key size).
class OrderedIteratorOracle : public ::testing::TestWithParam<std::tuple<Durability, uint32_t>> {};

TEST_P(OrderedIteratorOracle, SeeksStepsBoundsAndLimitedRangesMatchAStdMap) {
  const auto [durability, key_size] = GetParam();
  itertest::RunIteratorOracle(Backend::kCpu, durability, key_size);
}

INSTANTIATE_TEST_SUITE_P(
    FamiliesAndKeySizes, OrderedIteratorOracle,
    ::testing::Combine(::testing::Values(Durability::kPersistent, Durability::kVolatile),
                       ::testing::Values(8u, 16u, 32u)),
    [](const ::testing::TestParamInfo<std::tuple<Durability, uint32_t>>& info) {
      // std::get, not a structured binding: its comma would split the macro's arguments.
      const bool persistent = std::get<0>(info.param) == Durability::kPersistent;
      return std::string(persistent ? "Lsm" : "Btree") + "Key" +
             std::to_string(std::get<1>(info.param));
    });

// A DB on the CPU with one table "t" of `options`.
struct OneTable {
  OneTable(const std::string& tag, TableOptions options) : temp("iter-" + tag) {
    auto opened = DB::Open(temp.path(), testutil::DbOptions(uint64_t{16} << 20, 2));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    db = std::move(*opened);
    auto created = db->CreateTable("t", options);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    table = *created;
  }
  testutil::TempPool temp;
  std::unique_ptr<DB> db;
  Table* table = nullptr;
};

TableOptions Ordered(Durability durability) {
  TableOptions options;
  options.kind = TableKind::kOrdered;
  options.durability = durability;
  if (durability == Durability::kPersistent) options.ordered.batch_entries = 64;
  return options;
}

TableOptions SmallHash() {
  TableOptions options;
  options.expected_keys = 1024;
  return options;
}

TEST(OrderedIterator, HashTablesAnswerUnsupported) {
  OneTable hash("hash", SmallHash());
  EXPECT_TRUE(hash.table->NewIterator().status().IsUnsupported());
}

TEST(OrderedIterator, WrongBoundsPageSizeAndSnapshotAreInvalidArgument) {
  for (Durability durability : {Durability::kPersistent, Durability::kVolatile}) {
    OneTable one("args-" + std::to_string(static_cast<int>(durability)), Ordered(durability));
    IteratorOptions options;
    options.lower_bound.assign(4, 0);  // not a key of 8 bytes
    EXPECT_TRUE(one.table->NewIterator(options).status().IsInvalidArgument());
    options = IteratorOptions{};
    options.upper_bound.assign(16, 0);
    EXPECT_TRUE(one.table->NewIterator(options).status().IsInvalidArgument());
    options = IteratorOptions{};
    options.page_size = 0;
    EXPECT_TRUE(one.table->NewIterator(options).status().IsInvalidArgument());

    // A seek to a target that is not one key: not Valid, InvalidArgument;
    // the next seek clears it.
    const std::vector<uint64_t> keys = {5}, values = {50};
    ASSERT_TRUE(one.table->Put(keys, values).ok());
    auto made = one.table->NewIterator();
    ASSERT_TRUE(made.ok());
    const std::vector<uint8_t> short_target(3, 0);
    (*made)->Seek(short_target);
    EXPECT_FALSE((*made)->Valid());
    EXPECT_TRUE((*made)->status().IsInvalidArgument());
    (*made)->SeekToFirst();
    EXPECT_TRUE((*made)->status().ok());
    ASSERT_TRUE((*made)->Valid());
    EXPECT_EQ(itertest::ValueOf((*made)->value()), 50u);
  }
  // A snapshot of another table.
  OneTable a("snapshot-a", Ordered(Durability::kVolatile));
  auto other = a.db->CreateTable("u", Ordered(Durability::kVolatile));
  ASSERT_TRUE(other.ok());
  auto snapshot = (*other)->TakeSnapshot();
  ASSERT_TRUE(snapshot.ok());
  IteratorOptions options;
  options.snapshot = snapshot->get();
  EXPECT_TRUE(a.table->NewIterator(options).status().IsInvalidArgument());
  EXPECT_TRUE((*other)->NewIterator(options).ok());
}

TEST(OrderedIterator, BoundsThatAdmitNoKeyFindNothing) {
  for (Durability durability : {Durability::kPersistent, Durability::kVolatile}) {
    OneTable one("empty-bounds-" + std::to_string(static_cast<int>(durability)),
                 Ordered(durability));
    std::vector<uint64_t> keys, values;
    for (uint64_t k = 0; k < 200; ++k) {
      keys.push_back(k);
      values.push_back(k + 1000);
    }
    ASSERT_TRUE(one.table->Put(keys, values).ok());
    auto bound = [](uint64_t k) { return itertest::KeyOf(k, 8); };
    struct Case {
      std::vector<uint8_t> lower, upper;
    };
    const Case cases[] = {{bound(50), bound(50)},     // [50, 50)
                          {bound(60), bound(40)},     // lower above upper
                          {{}, bound(0)},             // below key 0
                          {bound(500), {}},           // above the last key
                          {bound(300), bound(400)}};  // between no keys
    for (const Case& bounds : cases) {
      IteratorOptions options;
      options.lower_bound = bounds.lower;
      options.upper_bound = bounds.upper;
      options.page_size = 7;
      auto made = one.table->NewIterator(options);
      ASSERT_TRUE(made.ok());
      Iterator& it = **made;
      it.SeekToFirst();
      EXPECT_FALSE(it.Valid());
      it.SeekToLast();
      EXPECT_FALSE(it.Valid());
      it.Seek(bound(50));
      EXPECT_FALSE(it.Valid());
      it.SeekForPrev(bound(50));
      EXPECT_FALSE(it.Valid());
      EXPECT_TRUE(it.status().ok());
    }
    // The bounds [0, 1): key 0 alone; [199, max]: key 199 alone.
    IteratorOptions options;
    options.upper_bound = bound(1);
    auto first_only = one.table->NewIterator(options);
    ASSERT_TRUE(first_only.ok());
    (*first_only)->SeekToLast();
    ASSERT_TRUE((*first_only)->Valid());
    EXPECT_EQ(itertest::ValueOf((*first_only)->value()), 1000u);
    (*first_only)->Prev();
    EXPECT_FALSE((*first_only)->Valid());
    options = IteratorOptions{};
    options.lower_bound = bound(199);
    auto last_only = one.table->NewIterator(options);
    ASSERT_TRUE(last_only.ok());
    (*last_only)->SeekToFirst();
    ASSERT_TRUE((*last_only)->Valid());
    EXPECT_EQ(itertest::ValueOf((*last_only)->value()), 1199u);
    (*last_only)->Next();
    EXPECT_FALSE((*last_only)->Valid());
  }
}

// While a writer puts and erases the odd keys, forward and backward walks
// (pages of 16 pairs) see keys in strict order, every even key (never
// written during the walk) once with its value, and odd keys only with a
// value the writer gave them; a walk through a snapshot sees exactly the
// snapshot's state.
TEST(OrderedIterator, WalksBesideAWriterSeeEveryUntouchedPairOnceInOrder) {
  for (Durability durability : {Durability::kPersistent, Durability::kVolatile}) {
    OneTable one("beside-" + std::to_string(static_cast<int>(durability)), Ordered(durability));
    constexpr uint64_t kKeys = 2000;
    std::vector<uint64_t> keys, values;
    for (uint64_t k = 0; k < kKeys; k += 2) {
      keys.push_back(k);
      values.push_back(k + 1000000);
    }
    ASSERT_TRUE(one.table->Put(keys, values).ok());
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> rounds_done{0};
    std::thread writer([&] {
      std::mt19937_64 random(5);
      for (uint64_t round = 1; !stop.load(); ++round) {
        std::vector<uint64_t> odd(64), odd_values(64);
        for (size_t i = 0; i < odd.size(); ++i) {
          odd[i] = 2 * (random() % (kKeys / 2)) + 1;
          odd_values[i] = odd[i];  // an odd key's value is always itself
        }
        Status status = round % 3 == 0 ? one.table->Erase(odd) : one.table->Put(odd, odd_values);
        if (!status.ok()) ADD_FAILURE() << status.ToString();
        rounds_done = round;
      }
    });
    std::unique_ptr<Snapshot> snapshot;
    for (int walk = 0; walk < 8; ++walk) {
      // Each walk starts after one more write batch: the writes go on
      // between and during the walks.
      const uint64_t after = rounds_done.load() + 1;
      while (rounds_done.load() < after) std::this_thread::yield();
      IteratorOptions options;
      options.page_size = 16;
      std::map<uint64_t, uint64_t> expected;  // the snapshot's state, read by one Range
      if (durability == Durability::kVolatile && walk % 2 == 1) {
        auto taken = one.table->TakeSnapshot();
        ASSERT_TRUE(taken.ok());
        snapshot = std::move(*taken);
        std::vector<uint64_t> lo = {0}, hi = {~uint64_t{0}};
        Table::RangeResults all;
        BatchOptions through;
        through.snapshot = snapshot.get();
        ASSERT_TRUE(one.table->Range(lo, hi, &all, through).ok());
        for (uint64_t j = 0; j < all.offsets[1]; ++j) {
          uint64_t key, value;
          std::memcpy(&key, &all.keys[j * 8], 8);
          std::memcpy(&value, &all.values[j * 8], 8);
          expected[key] = value;
        }
        options.snapshot = snapshot.get();
      }
      auto made = one.table->NewIterator(options);
      ASSERT_TRUE(made.ok());
      Iterator& it = **made;
      const bool forward = walk % 4 < 2;
      std::map<uint64_t, uint64_t> seen;
      uint64_t previous = 0;
      for (forward ? it.SeekToFirst() : it.SeekToLast(); it.Valid();
           forward ? it.Next() : it.Prev()) {
        uint64_t key, value;
        std::memcpy(&key, it.key().data(), 8);
        std::memcpy(&value, it.value().data(), 8);
        if (!seen.empty()) {
          ASSERT_TRUE(forward ? key > previous : key < previous) << key << " after " << previous;
        }
        previous = key;
        seen[key] = value;
      }
      ASSERT_TRUE(it.status().ok()) << it.status().ToString();
      if (options.snapshot != nullptr) {
        EXPECT_EQ(seen, expected);
        continue;
      }
      for (uint64_t k = 0; k < kKeys; k += 2) {
        auto found = seen.find(k);
        ASSERT_NE(found, seen.end()) << "even key " << k << " missed";
        EXPECT_EQ(found->second, k + 1000000);
      }
      for (const auto& [key, value] : seen) {
        if (key % 2 == 1) {
          EXPECT_EQ(value, key);
        }
      }
    }
    stop = true;
    writer.join();
  }
}

TEST(OrderedRangeLimit, ALimitOfZeroReturnsNoPairsAndHashTablesStayUnsupported) {
  OneTable one("limit-zero", Ordered(Durability::kPersistent));
  const std::vector<uint64_t> keys = {1, 2, 3}, values = {10, 20, 30};
  ASSERT_TRUE(one.table->Put(keys, values).ok());
  BatchOptions options;
  options.range_limit = 0;
  const std::vector<uint64_t> lo = {0, 2}, hi = {9, 9};
  Table::RangeResults results;
  ASSERT_TRUE(one.table->Range(lo, hi, &results, options).ok());
  EXPECT_EQ(results.offsets, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_TRUE(results.keys.empty());
  options.range_limit = 2;
  ASSERT_TRUE(one.table->Range(lo, hi, &results, options).ok());
  EXPECT_EQ(results.offsets, (std::vector<uint64_t>{0, 2, 4}));
  std::vector<uint64_t> got(results.keys.size() / 8);
  std::memcpy(got.data(), results.keys.data(), results.keys.size());
  EXPECT_EQ(got, (std::vector<uint64_t>{1, 2, 2, 3}));

  OneTable hash("limit-hash", SmallHash());
  EXPECT_TRUE(hash.table->Range(lo, hi, &results, options).IsUnsupported());
}

}  // namespace
}  // namespace gpkv
