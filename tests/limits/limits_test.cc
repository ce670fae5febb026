// The edges of the API and of the pool: a full pool, bad spans and sizes,
// unknown tables, files that cannot be written, files of a newer format.
// Each case must give a clear Status (never a crash), leave the pool
// verifiable and keep the data written before.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "recovery/verify.h"
#include "test_util.h"

namespace gpkv {
namespace {

Options CreateOptions(uint64_t size) {
  Options options;
  options.create_if_missing = true;
  options.pool_size = size;
  options.backend = Backend::kCpu;
  options.cpu_threads = 2;
  return options;
}

std::vector<uint8_t> ValuesFor(const std::vector<uint64_t>& keys, uint32_t value_size,
                               uint64_t salt) {
  std::vector<uint8_t> values(keys.size() * value_size);
  for (size_t i = 0; i < keys.size(); ++i) {
    for (uint32_t b = 0; b < value_size; ++b) {
      values[i * value_size + b] = static_cast<uint8_t>((keys[i] * 131 + b * 7 + salt) >> 3);
    }
  }
  return values;
}

// Options of a table that fits the small pools of these tests.
TableOptions SmallTable() {
  TableOptions options;
  options.expected_keys = 1024;
  return options;
}

void ExpectVerifiesClean(const std::string& path) {
  auto report = recovery::VerifyPool(path, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->HasCorruption()) << report->findings[0].message;
}

// Fills a table until the pool is full; returns the acknowledged keys.
struct FillResult {
  std::vector<uint64_t> acknowledged;
  std::vector<uint64_t> failed_batch;
  Status last;
  uint64_t batches = 0;
};

FillResult FillUntilFull(Table& table, uint32_t batch, uint64_t first_key) {
  FillResult result;
  const uint32_t value_size = table.options().value_size;
  for (uint64_t b = 0; b < 100000; ++b) {
    std::vector<uint64_t> keys(batch);
    for (uint32_t i = 0; i < batch; ++i) keys[i] = first_key + b * batch + i;
    result.last = table.Put(keys, ValuesFor(keys, value_size, 1));
    if (!result.last.ok()) {
      result.failed_batch = keys;
      break;
    }
    ++result.batches;
    result.acknowledged.insert(result.acknowledged.end(), keys.begin(), keys.end());
  }
  return result;
}

// Checks that every acknowledged key holds its value and every key of the
// failed batch is either applied (with its value) or absent.
void ExpectFillIntact(Table& table, const FillResult& fill, uint64_t* applied_of_failed) {
  const uint32_t value_size = table.options().value_size;
  std::vector<uint8_t> got(fill.acknowledged.size() * value_size);
  std::vector<uint8_t> found(fill.acknowledged.size());
  ASSERT_TRUE(table.Get(fill.acknowledged, got, found).ok());
  EXPECT_EQ(got, ValuesFor(fill.acknowledged, value_size, 1));
  EXPECT_EQ(std::count(found.begin(), found.end(), 1), static_cast<long>(found.size()));
  std::vector<uint8_t> failed_got(fill.failed_batch.size() * value_size);
  std::vector<uint8_t> failed_found(fill.failed_batch.size());
  ASSERT_TRUE(table.Get(fill.failed_batch, failed_got, failed_found).ok());
  std::vector<uint8_t> want = ValuesFor(fill.failed_batch, value_size, 1);
  *applied_of_failed = 0;
  for (size_t i = 0; i < fill.failed_batch.size(); ++i) {
    if (!failed_found[i]) continue;
    ++*applied_of_failed;
    EXPECT_EQ(0, std::memcmp(&failed_got[i * value_size], &want[i * value_size], value_size))
        << "key " << fill.failed_batch[i] << " of the failed batch holds a torn value";
  }
}

class PoolFull : public ::testing::TestWithParam<uint32_t> {};

TEST_P(PoolFull, IsPoolFullKeepsDataVerifiesAndTheTableWorksAfterErases) {
  const uint32_t value_size = GetParam();
  testutil::TempPool temp("full-" + std::to_string(value_size));
  auto db = DB::Open(temp.path(), CreateOptions(4 << 20));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions options;
  options.value_size = value_size;
  options.expected_keys = 256;
  auto table = (*db)->CreateTable("fill", options);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  FillResult fill = FillUntilFull(**table, 1024, 1);
  ASSERT_TRUE(fill.last.IsPoolFull()) << fill.last.ToString();
  EXPECT_NE(fill.last.message().find(temp.path()), std::string::npos) << fill.last.ToString();
  ASSERT_GT(fill.acknowledged.size(), 1000u);
  uint64_t applied_of_failed = 0;
  ExpectFillIntact(**table, fill, &applied_of_failed);

  // Full stays full, and says so again; nothing half-done is left behind.
  std::vector<uint64_t> more(4096);
  for (size_t i = 0; i < more.size(); ++i) more[i] = (uint64_t{1} << 40) + i;
  Status again = (*table)->Put(more, ValuesFor(more, value_size, 1));
  EXPECT_TRUE(again.IsPoolFull() || again.ok()) << again.ToString();
  TableOptions other = SmallTable();
  auto extra = (*db)->CreateTable("one-too-many", other);
  EXPECT_TRUE(extra.ok() || extra.status().IsPoolFull()) << extra.status().ToString();

  // After erasing half of the keys the table takes new ones again.
  std::vector<uint64_t> erase(fill.acknowledged.begin(),
                              fill.acknowledged.begin() + fill.acknowledged.size() / 2);
  std::vector<uint8_t> erased(erase.size());
  ASSERT_TRUE((*table)->Erase(erase, erased).ok());
  EXPECT_EQ(std::count(erased.begin(), erased.end(), 1), static_cast<long>(erase.size()));
  std::vector<uint64_t> fresh(1024);
  for (size_t i = 0; i < fresh.size(); ++i) fresh[i] = (uint64_t{1} << 41) + i;
  Status refill = (*table)->Put(fresh, ValuesFor(fresh, value_size, 2));
  ASSERT_TRUE(refill.ok()) << refill.ToString();
  std::vector<uint8_t> got(fresh.size() * value_size), found(fresh.size());
  ASSERT_TRUE((*table)->Get(fresh, got, found).ok());
  EXPECT_EQ(got, ValuesFor(fresh, value_size, 2));
  std::printf(
      "[crash totals] pool full (value size %u): %zu keys acknowledged in %llu batches "
      "before PoolFull, %llu of the failed batch applied, 0 acknowledged writes lost\n",
      value_size, fill.acknowledged.size(), static_cast<unsigned long long>(fill.batches),
      static_cast<unsigned long long>(applied_of_failed));
  db->reset();
  ExpectVerifiesClean(temp.path());

  // And the data is still there after a reopen.
  auto reopened = DB::Open(temp.path(), CreateOptions(4 << 20));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto again_table = (*reopened)->OpenTable("fill");
  ASSERT_TRUE(again_table.ok());
  std::vector<uint64_t> kept(fill.acknowledged.begin() + fill.acknowledged.size() / 2,
                             fill.acknowledged.end());
  std::vector<uint8_t> kept_got(kept.size() * value_size), kept_found(kept.size());
  ASSERT_TRUE((*again_table)->Get(kept, kept_got, kept_found).ok());
  EXPECT_EQ(kept_got, ValuesFor(kept, value_size, 1));
}

INSTANTIATE_TEST_SUITE_P(ValueSizes, PoolFull, ::testing::Values(8u, 100u),
                         [](const auto& info) { return "value" + std::to_string(info.param); });

TEST(PoolFullCatalog, CreatingTablesUntilFullIsPoolFullAndKeepsTheOthers) {
  testutil::TempPool temp("full-catalog");
  auto db = DB::Open(temp.path(), CreateOptions(2 << 20));
  ASSERT_TRUE(db.ok());
  TableOptions options;
  options.expected_keys = 512;
  int created = 0;
  Status last;
  for (int i = 0; i < 2000; ++i) {
    auto table = (*db)->CreateTable("t" + std::to_string(i), options);
    if (!table.ok()) {
      last = table.status();
      break;
    }
    std::vector<uint64_t> keys = {static_cast<uint64_t>(i)}, values = {uint64_t(i) * 3};
    Status put = (*table)->Put(keys, values);
    if (!put.ok()) {
      last = put;
      break;
    }
    ++created;
  }
  ASSERT_TRUE(last.IsPoolFull()) << last.ToString();
  ASSERT_GT(created, 2);
  auto listed = (*db)->ListTables();
  ASSERT_TRUE(listed.ok());
  EXPECT_GE(static_cast<int>(listed->size()), created);
  for (int i = 0; i < created; ++i) {
    auto table = (*db)->OpenTable("t" + std::to_string(i));
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    std::vector<uint64_t> keys = {static_cast<uint64_t>(i)}, got(1);
    std::vector<uint8_t> found(1);
    ASSERT_TRUE((*table)->Get(keys, got, found).ok());
    EXPECT_EQ(found[0], 1);
    EXPECT_EQ(got[0], uint64_t(i) * 3);
  }
  // Dropping one makes room for another.
  ASSERT_TRUE((*db)->DropTable("t0").ok());
  ASSERT_TRUE((*db)->DropTable("t1").ok());
  EXPECT_TRUE((*db)->CreateTable("after-drop", options).ok());
  db->reset();
  ExpectVerifiesClean(temp.path());
}

class Spans : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = DB::Open(temp_.path(), CreateOptions(8 << 20));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    TableOptions options = SmallTable();
    options.key_size = 16;
    options.value_size = 24;
    auto table = db_->CreateTable("wide", options);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    table_ = *table;
  }
  testutil::TempPool temp_{"spans"};
  std::unique_ptr<DB> db_;
  Table* table_ = nullptr;
};

