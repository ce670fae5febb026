// gpkv::DB and the catalog through the public API: create / open / drop /
// list tables, reopen, batch validation and error messages, Close.
#include "gpkv/db.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/backend.h"
#include "pm/persist_hook.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv {
namespace {

Options CreateOptions(uint64_t size = 64 << 20) {
  Options options;
  options.create_if_missing = true;
  options.pool_size = size;
  options.cpu_threads = 2;
  return options;
}

TEST(DB, OpenWithoutCreateIfMissingIsNotFound) {
  testutil::TempPool temp("nf");
  auto db = DB::Open(temp.path(), Options{});
  EXPECT_TRUE(db.status().IsNotFound()) << db.status().ToString();
}

TEST(DB, ErrorIfExistsRefusesAnExistingPool) {
  testutil::TempPool temp("eie");
  ASSERT_TRUE(DB::Open(temp.path(), CreateOptions()).ok());
  Options options = CreateOptions();
  options.error_if_exists = true;
  EXPECT_TRUE(DB::Open(temp.path(), options).status().IsAlreadyExists());
}

// One writer per pool: the DB holds the pool's lock while it is open.
TEST(DB, ASecondWritableOpenOfAnOpenPoolIsBusy) {
  testutil::TempPool temp("busy");
  auto db = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto second = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(second.status().IsBusy()) << second.status().ToString();
  EXPECT_NE(second.status().message().find(temp.path()), std::string::npos);
  Options read_only;
  read_only.read_only = true;
  EXPECT_TRUE(DB::Open(temp.path(), read_only).status().IsBusy());

  db.value().reset();
  auto reader = DB::Open(temp.path(), read_only);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto another_reader = DB::Open(temp.path(), read_only);
  EXPECT_TRUE(another_reader.ok()) << another_reader.status().ToString();
  EXPECT_TRUE(DB::Open(temp.path(), CreateOptions()).status().IsBusy());
}

TEST(DB, AGpuCacheFractionOutsideZeroToOneIsInvalidArgument) {
  testutil::TempPool temp("gcf");
  for (double fraction : {-0.1, 1.5}) {
    Options options = CreateOptions();
    options.gpu_cache_fraction = fraction;
    auto db = DB::Open(temp.path(), options);
    EXPECT_TRUE(db.status().IsInvalidArgument()) << db.status().ToString();
    EXPECT_NE(db.status().message().find("gpu_cache_fraction"), std::string::npos);
  }
  Options options = CreateOptions();
  options.gpu_cache_fraction = 0;  // no BktCache: valid on every backend
  EXPECT_TRUE(DB::Open(temp.path(), options).ok());
}

// The kAuto fallback is one rule for every family: only a DB that asked for
// kAuto, and only when the GPU cannot take the table; one message says why.
TEST(Backend, OnlyAutoFallsBackToTheCpuAndOnlyWhenTheGpuCannotTakeTheTable) {
  const Status no_device = Status::Unsupported("no usable CUDA device: none");
  const Status no_memory = Status::OutOfDeviceMemory("cudaMalloc: out of device memory");
  EXPECT_TRUE(engine::FallsBackToCpu(Backend::kAuto, no_device));
  EXPECT_TRUE(engine::FallsBackToCpu(Backend::kAuto, no_memory));
  EXPECT_FALSE(engine::FallsBackToCpu(Backend::kCuda, no_device));
  EXPECT_FALSE(engine::FallsBackToCpu(Backend::kCuda, no_memory));
  EXPECT_FALSE(engine::FallsBackToCpu(Backend::kAuto, Status::Corruption("pool: bad root")));
  EXPECT_FALSE(engine::FallsBackToCpu(Backend::kAuto, Status::IOError("pool: read")));
  const std::string message = engine::FallbackMessage("pool.gpkv: table 't'", no_memory);
  EXPECT_EQ(message.rfind("pool.gpkv: table 't': runs on the CPU backend", 0), 0u) << message;
  EXPECT_NE(message.find(no_memory.message()), std::string::npos) << message;
}

// A read-only open of a table that needs recovery runs on the CPU backend,
// whatever the DB asked for: its reads answer from the recovered state.
TEST(Backend, ATableThatNeedsRecoveryOnAReadOnlyPoolFallsBackToTheCpu) {
  const Status needs_recovery = Status::NeedsRecovery("pool: table 't' root: needs recovery");
  EXPECT_TRUE(engine::FallsBackToCpu(Backend::kAuto, needs_recovery));
  EXPECT_TRUE(engine::FallsBackToCpu(Backend::kCuda, needs_recovery));
  const std::string message = engine::FallbackMessage("pool.gpkv: table 't'", needs_recovery);
  EXPECT_EQ(message.rfind("pool.gpkv: table 't': runs on the CPU backend", 0), 0u) << message;
  EXPECT_NE(message.find("needs recovery"), std::string::npos) << message;
}

TEST(DB, TableStatsNameTheBackendThatRunsTheTable) {
  testutil::TempPool temp("stats-backend");
  Options options = CreateOptions();
  options.backend = Backend::kCpu;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("t", TableOptions{});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->backend, "cpu");
  EXPECT_EQ(stats->fallback, "");  // the DB asked for the CPU: nothing fell back
}

