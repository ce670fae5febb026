// The logged core's path for write batches in device memory, run on the CPU
// through a DeviceRecordWriter that writes the record from host memory (the
// CUDA writer's contract: started, then waited for): the bytes are those of
// host batches; readers wait at the read gate while a batch is applied to
// the index and not yet durable; a batch whose record copy or Sync fails
// leaves the table refusing reads and writes, and a reopen keeps every
// acknowledged batch. The CUDA writer itself: tests/gphash/gpu.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "format/pool_layout.h"
#include "gphash/logged_table_bytes.h"
#include "gpkv/db.h"
#include "pm/persist_hook.h"
#include "pm/pool.h"
#include "recovery/verify.h"
#include "tables/family.h"
#include "tables/gphash/logged/core.h"
#include "tables/hash_index.h"
#include "tables/log/cpu/record_writer.h"
#include "test_util.h"

namespace gpkv {
namespace {

namespace logged = gphash::logged;

// Writes the record from host memory, as log::cpu::WriteRecordArrays does,
// when it is started; WaitRecordArrays returns its header. With a hold set,
// WaitRecordArrays blocks until Release, so that a test can look at the
// table while a batch is applied to the index and not yet durable.
class HostRecordWriter final : public logged::DeviceRecordWriter {
 public:
  Status StartRecordArrays(pm::Pool& pool, uint64_t record_offset, uint64_t epoch, uint64_t seq,
                           const uint8_t* keys, const uint8_t* values, uint64_t count,
                           uint32_t key_size, uint32_t value_size) override {
    log::cpu::RecordEntries entries;
    entries.keys = reinterpret_cast<const uint64_t*>(keys);
    entries.values = values;
    entries.count = count;
    header_ = log::cpu::WriteRecordArrays(pool, record_offset, epoch, seq, entries, key_size,
                                          value_size, 1);
    return Status::OK();
  }

  Result<log::RecordHeader> WaitRecordArrays() override {
    std::unique_lock<std::mutex> lock(mutex_);
    waiting_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !hold_; });
    waiting_ = false;
    return header_;
  }

  // The next WaitRecordArrays blocks until Release.
  void Hold() {
    std::lock_guard<std::mutex> lock(mutex_);
    hold_ = true;
  }
  // Returns once a WaitRecordArrays is blocked.
  void AwaitWaiting() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return waiting_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    hold_ = false;
    changed_.notify_all();
  }

 private:
  log::RecordHeader header_{};
  std::mutex mutex_;
  std::condition_variable changed_;
  bool hold_ = false;
  bool waiting_ = false;
};

Options PoolOptions() { return testutil::DbOptions(uint64_t{32} << 20, 2); }

TableOptions LoggedOptions() {
  TableOptions options;
  options.expected_keys = 256;
  options.hash_log.batch_entries = 16;
  options.hash_log.log_batches = 4;
  return options;
}

// A pool with one empty logged table "h", and its core opened beside the
// engine with a HostRecordWriter (the pool's own open, as the family's).
class DeviceBatchCore {
 public:
  explicit DeviceBatchCore(const std::string& tag) : temp_(tag) {
    auto db = DB::Open(temp_.path(), PoolOptions());
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return;
    auto table = (*db)->CreateTable("h", LoggedOptions());
    EXPECT_TRUE(table.ok()) << table.status().ToString();
  }