TEST_F(Spans, KeyBytesNotAMultipleOfTheKeySizeAreInvalidArgument) {
  std::vector<uint8_t> keys(24), values(24);  // 1.5 keys of 16 bytes
  Status put = table_->Put(keys, values);
  EXPECT_TRUE(put.IsInvalidArgument()) << put.ToString();
  EXPECT_NE(put.message().find("key size 16"), std::string::npos) << put.ToString();
  std::vector<uint8_t> out(24), found(1);
  EXPECT_TRUE(table_->Get(keys, out, found).IsInvalidArgument());
  EXPECT_TRUE(table_->Erase(keys).IsInvalidArgument());
  std::vector<uint8_t> eight(8), eight_values(24);  // an 8-byte key on a 16-byte table
  EXPECT_TRUE(table_->Put(eight, eight_values).IsInvalidArgument());
}

TEST_F(Spans, MismatchedValueFoundAndErasedSpansAreInvalidArgument) {
  std::vector<uint8_t> keys(32, 1);  // 2 keys
  keys[16] = 2;
  std::vector<uint8_t> short_values(47), long_values(49), values(48);
  EXPECT_TRUE(table_->Put(keys, short_values).IsInvalidArgument());
  EXPECT_TRUE(table_->Put(keys, long_values).IsInvalidArgument());
  ASSERT_TRUE(table_->Put(keys, values).ok());
  std::vector<uint8_t> found_short(1), found_long(3), found(2);
  EXPECT_TRUE(table_->Get(keys, values, found_short).IsInvalidArgument());
  EXPECT_TRUE(table_->Get(keys, values, found_long).IsInvalidArgument());
  EXPECT_TRUE(table_->Get(keys, short_values, found).IsInvalidArgument());
  EXPECT_TRUE(table_->Get(keys, values, found).ok());
  EXPECT_TRUE(table_->Get(keys, values, {}).ok());  // found is optional
  std::vector<uint8_t> erased_short(1);
  EXPECT_TRUE(table_->Erase(keys, erased_short).IsInvalidArgument());
  // The failed calls changed nothing.
  std::vector<uint8_t> got(48, 0xee);
  ASSERT_TRUE(table_->Get(keys, got, found).ok());
  EXPECT_EQ(found, std::vector<uint8_t>({1, 1}));
  EXPECT_EQ(got, values);
}