TEST(DB, ANegativeCopyThreadsIsInvalidArgument) {
  testutil::TempPool temp("copy-threads");
  Options options = CreateOptions();
  options.copy_threads = -1;
  auto db = DB::Open(temp.path(), options);
  EXPECT_TRUE(db.status().IsInvalidArgument()) << db.status().ToString();
  EXPECT_NE(db.status().message().find("copy_threads"), std::string::npos);
  options.copy_threads = 3;  // valid on every backend
  EXPECT_TRUE(DB::Open(temp.path(), options).ok());
}

// On the CPU backend RegisterHostMemory only records ranges, with the same
// errors as on CUDA; batches in registered memory answer as any others.
TEST(DB, RegisterHostMemoryChecksItsRanges) {
  testutil::TempPool temp("reg");
  Options options = CreateOptions();
  options.backend = Backend::kCpu;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  std::vector<uint64_t> keys = {1, 2, 3, 4}, values = {10, 20, 30, 40}, out(4);
  std::vector<uint8_t> found(4);
  EXPECT_TRUE((*db)->RegisterHostMemory(nullptr, 8).IsInvalidArgument());
  EXPECT_TRUE((*db)->RegisterHostMemory(keys.data(), 0).IsInvalidArgument());
  ASSERT_TRUE((*db)->RegisterHostMemory(keys.data(), keys.size() * 8).ok());
  EXPECT_TRUE((*db)->RegisterHostMemory(keys.data(), keys.size() * 8).IsInvalidArgument());
  EXPECT_TRUE((*db)->RegisterHostMemory(keys.data() + 1, 8).IsInvalidArgument());
  ASSERT_TRUE((*db)->RegisterHostMemory(out.data(), out.size() * 8).ok());
  EXPECT_TRUE((*db)->UnregisterHostMemory(values.data()).IsNotFound());
  EXPECT_TRUE((*db)->UnregisterHostMemory(keys.data() + 1).IsNotFound());
  auto table = (*db)->CreateTable("t", TableOptions{});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  ASSERT_TRUE((*table)->Get(keys, out, found).ok());
  EXPECT_EQ(out, values);
  ASSERT_TRUE((*db)->UnregisterHostMemory(keys.data()).ok());
  EXPECT_TRUE((*db)->UnregisterHostMemory(keys.data()).IsNotFound());
  ASSERT_TRUE((*db)->RegisterHostMemory(keys.data(), 8).ok());  // free again
}

TEST(DB, TablesSurviveReopenWithTheirOptionsAndContents) {
  testutil::TempPool temp("reopen");
  std::vector<uint64_t> keys = {1, 2, 3, 0, ~uint64_t{0}};
  std::vector<uint64_t> values = {10, 20, 30, 40, 50};
  {
    auto db = DB::Open(temp.path(), CreateOptions());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions options;
    options.expected_keys = 4096;
    auto users = (*db)->CreateTable("users", options);
    ASSERT_TRUE(users.ok()) << users.status().ToString();
    options.key_size = 16;
    options.value_size = 100;
    ASSERT_TRUE((*db)->CreateTable("wide", options).ok());
    ASSERT_TRUE((*users)->Put(keys, values).ok());
  }
  auto db = DB::Open(temp.path(), Options{});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto tables = (*db)->ListTables();
  ASSERT_TRUE(tables.ok());
  ASSERT_EQ(tables->size(), 2u);
  EXPECT_EQ((*tables)[0].name, "users");
  EXPECT_EQ((*tables)[1].name, "wide");
  EXPECT_EQ((*tables)[1].options.key_size, 16u);
  EXPECT_EQ((*tables)[1].options.value_size, 100u);
  auto users = (*db)->OpenTable("users");
  ASSERT_TRUE(users.ok());
  std::vector<uint64_t> got(keys.size());
  std::vector<uint8_t> found(keys.size());
  ASSERT_TRUE((*users)->Get(keys, got, found).ok());
  EXPECT_EQ(got, values);
  for (uint8_t f : found) EXPECT_EQ(f, 1);
}

