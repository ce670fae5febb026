// gpu::GpuBackend tables with value cells (values of 9..128 bytes; the slot's
// value word is the cell's pool offset): full values in batches at any
// alignment, in host or device memory; and, in direct, mirror and staged
// mode, updates that recycle cells (checked by gphash::VerifyGphash across
// reopens) and Async batches. The oracle runs over cell tables are in
// gphash_gpu_test.cc. Device tests: skipped when no CUDA device is usable
// (label `gpu`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/device_memory.h"
#include "gpu_test_util.h"
#include "recovery/report.h"
#include "tables/gphash/check.h"
#include "tables/gphash/gpu/backend.h"
#include "tables/gphash/layout.h"

namespace gpkv::gphash::gpu::gpu_test {

using gpkv::gpu::DeviceBytes;
using gpkv::gpu::DeviceStream;

namespace {

// Gets `count` keys (8 bytes each) into host memory one byte past an aligned
// address, pre-filled with 0xee, and checks each found flag against
// present[i] and each value against expected[i * value_size...] (zero bytes
// where absent).
::testing::AssertionResult GetsAnswer(GpuBackend& table, const uint8_t* keys, size_t count,
                                      uint32_t value_size, const uint8_t* expected,
                                      const uint8_t* present) {
  std::vector<uint8_t> buffer(count * value_size + 1, 0xee), found(count, 7);
  uint8_t* values = buffer.data() + 1;
  Status got = table.Get(keys, values, found.data(), count);
  if (!got.ok()) return ::testing::AssertionFailure() << "Get: " << got.ToString();
  const std::string absent(value_size, '\0');
  for (size_t i = 0; i < count; ++i) {
    if (found[i] != (present[i] ? 1 : 0)) {
      return ::testing::AssertionFailure() << "key " << i << ": found " << int{found[i]};
    }
    const std::string want = present[i] ? Bytes(expected + i * value_size, value_size) : absent;
    if (Bytes(values + i * value_size, value_size) != want) {
      return ::testing::AssertionFailure()
             << "key " << i << (present[i] ? "" : " (absent)") << ": wrong value bytes";
    }
  }
  return ::testing::AssertionSuccess();
}

// Values of 9..128 bytes live in value cells (the slot's value word is the
// cell's pool offset). Batches at any alignment, in host or device memory,
// answer the full value_size bytes through resizes, duplicates within a
// batch, erases and a reopen.
TEST(GphashGpu, ValueCellTablesStoreFullValues) {
  SKIP_WITHOUT_DEVICE();
  for (uint32_t value_size : {9u, 16u, 24u, 100u, 128u}) {
    SCOPED_TRACE("value_size " + std::to_string(value_size));
    const uint32_t v = value_size;
    TableOptions options;
    options.value_size = v;
    options.expected_keys = 4000;  // the puts below resize it
    TableHarness harness("cells-" + std::to_string(v), options, GpuIndexMode::kDirect);
    ASSERT_TRUE(harness.ok());
    EXPECT_EQ(harness.table().value_size(), v);
    std::mt19937_64 rng(1000 + v);
    const size_t count = 20000;
    std::vector<uint8_t> keys = RandomKeys(rng, count, 8);
    std::vector<uint8_t> expected(count * v);
    for (size_t i = 0; i < count; ++i) RandomValue(rng, &expected[i * v], v);
    std::vector<uint8_t> present(count, 1);

    // The first half from host memory one byte past an aligned address, the
    // second half from device memory at an odd address.
    std::vector<uint8_t> host_values(count * v + 1);
    std::memcpy(host_values.data() + 1, expected.data(), count * v);
    const size_t half = count / 2;
    ASSERT_TRUE(harness.table().Put(keys.data(), host_values.data() + 1, half).ok());
    auto device_keys = DeviceBytes::Allocate(count * 8);
    auto device_values = DeviceBytes::Allocate(count * v + 3);
    ASSERT_TRUE(device_keys.ok() && device_values.ok());
    ASSERT_TRUE(device_keys->CopyFromHost(keys.data(), count * 8).ok());
    ASSERT_TRUE(device_values->CopyFromHost(expected.data(), count * v, 3).ok());
    ASSERT_TRUE(
        harness.table()
            .Put(device_keys->data() + half * 8, device_values->data() + 3 + half * v, count - half)
            .ok());
    EXPECT_TRUE(
        GetsAnswer(harness.table(), keys.data(), count, v, expected.data(), present.data()));
    EXPECT_GT(harness.table().Stats().resizes, 0u);

    // Keys 0..999 twice in one batch, the second time in reverse order with
    // other values: the last put of each key wins.
    const size_t updated = 1000;
    std::vector<uint8_t> twice_keys(2 * updated * 8), twice_values(2 * updated * v);
    for (size_t i = 0; i < updated; ++i) {
      std::memcpy(&twice_keys[i * 8], &keys[i * 8], 8);
      RandomValue(rng, &twice_values[i * v], v);  // loses
      const size_t later = 2 * updated - 1 - i;
      std::memcpy(&twice_keys[later * 8], &keys[i * 8], 8);
      RandomValue(rng, &twice_values[later * v], v);
      std::memcpy(&expected[i * v], &twice_values[later * v], v);
    }
    ASSERT_TRUE(harness.table().Put(twice_keys.data(), twice_values.data(), 2 * updated).ok());
    EXPECT_TRUE(
        GetsAnswer(harness.table(), keys.data(), count, v, expected.data(), present.data()));

    // Gets into device memory at an odd address, with keys never put among
    // them: those come back not found with zeroed bytes.
    const size_t missing = 500;
    std::vector<uint8_t> mixed_keys = keys;
    std::vector<uint8_t> fresh = RandomKeys(rng, missing, 8);
    mixed_keys.insert(mixed_keys.end(), fresh.begin(), fresh.end());
    const size_t mixed = count + missing;
    auto device_mixed = DeviceBytes::Allocate(mixed * 8);
    auto device_out = DeviceBytes::Allocate(mixed * v + 1);
    auto device_found = DeviceBytes::Allocate(mixed);
    ASSERT_TRUE(device_mixed.ok() && device_out.ok() && device_found.ok());
    ASSERT_TRUE(device_mixed->CopyFromHost(mixed_keys.data(), mixed * 8).ok());
    std::vector<uint8_t> fill(mixed * v + 1, 0xee);
    ASSERT_TRUE(device_out->CopyFromHost(fill.data(), fill.size()).ok());
    ASSERT_TRUE(harness.table()
                    .Get(device_mixed->data(), device_out->data() + 1, device_found->data(), mixed)
                    .ok());
    std::vector<uint8_t> out(mixed * v), found(mixed);
    ASSERT_TRUE(device_out->CopyToHost(out.data(), mixed * v, 1).ok());
    ASSERT_TRUE(device_found->CopyToHost(found.data(), mixed).ok());
    std::vector<uint8_t> want = expected;
    want.resize(mixed * v, 0);
    EXPECT_EQ(out, want);
    std::vector<uint8_t> want_found(mixed, 1);
    std::fill(want_found.begin() + count, want_found.end(), 0);
    EXPECT_EQ(found, want_found);

    // Erase keys 0..499, then 0..99 again and 100 keys never put, in one
    // batch: only the first erase of a present key reports it.
    const size_t erased_count = 500;
    std::vector<uint8_t> erase_keys(keys.begin(), keys.begin() + erased_count * 8);
    erase_keys.insert(erase_keys.end(), keys.begin(), keys.begin() + 100 * 8);
    erase_keys.insert(erase_keys.end(), fresh.begin(), fresh.begin() + 100 * 8);
    std::vector<uint8_t> erased(erase_keys.size() / 8, 7);
    ASSERT_TRUE(harness.table().Erase(erase_keys.data(), erased.data(), erased.size()).ok());
    std::vector<uint8_t> want_erased(erased.size(), 0);
    std::fill(want_erased.begin(), want_erased.begin() + erased_count, 1);
    EXPECT_EQ(erased, want_erased);
    std::fill(present.begin(), present.begin() + erased_count, 0);
    EXPECT_TRUE(
        GetsAnswer(harness.table(), keys.data(), count, v, expected.data(), present.data()));

    gphash::Stats stats = harness.table().Stats();
    EXPECT_EQ(stats.keys, count - erased_count);
    EXPECT_GE(stats.value_bytes, (count - erased_count) * gphash::CellSizeFor(v));
    std::unordered_map<std::string, std::string> live;
    for (size_t i = erased_count; i < count; ++i) {
      live[Bytes(&keys[i * 8], 8)] = Bytes(&expected[i * v], v);
    }
    ExpectScanFindsExactly(harness.table(), live, 8, v);

    harness.Reopen();
    ASSERT_TRUE(harness.ok());
    EXPECT_EQ(harness.table().Stats().keys, count - erased_count);
    EXPECT_TRUE(
        GetsAnswer(harness.table(), keys.data(), count, v, expected.data(), present.data()));
    // Erased keys come back with new values after the reopen.
    ASSERT_TRUE(harness.table().Put(keys.data(), twice_values.data(), erased_count).ok());
    std::memcpy(expected.data(), twice_values.data(), erased_count * v);
    std::fill(present.begin(), present.end(), 1);
    EXPECT_TRUE(
        GetsAnswer(harness.table(), keys.data(), count, v, expected.data(), present.data()));
  }
}

// A value of value_size bytes that depends on every bit of (index, version):
// splitmix64 from a seed of both.
void VersionedValue(uint64_t index, uint64_t version, uint32_t value_size, uint8_t* out) {
  testutil::SplitMix64Fill(index * 0x9E3779B97F4A7C15ull ^ (version + 1) * 0xD1B54A32D192ED03ull,
                           out, value_size);
}

uint64_t IndexKey(uint64_t index) { return index * 0x9E3779B97F4A7C15ull + 1; }

// The key table of the recycling test: key i holds VersionedValue(i,
// versions[i]), or nothing where versions[i] is kErased.
class VersionedKeys {
 public:
  static constexpr uint64_t kErased = ~uint64_t{0};