  // Opens the pool and the table's core (REQUIRES: closed).
  void Open() {
    auto pool = pm::Pool::Open(temp_.path(), /*read_only=*/false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    pool_ = std::move(*pool);
    const format::Superblock superblock = pool_->superblock();
    auto entry = testutil::ReadBytes<format::CatalogEntry>(
        temp_.path(), superblock.catalog_offset + sizeof(format::CatalogHeader));
    context_.pool = pool_.get();
    context_.backend = Backend::kCpu;
    auto make_index = [&](uint64_t expected_keys) -> Result<std::unique_ptr<Table>> {
      TableOptions options;
      options.expected_keys = expected_keys;
      return tables::OpenHashIndex(context_, "h", options);
    };
    auto writer = std::make_unique<HostRecordWriter>();
    writer_ = writer.get();
    auto core = logged::Core::Open(*pool_, "h", entry.root_offset, make_index, 1, nullptr,
                                   std::move(writer));
    ASSERT_TRUE(core.ok()) << core.status().ToString();
    core_ = std::move(*core);
  }
  void Close() {
    if (core_ != nullptr) EXPECT_TRUE(core_->Close().ok());
    core_.reset();
    pool_.reset();
  }

  // A put batch of `keys` (value: key + 1000) from "device" memory.
  Status PutFromDevice(const std::vector<uint64_t>& keys) {
    std::vector<uint64_t> values = ValuesOf(keys);
    return core_->Put(reinterpret_cast<const uint8_t*>(keys.data()),
                      reinterpret_cast<const uint8_t*>(values.data()), keys.size(),
                      logged::BatchMemory::kDevice);
  }
  static std::vector<uint64_t> ValuesOf(const std::vector<uint64_t>& keys) {
    std::vector<uint64_t> values;
    for (uint64_t key : keys) values.push_back(key + 1000);
    return values;
  }
  // Gets `keys` through the core: its status, *found the keys found.
  Status Get(const std::vector<uint64_t>& keys, std::vector<uint8_t>* found) {
    std::vector<uint64_t> values(keys.size());
    found->assign(keys.size(), 0);
    return core_->Get(ConstBytes(keys.data(), keys.size() * 8),
                      MutableBytes(values.data(), values.size() * 8),
                      MutableBytes(found->data(), found->size()), BatchOptions());
  }

  logged::Core& core() { return *core_; }
  HostRecordWriter& writer() { return *writer_; }
  const std::string& path() const { return temp_.path(); }

 private:
  testutil::TempPool temp_;
  std::unique_ptr<pm::Pool> pool_;
  tables::OpenContext context_;
  std::unique_ptr<logged::Core> core_;
  HostRecordWriter* writer_ = nullptr;
};

// The pairs of the pool's table "h", opened through the engine.
std::map<uint64_t, uint64_t> Reopened(const std::string& path) {
  std::map<uint64_t, uint64_t> pairs;
  auto db = DB::Open(path, PoolOptions());
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return pairs;
  auto table = (*db)->OpenTable("h");
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return pairs;
  EXPECT_TRUE((*table)
                  ->Scan([&](const uint8_t* key, const uint8_t* value) {
                    uint64_t k = 0, v = 0;
                    std::memcpy(&k, key, 8);
                    std::memcpy(&v, value, 8);
                    pairs[k] = v;
                    return true;
                  })
                  .ok());
  return pairs;
}

std::vector<uint64_t> Keys(uint64_t first, uint64_t count) {
  std::vector<uint64_t> keys;
  for (uint64_t key = first; key < first + count; ++key) keys.push_back(key);
  return keys;
}

TEST(GphashLoggedDeviceBatch, WritesTheBytesOfHostBatchesThroughCheckpoints) {
  // 100 batches of 10 (every fifth an erase batch) into a log whose halves
  // hold about 22 of them: checkpoints start and are published behind them
  // on both paths (their images written inline, so that both publish at the
  // same batches).
  logged::TEST_WriteImagesInline(true);
  std::vector<uint8_t> bytes[2];
  for (int side = 0; side < 2; ++side) {
    std::map<uint64_t, uint64_t> oracle;
    DeviceBatchCore table(side == 0 ? "devbatch-bytes-host" : "devbatch-bytes-device");
    table.Open();
    if (HasFatalFailure()) return;
    for (uint64_t batch = 0; batch < 100; ++batch) {
      const std::vector<uint64_t> keys = Keys(batch * 7, 10);
      const std::vector<uint64_t> values = DeviceBatchCore::ValuesOf(keys);
      const auto memory = side == 0 ? logged::BatchMemory::kHost : logged::BatchMemory::kDevice;
      if (batch % 5 == 4) {
        std::vector<uint8_t> erased(keys.size());
        ASSERT_TRUE(table.core()
                        .Erase(reinterpret_cast<const uint8_t*>(keys.data()), erased.data(),
                               keys.size(), memory)
                        .ok());
        for (size_t i = 0; i < keys.size(); ++i) {
          EXPECT_EQ(erased[i], oracle.erase(keys[i])) << keys[i];
        }
        continue;
      }
      ASSERT_TRUE(table.core()
                      .Put(reinterpret_cast<const uint8_t*>(keys.data()),
                           reinterpret_cast<const uint8_t*>(values.data()), keys.size(), memory)
                      .ok());
      for (size_t i = 0; i < keys.size(); ++i) oracle[keys[i]] = values[i];
    }
    auto stats = table.core().Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_GE(stats->checkpoints, 2u);
    EXPECT_EQ(stats->write_phases.batches, 100u);
    EXPECT_GE(
        stats->write_phases.total_ns,
        stats->write_phases.record_ns + stats->write_phases.sync_ns + stats->write_phases.index_ns);
    table.Close();
    bytes[side] = testutil::LoggedTableBytes(table.path());
    EXPECT_EQ(Reopened(table.path()), oracle);
  }
  logged::TEST_WriteImagesInline(false);
  ASSERT_EQ(bytes[0].size(), bytes[1].size());
  EXPECT_TRUE(bytes[0] == bytes[1]) << "device batches wrote other bytes than host batches";
}

TEST(GphashLoggedDeviceBatch, ReadersWaitUntilTheBatchIsDurable) {
  DeviceBatchCore table("devbatch-gate");
  table.Open();
  if (HasFatalFailure()) return;
  const std::vector<uint64_t> keys = Keys(1, 8);
  table.writer().Hold();
  Status written;
  std::thread writer([&] { written = table.PutFromDevice(keys); });
  // The batch is in the index; its record is not yet published.
  table.writer().AwaitWaiting();
  std::atomic<bool> read{false};
  std::vector<uint8_t> found;
  Status got;
  std::thread reader([&] {
    got = table.Get(keys, &found);
    read = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(read.load()) << "a reader saw the index while the batch was not durable";
  table.writer().Release();
  writer.join();
  reader.join();
  ASSERT_TRUE(written.ok()) << written.ToString();
  ASSERT_TRUE(got.ok()) << got.ToString();
  EXPECT_EQ(found, std::vector<uint8_t>(keys.size(), 1));
  table.Close();
}

// A device batch that fails after its index apply (its record's copy or the
// pool's Sync): the call fails, the table refuses reads and writes, and a
// reopen holds every acknowledged batch.
void ExpectBrokenUntilReopened(bool copy_fails) {
  DeviceBatchCore table(copy_fails ? "devbatch-copy-fails" : "devbatch-sync-fails");
  table.Open();
  if (::testing::Test::HasFatalFailure()) return;
  const std::vector<uint64_t> first = Keys(1, 10), second = Keys(100, 10), failed = Keys(200, 5);
  ASSERT_TRUE(table.PutFromDevice(first).ok());
  ASSERT_TRUE(table.PutFromDevice(second).ok());
  if (copy_fails) {
    logged::TEST_FailNextDeviceRecords(1);
  } else {
    pm::TEST_FailNextSyncs(1);
  }
  const Status status = table.PutFromDevice(failed);
  logged::TEST_FailNextDeviceRecords(0);
  pm::TEST_FailNextSyncs(0);
  EXPECT_TRUE(status.IsIOError()) << status.ToString();
  std::vector<uint8_t> found;
  const Status get = table.Get(first, &found);
  EXPECT_TRUE(get.IsIOError()) << get.ToString();
  EXPECT_NE(get.message().find("refuses reads and writes until it is reopened"), std::string::npos)
      << get.message();
  EXPECT_FALSE(table.core().Scan([](const uint8_t*, const uint8_t*) { return true; }).ok());
  EXPECT_FALSE(table.PutFromDevice(Keys(300, 2)).ok());
  std::vector<uint64_t> host_keys = {400}, host_values = {401};
  EXPECT_FALSE(table.core()
                   .Put(reinterpret_cast<const uint8_t*>(host_keys.data()),
                        reinterpret_cast<const uint8_t*>(host_values.data()), 1)
                   .ok());
  table.Close();
  const std::map<uint64_t, uint64_t> pairs = Reopened(table.path());
  for (const auto* keys : {&first, &second}) {
    for (uint64_t key : *keys) {
      auto it = pairs.find(key);
      ASSERT_NE(it, pairs.end()) << "acknowledged key " << key << " lost";
      EXPECT_EQ(it->second, key + 1000);
    }
  }
  // A record whose copy failed was never published; a failed Sync's record
  // may or may not have reached the pool (here it did: the failure is
  // injected after the msync).
  const size_t failed_found = pairs.count(failed[0]);
  EXPECT_EQ(failed_found, copy_fails ? 0u : 1u);
  EXPECT_EQ(pairs.size(), first.size() + second.size() + failed_found * failed.size());
  auto report = recovery::VerifyPool(table.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
}

TEST(GphashLoggedDeviceBatch, AFailedRecordCopyBreaksReadsAndWritesUntilReopened) {
  ExpectBrokenUntilReopened(/*copy_fails=*/true);
}

TEST(GphashLoggedDeviceBatch, AFailedSyncBreaksReadsAndWritesUntilReopened) {
  ExpectBrokenUntilReopened(/*copy_fails=*/false);
}

}  // namespace
}  // namespace gpkv