TEST_F(Spans, NullSpansWithASizeAreInvalidArgumentAndEmptyBatchesAreOk) {
  std::vector<uint8_t> keys(16), values(24), found(1);
  EXPECT_TRUE(table_->Put(ConstBytes(nullptr, 16), values).IsInvalidArgument());
  EXPECT_TRUE(table_->Put(keys, ConstBytes(nullptr, 24)).IsInvalidArgument());
  EXPECT_TRUE(table_->Get(keys, MutableBytes(nullptr, 24), found).IsInvalidArgument());
  EXPECT_TRUE(table_->Get(keys, values, MutableBytes(nullptr, 1)).IsInvalidArgument());
  EXPECT_TRUE(table_->Erase(ConstBytes(nullptr, 16)).IsInvalidArgument());
  EXPECT_TRUE(table_->Erase(keys, MutableBytes(nullptr, 1)).IsInvalidArgument());
  EXPECT_TRUE(table_->Put(ConstBytes(), ConstBytes()).ok());
  EXPECT_TRUE(table_->Get(ConstBytes(), MutableBytes(), MutableBytes()).ok());
  EXPECT_TRUE(table_->Erase(ConstBytes()).ok());
  auto stats = table_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, 0u);
}

TEST_F(Spans, UnknownTablesAreNotFoundNamingThem) {
  auto missing = db_->OpenTable("no-such-table");
  ASSERT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("no-such-table"), std::string::npos);
  EXPECT_TRUE(db_->DropTable("no-such-table").IsNotFound());
  ASSERT_TRUE(db_->DropTable("wide").ok());
  table_ = nullptr;
  EXPECT_TRUE(db_->OpenTable("wide").status().IsNotFound());
}