TEST(DB, CreateTableTwiceIsAlreadyExists) {
  testutil::TempPool temp("twice");
  auto db = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->CreateTable("t", TableOptions{}).ok());
  EXPECT_TRUE((*db)->CreateTable("t", TableOptions{}).status().IsAlreadyExists());
}

TEST(DB, EveryTableKindAndDurabilityIsBuilt) {
  testutil::TempPool temp("kinds");
  auto db = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(db.ok());
  int created = 0;
  for (TableKind kind : {TableKind::kHash, TableKind::kOrdered}) {
    for (Durability durability : {Durability::kPersistent, Durability::kVolatile}) {
      TableOptions options;
      options.kind = kind;
      options.durability = durability;
      options.expected_keys = 1000;
      const std::string name = "t" + std::to_string(created++);
      auto table = (*db)->CreateTable(name, options);
      ASSERT_TRUE(table.ok()) << name << ": " << table.status().ToString();
      EXPECT_EQ((*table)->options().kind, kind);
      EXPECT_EQ((*table)->options().durability, durability);
    }
  }
  EXPECT_EQ((*db)->ListTables()->size(), 4u);
}

TEST(DB, BadTableOptionsAreInvalidArgument) {
  testutil::TempPool temp("badopts");
  auto db = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(db.ok());
  TableOptions options;
  options.key_size = 12;
  EXPECT_TRUE((*db)->CreateTable("k12", options).status().IsInvalidArgument());
  options = TableOptions{};
  options.value_size = 0;
  EXPECT_TRUE((*db)->CreateTable("v0", options).status().IsInvalidArgument());
  options.value_size = 129;
  EXPECT_TRUE((*db)->CreateTable("v129", options).status().IsInvalidArgument());
  EXPECT_TRUE((*db)->CreateTable("", TableOptions{}).status().IsInvalidArgument());
  EXPECT_TRUE(
      (*db)->CreateTable(std::string(64, 'x'), TableOptions{}).status().IsInvalidArgument());
}

TEST(DB, DropTableFreesItsSpaceAndForgetsIt) {
  testutil::TempPool temp("drop");
  auto db = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(db.ok());
  uint64_t used_before = (*db)->Info()->used_bytes;
  ASSERT_TRUE((*db)->CreateTable("t", TableOptions{}).ok());
  EXPECT_GT((*db)->Info()->used_bytes, used_before);
  ASSERT_TRUE((*db)->DropTable("t").ok());
  EXPECT_TRUE((*db)->OpenTable("t").status().IsNotFound());
  EXPECT_TRUE((*db)->DropTable("t").IsNotFound());
  // Only the (empty) catalog remains.
  EXPECT_LE((*db)->Info()->used_bytes, used_before + 4096);
  db->reset();
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->findings.empty()) << report->findings[0].message;
}

TEST(Table, MismatchedSpansAreInvalidArgumentNamingTheTable) {
  testutil::TempPool temp("spans");
  auto db = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(db.ok());
  auto table = (*db)->CreateTable("users", TableOptions{});
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> keys = {1, 2, 3};
  std::vector<uint64_t> two_values = {1, 2};
  Status status = (*table)->Put(keys, two_values);
  ASSERT_TRUE(status.IsInvalidArgument());
  EXPECT_NE(status.message().find("table 'users'"), std::string::npos) << status.ToString();
  std::vector<uint8_t> seven_bytes(7);
  EXPECT_TRUE((*table)->Put(ConstBytes(seven_bytes), ConstBytes(seven_bytes)).IsInvalidArgument());
  std::vector<uint64_t> out(3);
  std::vector<uint8_t> found(2);
  EXPECT_TRUE((*table)->Get(keys, out, found).IsInvalidArgument());
  EXPECT_TRUE((*table)->Put(ConstBytes(nullptr, 8), ConstBytes(nullptr, 8)).IsInvalidArgument());
  EXPECT_TRUE((*table)->Put(ConstBytes(), ConstBytes()).ok());  // empty batch
}

