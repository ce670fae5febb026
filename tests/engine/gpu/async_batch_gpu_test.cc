// Stream-ordered batches through the public API (BatchOptions::async,
// Table::Synchronize) on a persistent hash table on the CUDA backend, on a
// DB that names its device (Options::cuda_device = 0).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/gpu/device_zero.h"
#include "gpkv/db.h"
#include "gpu/device_memory.h"
#include "test_util.h"

namespace gpkv {
namespace {

using testutil::CudaOptions;

// Keys first, first + 1, ... as 8-byte words; values key * 3 + salt.
std::vector<uint64_t> KeysFrom(uint64_t first, size_t count) {
  std::vector<uint64_t> keys(count);
  for (size_t i = 0; i < count; ++i) keys[i] = first + i;
  return keys;
}
std::vector<uint64_t> ValuesOf(const std::vector<uint64_t>& keys, uint64_t salt) {
  std::vector<uint64_t> values(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) values[i] = keys[i] * 3 + salt;
  return values;
}

// A device copy of `words`.
gpu::DeviceBytes OnDevice(const std::vector<uint64_t>& words) {
  auto bytes = gpu::DeviceBytes::Allocate(words.size() * 8);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  if (!bytes.ok()) return {};
  EXPECT_TRUE(bytes->CopyFromHost(words.data(), words.size() * 8).ok());
  return std::move(bytes.value());
}

// Every key of `expected` reads back its value through a waiting Get, and
// the table holds exactly that many keys.
void ExpectContents(Table* table, const std::map<uint64_t, uint64_t>& expected) {
  std::vector<uint64_t> keys, values;
  for (const auto& [key, value] : expected) {
    keys.push_back(key);
    values.push_back(value);
  }
  std::vector<uint64_t> read(keys.size(), 0);
  std::vector<uint8_t> found(keys.size(), 0);
  ASSERT_TRUE(table->Get(keys, read, found).ok());
  EXPECT_EQ(found, std::vector<uint8_t>(keys.size(), 1));
  EXPECT_EQ(read, values);
  auto stats = table->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->keys, expected.size());
}

TEST(AsyncBatchGpu, BatchesQueuedOnTwoStreamsMatchTheOracleAfterSynchronize) {
  SKIP_WITHOUT_DEVICE_0();
  testutil::TempPool temp("async-two-streams");
  auto stream_a = gpu::DeviceStream::Create();
  auto stream_b = gpu::DeviceStream::Create();  // both outlive the DB
  ASSERT_TRUE(stream_a.ok() && stream_b.ok());
  std::map<uint64_t, uint64_t> oracle;
  const size_t count = 20000;
  {
    auto db = DB::Open(temp.path(), CudaOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.expected_keys = 1000;  // the queued puts overflow: the wait resizes
    auto table = (*db)->CreateTable("t", table_options);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    BatchOptions on_a, on_b;
    on_a.async = on_b.async = true;
    on_a.stream = stream_a->get();
    on_b.stream = stream_b->get();

    // Disjoint keys per stream; stream a then overwrites half of its keys
    // (a second write on the stream finishes the first).
    const std::vector<uint64_t> keys_a = KeysFrom(1, count);
    const std::vector<uint64_t> keys_b = KeysFrom(1 + count, count);
    const std::vector<uint64_t> values_a = ValuesOf(keys_a, 1);
    const std::vector<uint64_t> values_b = ValuesOf(keys_b, 2);
    const std::vector<uint64_t> keys_a_half(keys_a.begin(), keys_a.begin() + count / 2);
    const std::vector<uint64_t> values_a_half = ValuesOf(keys_a_half, 5);
    gpu::DeviceBytes device_keys_a = OnDevice(keys_a), device_values_a = OnDevice(values_a);
    gpu::DeviceBytes device_keys_b = OnDevice(keys_b), device_values_b = OnDevice(values_b);
    gpu::DeviceBytes device_keys_half = OnDevice(keys_a_half);
    gpu::DeviceBytes device_values_half = OnDevice(values_a_half);
    ASSERT_TRUE((*table)
                    ->Put(ConstBytes(device_keys_a.data(), count * 8),
                          ConstBytes(device_values_a.data(), count * 8), on_a)
                    .ok());
    ASSERT_TRUE((*table)
                    ->Put(ConstBytes(device_keys_b.data(), count * 8),
                          ConstBytes(device_values_b.data(), count * 8), on_b)
                    .ok());
    ASSERT_TRUE((*table)
                    ->Put(ConstBytes(device_keys_half.data(), keys_a_half.size() * 8),
                          ConstBytes(device_values_half.data(), keys_a_half.size() * 8), on_a)
                    .ok());
    ASSERT_TRUE((*table)->Synchronize(stream_a->get()).ok());
    ASSERT_TRUE((*table)->Synchronize(stream_b->get()).ok());
    for (size_t i = 0; i < count; ++i) oracle[keys_a[i]] = values_a[i];
    for (size_t i = 0; i < count; ++i) oracle[keys_b[i]] = values_b[i];
    for (size_t i = 0; i < keys_a_half.size(); ++i) oracle[keys_a_half[i]] = values_a_half[i];
    ExpectContents(*table, oracle);
    auto resizes = (*table)->GetProperty("gphash.resizes");
    ASSERT_TRUE(resizes.ok());
    EXPECT_GT(*resizes, 0);

    // Queued erases on a, queued gets on b with device outputs.
    const std::vector<uint64_t> erase_keys(keys_a.begin() + count / 4, keys_a.begin() + count / 2);
    gpu::DeviceBytes device_erase_keys = OnDevice(erase_keys);
    auto device_erased = gpu::DeviceBytes::Allocate(erase_keys.size());
    auto device_read = gpu::DeviceBytes::Allocate(count * 8);
    auto device_found = gpu::DeviceBytes::Allocate(count);
    ASSERT_TRUE(device_erased.ok() && device_read.ok() && device_found.ok());
    ASSERT_TRUE((*table)
                    ->Erase(ConstBytes(device_erase_keys.data(), erase_keys.size() * 8),
                            MutableBytes(device_erased->data(), erase_keys.size()), on_a)
                    .ok());
    ASSERT_TRUE((*table)
                    ->Get(ConstBytes(device_keys_b.data(), count * 8),
                          MutableBytes(device_read->data(), count * 8),
                          MutableBytes(device_found->data(), count), on_b)
                    .ok());
    ASSERT_TRUE((*table)->Synchronize(stream_a->get()).ok());
    ASSERT_TRUE((*table)->Synchronize(stream_b->get()).ok());
    std::vector<uint8_t> erased(erase_keys.size(), 0);
    ASSERT_TRUE(device_erased->CopyToHost(erased.data(), erased.size()).ok());
    EXPECT_EQ(erased, std::vector<uint8_t>(erase_keys.size(), 1));
    std::vector<uint64_t> read(count, 0);
    std::vector<uint8_t> found(count, 0);
    ASSERT_TRUE(device_read->CopyToHost(read.data(), count * 8).ok());
    ASSERT_TRUE(device_found->CopyToHost(found.data(), count).ok());
    EXPECT_EQ(read, values_b);
    EXPECT_EQ(found, std::vector<uint8_t>(count, 1));
    for (uint64_t key : erase_keys) oracle.erase(key);
    ExpectContents(*table, oracle);
    ASSERT_TRUE((*db)->Close().ok());
  }
  // Durable: the pool holds the same contents on the CPU backend.
  Options cpu = CudaOptions();
  cpu.backend = Backend::kCpu;
  auto db = DB::Open(temp.path(), cpu);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("t");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ExpectContents(*table, oracle);
}

TEST(AsyncBatchGpu, CloseFinishesAnOutstandingWrite) {
  SKIP_WITHOUT_DEVICE_0();
  testutil::TempPool temp("async-close");
  auto stream = gpu::DeviceStream::Create();
  ASSERT_TRUE(stream.ok());
  const size_t count = 30000;
  const std::vector<uint64_t> keys = KeysFrom(100, count);
  const std::vector<uint64_t> values = ValuesOf(keys, 9);
  {
    auto db = DB::Open(temp.path(), CudaOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions table_options;
    table_options.expected_keys = 1000;  // the puts that find no room wait for the Close
    auto table = (*db)->CreateTable("t", table_options);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    gpu::DeviceBytes device_keys = OnDevice(keys), device_values = OnDevice(values);
    BatchOptions queued;
    queued.async = true;
    queued.stream = stream->get();
    ASSERT_TRUE((*table)
                    ->Put(ConstBytes(device_keys.data(), count * 8),
                          ConstBytes(device_values.data(), count * 8), queued)
                    .ok());
    ASSERT_TRUE((*db)->Close().ok());  // before the device arrays go
  }
  auto db = DB::Open(temp.path(), CudaOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("t");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::map<uint64_t, uint64_t> oracle;
  for (size_t i = 0; i < count; ++i) oracle[keys[i]] = values[i];
  ExpectContents(*table, oracle);
}

}  // namespace
}  // namespace gpkv