TEST_F(Spans, BadTableOptionsAreInvalidArgument) {
  auto bad = [&](const std::function<void(TableOptions&)>& change) {
    TableOptions options = SmallTable();
    change(options);
    return db_->CreateTable("bad", options).status();
  };
  EXPECT_TRUE(bad([](TableOptions& o) { o.key_size = 0; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.key_size = 64; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.value_size = 1000; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.hash.levels = 0; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.hash.levels = 5; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.hash.hash_locations = 0; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.hash.hash_locations = 5; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.hash.slots_per_bucket = 6; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.hash.initial_top_buckets = 3; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](TableOptions& o) { o.kind = static_cast<TableKind>(9); }).IsInvalidArgument());
  EXPECT_TRUE(db_->CreateTable(std::string("a\0b", 3), SmallTable()).status().IsInvalidArgument());
  EXPECT_TRUE(db_->CreateTable(std::string(63, 'n'), SmallTable()).ok());  // the longest name
  auto listed = db_->ListTables();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u);  // "wide" and the 63-byte name; no "bad"
}

// Runs `body` as an unprivileged user (root opens a 0444 file for writing).
// Returns the exit code of body (0 = its expectations held).
int RunUnprivileged(const std::function<int()>& body) {
  if (geteuid() != 0) return body();
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(90);
    omp_set_num_threads(1);  // libgomp's thread pool does not survive fork
    _exit(body());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ReadOnlyFile, WritableOpenIsAClearErrorAndReadOnlyOpenWorks) {
  testutil::TempPool temp("ro-file");
  std::vector<uint64_t> keys = {5, 6}, values = {50, 60};
  {
    auto db = DB::Open(temp.path(), CreateOptions(4 << 20));
    ASSERT_TRUE(db.ok());
    auto table = (*db)->CreateTable("t", SmallTable());
    ASSERT_TRUE(table.ok());
    ASSERT_TRUE((*table)->Put(keys, values).ok());
  }
  ASSERT_EQ(chmod(temp.path().c_str(), 0444), 0);
  const std::string path = temp.path();
  int code = RunUnprivileged([&]() {
    Options options;
    options.cpu_threads = 1;  // no OpenMP team in a forked child
    auto writable = DB::Open(path, options);
    if (writable.ok()) {
      std::fprintf(stderr, "writable open of a 0444 file succeeded\n");
      return 1;
    }
    const Status& status = writable.status();
    if (!status.IsIOError() && !status.IsInvalidArgument()) {
      std::fprintf(stderr, "writable open of a 0444 file: %s\n", status.ToString().c_str());
      return 2;
    }
    if (status.message().find(path) == std::string::npos) {
      std::fprintf(stderr, "error does not name the file: %s\n", status.ToString().c_str());
      return 3;
    }
    Options read_only = options;
    read_only.read_only = true;
    auto db = DB::Open(path, read_only);
    if (!db.ok()) {
      std::fprintf(stderr, "read-only open: %s\n", db.status().ToString().c_str());
      return 4;
    }
    auto table = (*db)->OpenTable("t");
    if (!table.ok()) return 5;
    std::vector<uint64_t> got(2);
    std::vector<uint8_t> found(2);
    if (!(*table)->Get(keys, got, found).ok() || got != values) return 6;
    if (!(*table)->Put(keys, values).IsInvalidArgument()) return 7;
    if (!(*table)->Erase(keys).IsInvalidArgument()) return 8;
    if (!(*db)->DropTable("t").IsInvalidArgument()) return 9;
    auto report = recovery::VerifyPool(path, nullptr);
    if (!report.ok() || report->HasCorruption()) return 10;
    return 0;
  });
  EXPECT_EQ(code, 0) << "see stderr of the unprivileged child";
  ASSERT_EQ(chmod(temp.path().c_str(), 0644), 0);
}