TEST(DB, ReadOnlyOpenServesReadsAndRefusesWrites) {
  testutil::TempPool temp("ro");
  std::vector<uint64_t> keys = {7}, values = {70};
  {
    auto db = DB::Open(temp.path(), CreateOptions());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*(*db)->CreateTable("t", TableOptions{}))->Put(keys, values).ok());
  }
  Options options;
  options.read_only = true;
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("t");
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> got(1);
  ASSERT_TRUE((*table)->Get(keys, got, {}).ok());
  EXPECT_EQ(got[0], 70u);
  EXPECT_TRUE((*table)->Put(keys, values).IsInvalidArgument());
  EXPECT_TRUE((*db)->CreateTable("u", TableOptions{}).status().IsInvalidArgument());
}

TEST(DB, FullPoolIsPoolFullAndKeepsAcknowledgedData) {
  testutil::TempPool temp("full");
  auto db = DB::Open(temp.path(), CreateOptions(4 << 20));
  ASSERT_TRUE(db.ok());
  TableOptions options;
  options.expected_keys = 1024;
  auto table = (*db)->CreateTable("t", options);
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> acknowledged;
  Status status;
  for (uint64_t batch = 0; batch < 1000; ++batch) {
    std::vector<uint64_t> keys(1024), values(1024);
    for (uint64_t i = 0; i < 1024; ++i) keys[i] = values[i] = batch * 1024 + i + 1;
    status = (*table)->Put(keys, values);
    if (!status.ok()) break;
    acknowledged.insert(acknowledged.end(), keys.begin(), keys.end());
  }
  ASSERT_TRUE(status.IsPoolFull()) << status.ToString();
  ASSERT_FALSE(acknowledged.empty());
  std::vector<uint64_t> got(acknowledged.size());
  std::vector<uint8_t> found(acknowledged.size());
  ASSERT_TRUE((*table)->Get(acknowledged, got, found).ok());
  EXPECT_EQ(got, acknowledged);
  db->reset();
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->HasCorruption());
}

// Close through the public API: errors come back from it (a failed sync is
// injected with pm::TEST_FailNextSyncs), the DB is closed either way, and
// the data is in the pool at the next open.
class DBClose : public ::testing::Test {
 protected:
  void TearDown() override { pm::TEST_FailNextSyncs(0); }

  // Every sync of the pool fails, those the tables' destructors drop too.
  static constexpr uint64_t kEverySync = uint64_t{1} << 40;

