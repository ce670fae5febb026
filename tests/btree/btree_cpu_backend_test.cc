// The volatile ordered table's CPU backend met directly, with batches of
// many queries (the reads' parallel path, which the table-level tests reach
// rarely): Range with and without a limit, its smallest and its largest
// pairs, and Get, at the current contents and through snapshots that hold
// older versions and tombstones, against the pairs ScanChunk walks to at
// the same timestamp. Values of more than 8 bytes (the value store).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "tables/btree/cpu/backend.h"

namespace gpkv::btree {
namespace {

constexpr uint32_t kKeySize = 16;
constexpr uint32_t kValueSize = 24;
constexpr uint64_t kKeySpace = 3000;

// Key k: both words used, ordered as k (the high word most significant).
std::vector<uint8_t> KeyBytes(uint64_t k) {
  const uint64_t words[2] = {k % 4, k / 4};
  std::vector<uint8_t> key(kKeySize);
  std::memcpy(key.data(), words, kKeySize);
  return key;
}

uint64_t KeyOf(const uint8_t* key) {
  uint64_t words[2];
  std::memcpy(words, key, kKeySize);
  return words[1] * 4 + words[0];
}

std::vector<uint8_t> ValueBytes(uint64_t k, uint64_t round) {
  std::vector<uint8_t> value(kValueSize);
  for (uint32_t i = 0; i < kValueSize; ++i) value[i] = static_cast<uint8_t>(k * 31 + round * 7 + i);
  return value;
}

TEST(BtreeCpuBackend, BatchesOfManyQueriesMatchAScanAtEveryTimestamp) {
  TableOptions options;
  options.key_size = kKeySize;
  options.value_size = kValueSize;
  auto created = cpu::CreateCpuBackend(options, 2);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<Backend> backend = std::move(*created);

  std::mt19937_64 random(7);
  std::vector<uint64_t> snapshots;  // live, ascending
  uint64_t clock = 0;
  for (uint64_t round = 0; round < 60; ++round) {
    std::set<uint64_t> picked;
    const size_t n = 1 + random() % 600;
    while (picked.size() < n) picked.insert(random() % kKeySpace);
    std::vector<uint8_t> keys, values;
    for (uint64_t k : picked) {
      const std::vector<uint8_t> key = KeyBytes(k), value = ValueBytes(k, round);
      keys.insert(keys.end(), key.begin(), key.end());
      values.insert(values.end(), value.begin(), value.end());
    }
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::vector<uint8_t> was_live(n);
    WriteBatch batch;
    batch.keys = keys.data();
    const bool erase = round % 3 == 2;
    batch.values = erase ? nullptr : values.data();
    batch.order = order.data();
    batch.count = n;
    batch.timestamp = ++clock;
    batch.live = LiveSnapshots{snapshots.data(), snapshots.size()};
    batch.was_live = erase ? was_live.data() : nullptr;
    ASSERT_TRUE(backend->Write(batch).ok());
    if (round % 5 == 1) snapshots.push_back(clock);
    if (round % 11 == 10 && !snapshots.empty()) {
      snapshots.erase(snapshots.begin() + static_cast<long>(random() % snapshots.size()));
      ASSERT_TRUE(backend->Reclaim(LiveSnapshots{snapshots.data(), snapshots.size()}).ok());
    }
  }
  auto stats = backend->Stats();
  ASSERT_TRUE(stats.ok());
  ASSERT_GT(stats->versions, stats->keys + stats->tombstones);  // snapshots hold older versions

  std::vector<uint64_t> timestamps = snapshots;
  timestamps.push_back(kLatest);
  size_t differing = 0;
  std::vector<uint8_t> latest_keys;
  for (auto at = timestamps.rbegin(); at != timestamps.rend(); ++at) {
    std::vector<uint8_t> scan_keys, scan_values;
    ASSERT_TRUE(
        backend
            ->ScanChunk(nullptr, std::numeric_limits<size_t>::max(), *at, &scan_keys, &scan_values)
            .ok());
    const size_t live = scan_keys.size() / kKeySize;
    std::vector<uint64_t> scanned(live);
    for (size_t j = 0; j < live; ++j) scanned[j] = KeyOf(&scan_keys[j * kKeySize]);
    ASSERT_TRUE(std::is_sorted(scanned.begin(), scanned.end()));
    if (*at == kLatest) latest_keys = scan_keys;
    if (scan_keys != latest_keys) ++differing;

    const size_t n = 700;
    std::vector<uint64_t> lows(n), highs(n);
    std::vector<uint8_t> lo, hi;
    for (size_t i = 0; i < n; ++i) {
      lows[i] = random() % (kKeySpace + 2);
      highs[i] = random() % 8 == 0 ? lows[i] - 1 : lows[i] + random() % 60;
      if (i == 0) lows[i] = 0, highs[i] = kKeySpace;  // every key
      const std::vector<uint8_t> lo_key = KeyBytes(lows[i]), hi_key = KeyBytes(highs[i]);
      lo.insert(lo.end(), lo_key.begin(), lo_key.end());
      hi.insert(hi.end(), hi_key.begin(), hi_key.end());
    }
    for (uint64_t limit :
         {std::numeric_limits<uint64_t>::max(), uint64_t{0}, uint64_t{1}, uint64_t{5}}) {
      for (bool largest : {false, true}) {
        Table::RangeResults results;
        results.keys.assign(3, 0xab);  // replaced
        ASSERT_TRUE(
            backend
                ->Range(lo.data(), hi.data(), &results, n, tables::RangeLimit{limit, largest}, *at)
                .ok());
        ASSERT_EQ(results.offsets.size(), n + 1);
        ASSERT_EQ(results.offsets[0], 0u);
        ASSERT_EQ(results.keys.size(), results.offsets[n] * kKeySize);
        ASSERT_EQ(results.values.size(), results.offsets[n] * kValueSize);
        for (size_t i = 0; i < n; ++i) {
          size_t first = 0, last = 0;
          if (lows[i] <= highs[i]) {
            first = std::lower_bound(scanned.begin(), scanned.end(), lows[i]) - scanned.begin();
            last = std::upper_bound(scanned.begin(), scanned.end(), highs[i]) - scanned.begin();
          }
          const size_t count = std::min<uint64_t>(last - first, limit);
          if (largest) first = last - count;
          ASSERT_EQ(results.offsets[i + 1] - results.offsets[i], count)
              << "query " << i << " limit " << limit << " largest " << largest;
          const uint64_t out = results.offsets[i];
          ASSERT_EQ(0, std::memcmp(&results.keys[out * kKeySize], &scan_keys[first * kKeySize],
                                   count * kKeySize))
              << "query " << i << " limit " << limit << " largest " << largest;
          ASSERT_EQ(0, std::memcmp(&results.values[out * kValueSize],
                                   &scan_values[first * kValueSize], count * kValueSize))
              << "query " << i << " limit " << limit << " largest " << largest;
        }
      }
    }

    std::vector<uint8_t> values(n * kValueSize), found(n);
    ASSERT_TRUE(backend->Get(lo.data(), values.data(), found.data(), n, *at).ok());
    for (size_t i = 0; i < n; ++i) {
      const auto it = std::lower_bound(scanned.begin(), scanned.end(), lows[i]);
      const bool present = it != scanned.end() && *it == lows[i];
      ASSERT_EQ(found[i], present ? 1 : 0) << "key " << lows[i];
      const std::vector<uint8_t> zero(kValueSize, 0);
      const uint8_t* expected =
          present ? &scan_values[(it - scanned.begin()) * kValueSize] : zero.data();
      ASSERT_EQ(0, std::memcmp(&values[i * kValueSize], expected, kValueSize)) << "key " << lows[i];
    }
  }
  EXPECT_GT(differing, 0u);  // the snapshots see other contents than the latest
}

// A version's timestamp has 61 bits: a batch past them is refused, one at
// the last of them is read back.
TEST(BtreeCpuBackend, ATimestampPastItsBitsIsRefused) {
  TableOptions options;
  options.key_size = kKeySize;
  options.value_size = kValueSize;
  auto created = cpu::CreateCpuBackend(options, 2);
  ASSERT_TRUE(created.ok());
  std::unique_ptr<Backend> backend = std::move(*created);
  const std::vector<uint8_t> key = KeyBytes(5), value = ValueBytes(5, 1);
  const size_t order = 0;
  WriteBatch batch;
  batch.keys = key.data();
  batch.values = value.data();
  batch.order = &order;
  batch.count = 1;
  batch.timestamp = uint64_t{1} << 61;
  EXPECT_TRUE(backend->Write(batch).IsUnsupported());
  batch.timestamp = (uint64_t{1} << 61) - 1;
  ASSERT_TRUE(backend->Write(batch).ok());
  std::vector<uint8_t> got(kValueSize);
  uint8_t found = 0;
  ASSERT_TRUE(backend->Get(key.data(), got.data(), &found, 1, kLatest).ok());
  EXPECT_EQ(found, 1);
  EXPECT_EQ(got, value);
  ASSERT_TRUE(backend->Get(key.data(), got.data(), &found, 1, batch.timestamp - 1).ok());
  EXPECT_EQ(found, 0);
}

}  // namespace
}  // namespace gpkv::btree