TEST(FormatVersion, APoolFromANewerFormatIsUnsupported) {
  testutil::TempPool temp("newer");
  {
    auto db = DB::Open(temp.path(), CreateOptions(4 << 20));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->CreateTable("t", SmallTable()).ok());
  }
  testutil::WriteBytes<uint32_t>(temp.path(), offsetof(format::PoolHeader, format_version),
                                 format::kFormatVersion + 1);
  for (bool read_only : {false, true}) {
    Options options;
    options.read_only = read_only;
    auto db = DB::Open(temp.path(), options);
    ASSERT_TRUE(db.status().IsUnsupported()) << db.status().ToString();
    EXPECT_NE(db.status().message().find("format version"), std::string::npos);
    EXPECT_NE(db.status().message().find(temp.path()), std::string::npos);
  }
  // Verify says so (it cannot check what it does not understand) and the
  // tool does not call the pool fine.
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->findings.empty());
  ASSERT_TRUE(std::filesystem::exists(GPKV_TOOL_PATH)) << GPKV_TOOL_PATH << ": build gpkv_tool";
  std::string command = std::string(GPKV_TOOL_PATH) + " verify " + temp.path() + " >/dev/null 2>&1";
  int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_TRUE(WEXITSTATUS(status) == 2 || WEXITSTATUS(status) == 3)
      << "gpkv verify of a newer-format pool exits " << WEXITSTATUS(status);
}

TEST(OddFiles, TruncatedEmptyDirectoryAndTooSmallAreClearErrors) {
  testutil::TempPool temp("odd");
  {
    auto db = DB::Open(temp.path(), CreateOptions(4 << 20));
    ASSERT_TRUE(db.ok());
  }
  ASSERT_EQ(truncate(temp.path().c_str(), 2 << 20), 0);
  auto truncated = DB::Open(temp.path(), Options{});
  ASSERT_TRUE(truncated.status().IsCorruption()) << truncated.status().ToString();
  EXPECT_NE(truncated.status().message().find("file size"), std::string::npos);

  ASSERT_EQ(truncate(temp.path().c_str(), 0), 0);
  EXPECT_TRUE(DB::Open(temp.path(), Options{}).status().IsCorruption());

  std::string directory = temp.path() + ".dir";
  std::filesystem::create_directory(directory);
  auto dir = DB::Open(directory, Options{});
  EXPECT_TRUE(dir.status().IsInvalidArgument() || dir.status().IsIOError())
      << dir.status().ToString();
  std::filesystem::remove(directory);

  testutil::TempPool small("small");
  auto tiny = DB::Open(small.path(), CreateOptions(4096));
  EXPECT_TRUE(tiny.status().IsInvalidArgument()) << tiny.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(small.path())) << "a failed create leaves no file";
}

TEST(BigBatch, OneBatchOfAMillionKeysRoundTrips) {
  testutil::TempPool temp("big");
  auto db = DB::Open(temp.path(), CreateOptions(256 << 20));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TableOptions options;
  options.expected_keys = 1024;  // resizes many times inside one batch
  auto table = (*db)->CreateTable("big", options);
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> keys(1 << 20), values(1 << 20);
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = i * 0x9e3779b97f4a7c15ULL;  // includes key 0
    values[i] = ~keys[i];
  }
  ASSERT_TRUE((*table)->Put(keys, values).ok());
  std::vector<uint64_t> got(keys.size());
  std::vector<uint8_t> found(keys.size());
  ASSERT_TRUE((*table)->Get(keys, got, found).ok());
  EXPECT_EQ(got, values);
  auto stats = (*table)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->keys, keys.size());
  EXPECT_GT(stats->Property("gphash.resizes").value_or(0), 0.0);
  db->reset();
  ExpectVerifiesClean(temp.path());
}

}  // namespace
}  // namespace gpkv