  static std::vector<uint64_t> Keys(uint64_t first, uint64_t count) {
    std::vector<uint64_t> keys(count);
    for (uint64_t i = 0; i < count; ++i) keys[i] = first + i;
    return keys;
  }
  // Every key of `keys` reads back as its own value from table `name`.
  static void ExpectAll(const std::string& path, const std::string& name,
                        const std::vector<uint64_t>& keys) {
    Options options;
    options.cpu_threads = 2;
    auto db = DB::Open(path, options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->OpenTable(name);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    std::vector<uint64_t> got(keys.size());
    std::vector<uint8_t> found(keys.size());
    ASSERT_TRUE((*table)->Get(keys, got, found).ok());
    EXPECT_EQ(got, keys);
    ASSERT_TRUE((*db)->Close().ok());
  }
};

TEST_F(DBClose, ReportsAFailedSyncAndASecondCloseIsOk) {
  testutil::TempPool temp("close");
  auto db = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("t", TableOptions{});
  ASSERT_TRUE(table.ok());
  const std::vector<uint64_t> keys = Keys(1, 100);
  ASSERT_TRUE((*table)->Put(keys, keys).ok());
  pm::TEST_FailNextSyncs(kEverySync);
  Status closed = (*db)->Close();
  pm::TEST_FailNextSyncs(0);
  EXPECT_TRUE(closed.IsIOError()) << closed.ToString();
  EXPECT_NE(closed.message().find(temp.path()), std::string::npos) << closed.ToString();
  EXPECT_TRUE((*db)->Close().ok());
  db->reset();
  ExpectAll(temp.path(), "t", keys);
}

// An ordered table of two log halves with a checkpoint pending: Close
// publishes it, and the error of its sync comes back from DB::Close (the
// table's destructor used to drop it).
TEST_F(DBClose, ReportsTheErrorOfAnOrderedTablesPendingCheckpoint) {
  testutil::TempPool temp("close-lsm");
  Options db_options = CreateOptions();
  db_options.backend = Backend::kCpu;
  auto db = DB::Open(temp.path(), db_options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions options;
  options.kind = TableKind::kOrdered;
  options.ordered.batch_entries = 16;
  options.ordered.log_batches = 2;
  auto table = (*db)->CreateTable("o", options);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<uint64_t> written;
  bool pending = false;
  for (uint64_t batch = 0; batch < 64 && !pending; ++batch) {
    const std::vector<uint64_t> keys = Keys(1 + batch * 8, 8);  // smaller than b: logged
    ASSERT_TRUE((*table)->Put(keys, keys).ok());
    written.insert(written.end(), keys.begin(), keys.end());
    auto value = (*table)->GetProperty("lsm.checkpoint-pending");
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    pending = *value == 1;
  }
  ASSERT_TRUE(pending);
  pm::TEST_FailNextSyncs(1);  // the checkpoint's sync: the first of Close
  Status closed = (*db)->Close();
  EXPECT_TRUE(closed.IsIOError()) << closed.ToString();
  EXPECT_TRUE((*db)->Close().ok());
  db->reset();
  ExpectAll(temp.path(), "o", written);
}

TEST_F(DBClose, CallsAfterCloseAreInvalidArgument) {
  testutil::TempPool temp("closed");
  auto db = DB::Open(temp.path(), CreateOptions());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("t", TableOptions{});
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE((*db)->Close().ok());
  const std::vector<uint64_t> keys = Keys(1, 4);
  std::vector<uint64_t> got(4);
  EXPECT_TRUE((*table)->Put(keys, keys).IsInvalidArgument());
  EXPECT_TRUE((*table)->Get(keys, got, {}).IsInvalidArgument());
  EXPECT_TRUE((*table)->Erase(keys).IsInvalidArgument());
  EXPECT_TRUE((*table)->Stats().status().IsInvalidArgument());
  EXPECT_TRUE(
      (*table)->Scan([](const uint8_t*, const uint8_t*) { return true; }).IsInvalidArgument());
  EXPECT_EQ((*table)->name(), "t");
  EXPECT_TRUE((*db)->OpenTable("t").status().IsInvalidArgument());
  EXPECT_TRUE((*db)->CreateTable("u", TableOptions{}).status().IsInvalidArgument());
  EXPECT_TRUE((*db)->DropTable("t").IsInvalidArgument());
  EXPECT_TRUE((*db)->ListTables().status().IsInvalidArgument());
  EXPECT_TRUE((*db)->Info().status().IsInvalidArgument());
  EXPECT_TRUE((*db)->RegisterHostMemory(got.data(), 32).IsInvalidArgument());
}

TEST_F(DBClose, TheDestructorReportsACloseErrorToTheErrorLogger) {
  testutil::TempPool temp("close-log");
  std::vector<Status> logged;
  Options options = CreateOptions();
  options.error_logger = [&logged](const Status& status) { logged.push_back(status); };
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->CreateTable("t", TableOptions{});
  ASSERT_TRUE(table.ok());
  const std::vector<uint64_t> keys = Keys(1, 10);
  ASSERT_TRUE((*table)->Put(keys, keys).ok());
  pm::TEST_FailNextSyncs(kEverySync);
  db->reset();
  pm::TEST_FailNextSyncs(0);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_TRUE(logged[0].IsIOError()) << logged[0].ToString();
  ExpectAll(temp.path(), "t", keys);
  EXPECT_EQ(logged.size(), 1u);  // a clean close logs nothing
}

}  // namespace
}  // namespace gpkv