  VersionedKeys(size_t count, uint32_t value_size)
      : value_size_(value_size), versions_(count, kErased), keys_(count * 8) {
    for (size_t i = 0; i < count; ++i) {
      const uint64_t key = IndexKey(i);
      std::memcpy(&keys_[i * 8], &key, 8);
    }
  }

  // Puts keys [first, first + count) at `version`. With `twice` the batch
  // holds each key a second time, earlier, with a value that must lose.
  Status Put(GpuBackend& table, size_t first, size_t count, uint64_t version, bool twice) {
    const size_t ops = twice ? 2 * count : count;
    std::vector<uint8_t> keys(ops * 8), values(ops * value_size_);
    size_t op = 0;
    if (twice) {
      for (size_t i = first + count; i-- > first; ++op) {  // reverse order: another layout
        std::memcpy(&keys[op * 8], &keys_[i * 8], 8);
        VersionedValue(i, version + (uint64_t{1} << 32), value_size_, &values[op * value_size_]);
      }
    }
    for (size_t i = first; i < first + count; ++i, ++op) {
      std::memcpy(&keys[op * 8], &keys_[i * 8], 8);
      VersionedValue(i, version, value_size_, &values[op * value_size_]);
    }
    Status put = table.Put(keys.data(), values.data(), ops);
    if (put.ok()) std::fill(versions_.begin() + first, versions_.begin() + first + count, version);
    return put;
  }

  // Erases keys [first, first + count); each must be present.
  ::testing::AssertionResult Erase(GpuBackend& table, size_t first, size_t count) {
    std::vector<uint8_t> erased(count, 7);
    Status status = table.Erase(&keys_[first * 8], erased.data(), count);
    if (!status.ok()) return ::testing::AssertionFailure() << "Erase: " << status.ToString();
    for (size_t i = 0; i < count; ++i) {
      if (erased[i] != 1) {
        return ::testing::AssertionFailure()
               << "erase of key " << first + i << " reported " << int{erased[i]};
      }
    }
    std::fill(versions_.begin() + first, versions_.begin() + first + count, kErased);
    return ::testing::AssertionSuccess();
  }

  // Every key answers its last version (or not found, where erased).
  ::testing::AssertionResult AllAnswer(GpuBackend& table) const {
    const size_t count = versions_.size();
    std::vector<uint8_t> expected(count * value_size_, 0), present(count);
    for (size_t i = 0; i < count; ++i) {
      present[i] = versions_[i] != kErased;
      if (present[i]) VersionedValue(i, versions_[i], value_size_, &expected[i * value_size_]);
    }
    return GetsAnswer(table, keys_.data(), count, value_size_, expected.data(), present.data());
  }

 private:
  const uint32_t value_size_;
  std::vector<uint64_t> versions_;
  std::vector<uint8_t> keys_;
};

// ExpectVerifiesClean of the harness's table (closed), which holds `keys`
// keys, each with a cell of its own, and as many cells as `value_bytes` holds.
void ExpectCellsVerifyClean(TableHarness& harness, uint64_t keys, uint64_t cell_size,
                            uint64_t value_bytes) {
  recovery::TableReport table;
  ExpectVerifiesClean(harness.pool(), harness.root(), keys, &table);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(table.value_cells_in_use, keys);
  EXPECT_EQ((table.value_cells_in_use + table.value_cells_unreferenced) * cell_size, value_bytes);
}

class GphashGpuCells : public ::testing::TestWithParam<GpuIndexMode> {};

// Updates write each value to a new cell and give the old one back: 30
// rounds of updating every key (some batches with each key twice, some keys
// erased and re-inserted) keep the table's value bytes within a few times
// those of the first load. After close and reopen every key answers its last
// value, and the cells no live key references are taken again: further
// rounds of updates do not grow the table.
TEST_P(GphashGpuCells, UpdatesRecycleCells) {
  SKIP_WITHOUT_DEVICE();
  const uint32_t value_size = 100;
  const uint64_t cell_size = gphash::CellSizeFor(value_size);
  const size_t key_count = 50000, batch = 10000;
  TableOptions options;
  options.value_size = value_size;
  options.expected_keys = key_count;
  TableHarness harness(std::string("cells-recycle-") + ModeName(GetParam()), options, GetParam());
  ASSERT_TRUE(harness.ok());
  VersionedKeys keys(key_count, value_size);
  ASSERT_TRUE(keys.Put(harness.table(), 0, key_count, 0, false).ok());
  ASSERT_TRUE(keys.AllAnswer(harness.table()));
  const uint64_t loaded_bytes = harness.table().Stats().value_bytes;
  ASSERT_GE(loaded_bytes, key_count * cell_size);

  uint64_t most_bytes = loaded_bytes, cells_written = key_count;
  for (uint64_t round = 1; round <= 30; ++round) {
    const bool twice = round % 2 == 1;
    if (round % 10 == 5) {  // a batch's worth erased, then put back below
      ASSERT_TRUE(keys.Erase(harness.table(), 0, batch)) << "round " << round;
      ASSERT_TRUE(keys.AllAnswer(harness.table())) << "round " << round;
    }
    for (size_t first = 0; first < key_count; first += batch) {
      ASSERT_TRUE(keys.Put(harness.table(), first, batch, round, twice).ok()) << "round " << round;
      cells_written += twice ? 2 * batch : batch;
      most_bytes = std::max(most_bytes, harness.table().Stats().value_bytes);
    }
    ASSERT_TRUE(keys.AllAnswer(harness.table())) << "round " << round;
  }
  EXPECT_EQ(harness.table().Stats().keys, key_count);
  // A table that never reused a cell would have passed the bound many times.
  EXPECT_GT(cells_written * cell_size, 8 * loaded_bytes);
  EXPECT_LT(most_bytes, 4 * loaded_bytes)
      << "value bytes after the first load " << loaded_bytes << ", at most " << most_bytes
      << " over 30 rounds of updates";

  uint64_t reopened_bytes = 0;
  uint64_t version = 31;
  for (int cycle = 0; cycle < 3; ++cycle) {
    SCOPED_TRACE("reopen " + std::to_string(cycle));
    const uint64_t closed_bytes = harness.table().Stats().value_bytes;
    harness.CloseTable();
    ExpectCellsVerifyClean(harness, key_count, cell_size, closed_bytes);
    recovery::Report report;
    harness.Open(/*read_only=*/false, &report);
    ASSERT_TRUE(harness.ok());
    EXPECT_EQ(report.slots_cleared, 0u);
    EXPECT_EQ(report.duplicates_removed, 0u);
    EXPECT_EQ(harness.table().Stats().keys, key_count);
    ASSERT_TRUE(keys.AllAnswer(harness.table()));
    if (cycle == 0) reopened_bytes = harness.table().Stats().value_bytes;
    for (size_t first = 0; first < key_count; first += batch) {
      ASSERT_TRUE(keys.Put(harness.table(), first, batch, version, false).ok());
    }
    ++version;
    ASSERT_TRUE(keys.AllAnswer(harness.table()));
    EXPECT_EQ(harness.table().Stats().value_bytes, reopened_bytes)
        << "a round of updates after a reopen grew the table";
  }
  const uint64_t closed_bytes = harness.table().Stats().value_bytes;
  harness.CloseTable();
  ExpectCellsVerifyClean(harness, key_count, cell_size, closed_bytes);
}

// PutAsync / GetAsync / EraseAsync on a cell table: complete after
// Synchronize, through the resizes Synchronize runs.
TEST_P(GphashGpuCells, AsyncBatchesAreCompleteAfterSynchronize) {
  SKIP_WITHOUT_DEVICE();
  auto stream = DeviceStream::Create();  // outlives the table
  ASSERT_TRUE(stream.ok());
  const uint32_t v = 72;
  TableOptions options;
  options.value_size = v;
  options.expected_keys = 1000;  // PutAsync overflows: Synchronize resizes
  TableHarness harness(std::string("cells-async-") + ModeName(GetParam()), options, GetParam());
  ASSERT_TRUE(harness.ok());
  std::mt19937_64 rng(17);
  const size_t count = 30000;
  std::vector<uint8_t> keys = RandomKeys(rng, count, 8);
  std::vector<uint8_t> values(count * v), updates(count * v);
  for (size_t i = 0; i < count; ++i) RandomValue(rng, &values[i * v], v);
  for (size_t i = 0; i < count; ++i) RandomValue(rng, &updates[i * v], v);
  std::vector<uint8_t> out(count * v), found(count);

  ASSERT_TRUE(harness.table().PutAsync(keys.data(), values.data(), count, stream->get()).ok());
  ASSERT_TRUE(harness.table().Synchronize(stream->get()).ok());
  ASSERT_TRUE(
      harness.table().GetAsync(keys.data(), out.data(), found.data(), count, stream->get()).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(out, values);
  EXPECT_EQ(found, std::vector<uint8_t>(count, 1));
  EXPECT_GT(harness.table().Stats().resizes, 0u);

  ASSERT_TRUE(harness.table().PutAsync(keys.data(), updates.data(), count, stream->get()).ok());
  ASSERT_TRUE(harness.table().Synchronize(stream->get()).ok());
  std::fill(out.begin(), out.end(), 0);
  ASSERT_TRUE(
      harness.table().GetAsync(keys.data(), out.data(), found.data(), count, stream->get()).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(out, updates);
  EXPECT_EQ(found, std::vector<uint8_t>(count, 1));
  EXPECT_EQ(harness.table().Stats().keys, count);

  std::vector<uint8_t> erased(count);
  ASSERT_TRUE(harness.table().EraseAsync(keys.data(), erased.data(), count, stream->get()).ok());
  ASSERT_TRUE(harness.table().Synchronize(stream->get()).ok());
  EXPECT_EQ(erased, std::vector<uint8_t>(count, 1));
  EXPECT_EQ(harness.table().Stats().keys, 0u);
  EXPECT_TRUE(harness.table().ForgetStream(stream->get()).ok());
}

INSTANTIATE_TEST_SUITE_P(Modes, GphashGpuCells,
                         ::testing::Values(GpuIndexMode::kDirect, GpuIndexMode::kMirror,
                                           GpuIndexMode::kStaged),
                         [](const ::testing::TestParamInfo<GpuIndexMode>& info) {
                           return std::string(ModeName(info.param));
                         });

}  // namespace
}  // namespace gpkv::gphash::gpu::gpu_test
