// The LSM family's two backends write the same bytes and answer the same:
// the same operations through lsm::Core over cpu::CpuBackend and over
// gpu::GpuBackend on two pools give byte-identical runs, manifests (up to
// extent offsets) and logs, and the same answers to every query; a pool
// written by one opens and answers the same on the other; a damaged run is
// Corruption at the GPU's open, with an offset; keys, values and outputs may
// be device memory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "format/pool_layout.h"
#include "gpu/device_memory.h"
#include "lsm/lsm_layers.h"
#include "lsm/lsm_test_util.h"
#include "recovery/verify.h"
#include "tables/log/slots.h"
#include "tables/lsm/layout.h"
#include "tables/lsm/run.h"

namespace gpkv {
namespace {

using lsmtest::Active;
using lsmtest::Oracle;
using lsmtest::OrderedOptions;
using lsmtest::PoolOptions;
using lsmtest::ReadRoot;

#define SKIP_WITHOUT_DEVICE()                            \
  do {                                                   \
    ::gpkv::Status usable = ::gpkv::gpu::DeviceUsable(); \
    if (!usable.ok()) GTEST_SKIP() << usable.ToString(); \
  } while (0)

constexpr uint64_t kPoolSize = uint64_t{128} << 20;

std::vector<uint8_t> ReadRange(const std::string& path, uint64_t offset, uint64_t size) {
  std::vector<uint8_t> bytes(size);
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return {};
  if (::pread(fd, bytes.data(), size, static_cast<off_t>(offset)) != static_cast<ssize_t>(size)) {
    bytes.clear();
  }
  ::close(fd);
  return bytes;
}

// The root of the pool's one table, from the current superblock's catalog.
uint64_t RootOffset(const std::string& path) {
  auto a = testutil::ReadBytes<format::Superblock>(path, format::kSuperblockOffset[0]);
  auto b = testutil::ReadBytes<format::Superblock>(path, format::kSuperblockOffset[1]);
  const format::Superblock& current = a.generation > b.generation ? a : b;
  auto entry = testutil::ReadBytes<format::CatalogEntry>(
      path, current.catalog_offset + sizeof(format::CatalogHeader));
  return entry.root_offset;
}

// Keys of K bytes from small integers: the most significant word takes a few
// values, so multi-word comparisons decide on every word.
std::vector<uint8_t> MakeKeys(const std::vector<uint64_t>& ids, uint32_t key_size) {
  const uint32_t words = key_size / 8;
  std::vector<uint8_t> keys(ids.size() * key_size);
  for (size_t i = 0; i < ids.size(); ++i) {
    for (uint32_t w = 0; w < words; ++w) {
      uint64_t word = w == 0 ? ids[i] : (w == words - 1 ? ids[i] % 3 : ids[i] * 0x9e37 % 5);
      std::memcpy(&keys[i * key_size + w * 8], &word, 8);
    }
  }
  return keys;
}

std::vector<uint8_t> MakeValues(size_t n, uint32_t value_size, uint64_t seed) {
  std::vector<uint8_t> values(n * value_size);
  for (size_t i = 0; i < n; ++i) {
    testutil::SplitMix64Fill(seed * 1000003 + i, &values[i * value_size], value_size);
  }
  return values;
}

struct Shape {
  uint32_t key_size;
  uint32_t value_size;
  uint64_t batch_entries;
  uint32_t log_batches = 1;
};

// The same queries on two tables give the same answers.
void ExpectSameAnswers(Table& a, Table& b, const std::vector<uint8_t>& keys,
                       const std::vector<uint8_t>& highs, const std::string& what) {
  const uint32_t key_size = a.options().key_size;
  const uint32_t value_size = a.options().value_size;
  const size_t n = keys.size() / key_size;
  {
    std::vector<uint8_t> va(n * value_size, 0xee), vb(n * value_size, 0xdd), fa(n), fb(n);
    ASSERT_TRUE(a.Get(keys, va, fa).ok());
    ASSERT_TRUE(b.Get(keys, vb, fb).ok());
    EXPECT_EQ(fa, fb) << what << ": get found";
    EXPECT_EQ(va, vb) << what << ": get values";
  }
  {
    std::vector<uint64_t> ca(n), cb(n);
    ASSERT_TRUE(a.Count(keys, highs, ca).ok());
    ASSERT_TRUE(b.Count(keys, highs, cb).ok());
    EXPECT_EQ(ca, cb) << what << ": counts";
    Table::RangeResults ra, rb;
    ASSERT_TRUE(a.Range(keys, highs, &ra).ok());
    ASSERT_TRUE(b.Range(keys, highs, &rb).ok());
    EXPECT_EQ(ra.offsets, rb.offsets) << what << ": range offsets";
    EXPECT_EQ(ra.keys, rb.keys) << what << ": range keys";
    EXPECT_EQ(ra.values, rb.values) << what << ": range values";
  }
  for (bool successor : {true, false}) {
    std::vector<uint8_t> ka(n * key_size), kb(n * key_size), va(n * value_size), vb(n * value_size),
        fa(n), fb(n);
    if (successor) {
      ASSERT_TRUE(a.Successor(keys, ka, va, fa).ok());
      ASSERT_TRUE(b.Successor(keys, kb, vb, fb).ok());
    } else {
      ASSERT_TRUE(a.Predecessor(keys, ka, va, fa).ok());
      ASSERT_TRUE(b.Predecessor(keys, kb, vb, fb).ok());
    }
    EXPECT_EQ(fa, fb) << what << (successor ? ": successor" : ": predecessor");
    EXPECT_EQ(ka, kb) << what << (successor ? ": successor keys" : ": predecessor keys");
    EXPECT_EQ(va, vb) << what << (successor ? ": successor values" : ": predecessor values");
  }
}

// All live pairs in order, as bytes.
std::vector<uint8_t> ScanBytes(Table& table) {
  std::vector<uint8_t> out;
  const uint32_t key_size = table.options().key_size;
  const uint32_t value_size = table.options().value_size;
  EXPECT_TRUE(table
                  .Scan([&](const uint8_t* key, const uint8_t* value) {
                    out.insert(out.end(), key, key + key_size);
                    out.insert(out.end(), value, value + value_size);
                    return true;
                  })
                  .ok());
  return out;
}

// The pools' table bytes: manifests equal up to run offsets, runs (their
// filters included) and the published log byte-identical.
void ExpectSameBytes(const std::string& a, const std::string& b, const Shape& shape) {
  auto root_a = testutil::ReadBytes<lsm::LsmRoot>(a, RootOffset(a));
  auto root_b = testutil::ReadBytes<lsm::LsmRoot>(b, RootOffset(b));
  const lsm::Manifest& ma = root_a.manifests[log::ActiveIndex(root_a.active_manifest)];
  const lsm::Manifest& mb = root_b.manifests[log::ActiveIndex(root_b.active_manifest)];
  EXPECT_EQ(root_a.active_manifest, root_b.active_manifest);
  EXPECT_EQ(ma.generation, mb.generation);
  EXPECT_EQ(ma.applied_seq, mb.applied_seq);
  EXPECT_EQ(ma.log_epoch, mb.log_epoch);
  EXPECT_EQ(ma.level_count, mb.level_count);
  EXPECT_EQ(ma.compactions, mb.compactions);
  uint32_t runs = 0;
  for (uint32_t level = 0; level < lsm::kMaxLevels; ++level) {
    ASSERT_EQ(ma.levels[level].entries, mb.levels[level].entries) << "level " << level;
    ASSERT_EQ(ma.levels[level].offset == 0, mb.levels[level].offset == 0) << "level " << level;
    if (ma.levels[level].offset == 0) continue;
    ++runs;
    const uint64_t bytes =
        lsm::RunExtentBytes(ma.levels[level].entries, shape.key_size, shape.value_size);
    auto run_a = ReadRange(a, ma.levels[level].offset, bytes);
    auto run_b = ReadRange(b, mb.levels[level].offset, bytes);
    ASSERT_EQ(run_a.size(), bytes);
    EXPECT_TRUE(run_a == run_b) << "level " << level << " runs differ";
  }
  EXPECT_GE(runs, 1u);
  // Each log half up to its word (a stale half's records too: both
  // backends wrote them alike).
  EXPECT_EQ(root_a.flags, root_b.flags);
  EXPECT_EQ(ma.log_half, mb.log_half);
  const uint32_t halves = lsm::LogHalves(root_a.flags);
  const uint64_t half_capacity = root_a.log_capacity / halves;
  for (uint32_t half = 0; half < halves; ++half) {
    const uint64_t word = half == 0 ? root_a.log_word : root_a.second_log_word;
    EXPECT_EQ(word, half == 0 ? root_b.log_word : root_b.second_log_word) << "log half " << half;
    const uint64_t bytes = log::WordBytes(word);
    EXPECT_TRUE(ReadRange(a, root_a.log_offset + half * half_capacity, bytes) ==
                ReadRange(b, root_b.log_offset + half * half_capacity, bytes))
        << "log half " << half << " differs";
  }
}

// One DB per backend with the same table, and the steps the tests take on
// both: the same batches, a reopen, the pools' bytes compared, each pool
// opened on the other backend. A step's failed ASSERT is fatal to the test
// when the step is called under ASSERT_NO_FATAL_FAILURE.
struct Twin {
  testutil::TempPool cpu_pool, gpu_pool;
  std::unique_ptr<DB> cpu_db, gpu_db;
  Table* cpu = nullptr;
  Table* gpu = nullptr;
  Shape shape;

  // The GPU backend's tuning (the defaults unless a test sets others).
  OrderedGpuOptions gpu_options;

  Twin(const std::string& tag, Shape s, OrderedGpuOptions tuning = {})
      : cpu_pool(tag + "-cpu"), gpu_pool(tag + "-gpu"), shape(s), gpu_options(tuning) {
    TableOptions options = OrderedOptions(s.batch_entries, s.value_size, s.key_size);
    options.ordered.max_dead_percent = 40;
    options.ordered.log_batches = s.log_batches;
    cpu_db = Open(cpu_pool.path(), Backend::kCpu);
    gpu_db = Open(gpu_pool.path(), Backend::kCuda, gpu_options);
    cpu = *cpu_db->CreateTable("o", options);
    gpu = *gpu_db->CreateTable("o", options);
  }
  static std::unique_ptr<DB> Open(const std::string& path, Backend backend,
                                  const OrderedGpuOptions& tuning = {}) {
    Options options = PoolOptions(kPoolSize, 2, backend);
    options.ordered_gpu = tuning;
    auto db = DB::Open(path, options);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }
  // Both tables are open.
  bool ok() const { return cpu != nullptr && gpu != nullptr; }
  void Reopen() {
    Close();
    cpu_db = Open(cpu_pool.path(), Backend::kCpu);
    gpu_db = Open(gpu_pool.path(), Backend::kCuda, gpu_options);
    cpu = *cpu_db->OpenTable("o");
    gpu = *gpu_db->OpenTable("o");
  }
  void Close() {
    cpu = gpu = nullptr;
    cpu_db.reset();
    gpu_db.reset();
  }

  void Put(const std::vector<uint8_t>& keys, const std::vector<uint8_t>& values,
           const std::string& what) {
    ASSERT_TRUE(cpu->Put(keys, values).ok()) << what;
    ASSERT_TRUE(gpu->Put(keys, values).ok()) << what;
  }
  // Both say alike which keys they erased.
  void Erase(const std::vector<uint8_t>& keys, const std::string& what) {
    const size_t n = keys.size() / shape.key_size;
    std::vector<uint8_t> ea(n, 9), eb(n, 7);
    ASSERT_TRUE(cpu->Erase(keys, ea).ok()) << what;
    ASSERT_TRUE(gpu->Erase(keys, eb).ok()) << what;
    EXPECT_EQ(ea, eb) << what << ": erased flags";
  }
  void Write(const std::vector<uint8_t>& keys, const std::vector<uint8_t>& values,
             const std::vector<uint8_t>& ops, const std::string& what) {
    const size_t n = ops.size();
    std::vector<uint8_t> ea(n, 9), eb(n, 7);
    ASSERT_TRUE(cpu->Write(keys, values, ops, ea).ok()) << what;
    ASSERT_TRUE(gpu->Write(keys, values, ops, eb).ok()) << what;
    EXPECT_EQ(ea, eb) << what << ": erased flags";
  }
  void Compact(const std::string& what) {
    ASSERT_TRUE(cpu->Compact().ok()) << what;
    ASSERT_TRUE(gpu->Compact().ok()) << what;
  }

  // The two pools' table bytes are alike (ExpectSameBytes), read while the
  // tables are open (what a batch's return left in the pool) or closed.
  void ExpectSamePoolBytes() const { ExpectSameBytes(cpu_pool.path(), gpu_pool.path(), shape); }
  void CloseAndExpectSameBytes() {
    Close();
    ExpectSamePoolBytes();
  }
  // The closed pools, each opened on the other backend.
  struct Crossed {
    std::unique_ptr<DB> cpu_pool_db, gpu_pool_db;
    Table* cpu_pool_on_gpu = nullptr;
    Table* gpu_pool_on_cpu = nullptr;
  };
  void OpenCrossed(Crossed* crossed) const {
    crossed->cpu_pool_db = Open(cpu_pool.path(), Backend::kCuda);
    crossed->gpu_pool_db = Open(gpu_pool.path(), Backend::kCpu);
    ASSERT_TRUE(crossed->cpu_pool_db != nullptr && crossed->gpu_pool_db != nullptr);
    crossed->cpu_pool_on_gpu = *crossed->cpu_pool_db->OpenTable("o");
    crossed->gpu_pool_on_cpu = *crossed->gpu_pool_db->OpenTable("o");
  }
};

class LsmCrossBackend : public ::testing::TestWithParam<Shape> {};

TEST_P(LsmCrossBackend, SameOperationsWriteTheSameBytesAndAnswerTheSame) {
  SKIP_WITHOUT_DEVICE();
  const Shape shape = GetParam();
  Twin twin("lsm-cross-" + std::to_string(shape.key_size) + "-" + std::to_string(shape.value_size),
            shape);
  ASSERT_TRUE(twin.ok());
  std::mt19937_64 random(77 + shape.key_size + shape.value_size);
  constexpr uint64_t kSpace = 20000;
  for (int round = 0; round < 160; ++round) {
    const int kind = static_cast<int>(random() % 100);
    size_t n = random() % 3 == 0 ? 1 + random() % (3 * shape.batch_entries) : 1 + random() % 40;
    std::vector<uint64_t> ids(n);
    for (uint64_t& id : ids) id = random() % kSpace;
    const std::vector<uint8_t> keys = MakeKeys(ids, shape.key_size);
    const std::string what = "round " + std::to_string(round);
    if (kind < 50) {
      ASSERT_NO_FATAL_FAILURE(twin.Put(keys, MakeValues(n, shape.value_size, round), what));
    } else if (kind < 75) {
      ASSERT_NO_FATAL_FAILURE(twin.Erase(keys, what));
    } else if (kind < 95) {
      std::vector<uint64_t> high_ids(n);
      for (size_t i = 0; i < n; ++i) high_ids[i] = ids[i] + random() % 64;
      ExpectSameAnswers(*twin.cpu, *twin.gpu, keys, MakeKeys(high_ids, shape.key_size), what);
    } else if (kind < 97) {
      ASSERT_NO_FATAL_FAILURE(twin.Compact(what));
    } else {
      twin.Reopen();
    }
    if (HasFailure()) return;
  }
  EXPECT_EQ(ScanBytes(*twin.cpu), ScanBytes(*twin.gpu));
  auto stats_cpu = twin.cpu->Stats();
  auto stats_gpu = twin.gpu->Stats();
  ASSERT_TRUE(stats_cpu.ok() && stats_gpu.ok());
  EXPECT_EQ(stats_cpu->keys, stats_gpu->keys);
  EXPECT_EQ(*stats_cpu->Property("lsm.levels"), *stats_gpu->Property("lsm.levels"));
  twin.CloseAndExpectSameBytes();

  // Each pool on the other backend: the same contents and answers.
  Twin::Crossed crossed;
  ASSERT_NO_FATAL_FAILURE(twin.OpenCrossed(&crossed));
  Table* a = crossed.cpu_pool_on_gpu;
  Table* b = crossed.gpu_pool_on_cpu;
  EXPECT_EQ(ScanBytes(*a), ScanBytes(*b));
  std::vector<uint64_t> ids(3000), high_ids(3000);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = random() % (kSpace + 100);
    high_ids[i] = ids[i] + random() % 200;
  }
  ExpectSameAnswers(*a, *b, MakeKeys(ids, shape.key_size), MakeKeys(high_ids, shape.key_size),
                    "crossed");
}

// Mixed write batches (Table::Write: a batch's puts and tombstones as two
// log records under one publish, or one run when it flushes) write the same
// bytes and give the same erased results on both backends.
TEST_P(LsmCrossBackend, MixedWriteBatchesWriteTheSameBytes) {
  SKIP_WITHOUT_DEVICE();
  const Shape shape = GetParam();
  Twin twin(
      "lsm-cross-write-" + std::to_string(shape.key_size) + "-" + std::to_string(shape.value_size),
      shape);
  ASSERT_TRUE(twin.ok());
  std::mt19937_64 random(91 + shape.key_size + shape.value_size);
  constexpr uint64_t kSpace = 5000;
  for (int round = 0; round < 80; ++round) {
    size_t n = random() % 3 == 0 ? 1 + random() % (3 * shape.batch_entries) : 1 + random() % 40;
    std::vector<uint64_t> ids(n);
    std::vector<uint8_t> ops(n);
    for (size_t i = 0; i < n; ++i) {
      ids[i] = i > 0 && random() % 4 == 0 ? ids[random() % i] : random() % kSpace;
      ops[i] =
          static_cast<uint8_t>(random() % 3 == 0 ? Table::WriteOp::kErase : Table::WriteOp::kPut);
    }
    const std::vector<uint8_t> keys = MakeKeys(ids, shape.key_size);
    const std::vector<uint8_t> values = MakeValues(n, shape.value_size, round);
    const std::string what = "round " + std::to_string(round);
    ASSERT_NO_FATAL_FAILURE(twin.Write(keys, values, ops, what));
    if (round % 30 == 29) twin.Reopen();
    if (HasFailure()) return;
  }
  EXPECT_EQ(ScanBytes(*twin.cpu), ScanBytes(*twin.gpu));
  twin.CloseAndExpectSameBytes();
}

// The GPU backend's tuning options change how it reaches the pool, never
// what it writes: a checkpoint's run in one copy, runs from cudaMalloc, writes
// that wait for the pool's registration, no memory reserve, erases' lookups
// that search every run.
TEST(LsmGpu, TuningOptionsWriteTheSameBytesAsTheCpu) {
  SKIP_WITHOUT_DEVICE();
  OrderedGpuOptions tuning;
  tuning.checkpoint_chunk_mb = 0;
  tuning.pooled_runs = false;
  tuning.wait_for_registration = true;
  tuning.reserve_buffers = 0;
  tuning.read_filters = false;
  const Shape shape{8, 8, 64, 8};
  Twin twin("lsm-tuning", shape, tuning);
  ASSERT_TRUE(twin.ok());
  std::mt19937_64 random(2024);
  constexpr uint64_t kSpace = 5000;
  for (int round = 0; round < 120; ++round) {
    const size_t n = 1 + random() % 100;
    std::vector<uint64_t> ids(n);
    for (uint64_t& id : ids) id = random() % kSpace;
    const std::vector<uint8_t> keys = MakeKeys(ids, shape.key_size);
    const std::string what = "round " + std::to_string(round);
    if (round % 5 == 4) {
      ASSERT_NO_FATAL_FAILURE(twin.Erase(keys, what));
    } else {
      ASSERT_NO_FATAL_FAILURE(twin.Put(keys, MakeValues(n, shape.value_size, round), what));
    }
    if (round == 60) twin.Reopen();
  }
  auto checkpoints = twin.gpu->GetProperty("lsm.gpu-checkpoints");
  ASSERT_TRUE(checkpoints.ok());
  EXPECT_GE(*checkpoints, 1.0) << "the workload must checkpoint after the reopen";
  EXPECT_EQ(ScanBytes(*twin.cpu), ScanBytes(*twin.gpu));
  twin.CloseAndExpectSameBytes();
}

INSTANTIATE_TEST_SUITE_P(Shapes, LsmCrossBackend,
                         ::testing::Values(Shape{8, 8, 256}, Shape{16, 5, 64}, Shape{32, 24, 128},
                                           Shape{8, 128, 1024}, Shape{8, 8, 64, 8},
                                           Shape{16, 5, 32, 4}));

// Every run of the pool's active manifest but the oldest has the filter
// the host builds from the run's keys (its words and checksum): the GPU
// backend builds it on the device, so a difference is named here by level
// and word. The oldest run's filter has every bit set. *runs: the runs
// checked.
void ExpectHostFilters(const std::string& path, const Shape& shape, const std::string& what,
                       uint32_t* runs) {
  *runs = 0;
  auto root = testutil::ReadBytes<lsm::LsmRoot>(path, RootOffset(path));
  const lsm::Manifest& manifest = root.manifests[log::ActiveIndex(root.active_manifest)];
  const uint32_t key_words = shape.key_size / 8;
  uint32_t oldest = 0;
  for (uint32_t level = 0; level < lsm::kMaxLevels; ++level) {
    if (manifest.levels[level].offset != 0) oldest = level;
  }
  for (uint32_t level = 0; level < lsm::kMaxLevels; ++level) {
    const uint64_t n = manifest.levels[level].entries;
    if (manifest.levels[level].offset == 0) continue;
    ++*runs;
    const uint64_t words = lsm::RunFilterWords(n);
    auto keys =
        ReadRange(path, manifest.levels[level].offset + lsm::RunKeysOffset(), n * shape.key_size);
    auto stored = ReadRange(
        path,
        manifest.levels[level].offset + lsm::RunFilterOffset(n, shape.key_size, shape.value_size),
        words * 8 + 8);
    ASSERT_EQ(keys.size(), n * shape.key_size) << what;
    ASSERT_EQ(stored.size(), words * 8 + 8) << what;
    std::vector<uint64_t> key_words_of(n * key_words), built(words, 0), read(words + 1);
    std::memcpy(key_words_of.data(), keys.data(), keys.size());
    std::memcpy(read.data(), stored.data(), stored.size());
    if (level == oldest) {
      std::fill(built.begin(), built.end(), ~uint64_t{0});
    } else {
      lsm::AddToFilter(key_words_of.data(), n, key_words, built.data(), words, 1);
    }
    for (uint64_t w = 0; w < words; ++w) {
      ASSERT_EQ(read[w], built[w])
          << what << ": level " << level << " (" << n << " keys), filter word " << w;
    }
    EXPECT_EQ(read[words], lsm::RunFilterChecksum(root.table_id, built.data(), words))
        << what << ": level " << level << " filter checksum";
  }
}

// Runs written by flushes, by the cascade's merges, by checkpoints (a log of
// two halves) and by compactions, of several sizes and 8-, 16- and 32-byte
// keys: after each batch the GPU pool's filters are the host's bits, and
// both pools hold the same bytes once a run is written.
TEST(LsmGpu, RunFiltersBuiltOnTheDeviceAreTheHostsBits) {
  SKIP_WITHOUT_DEVICE();
  for (const Shape& shape : {Shape{8, 8, 64}, Shape{16, 5, 32}, Shape{32, 24, 128},
                             Shape{8, 8, 32, 4}, Shape{32, 8, 16, 2}}) {
    const std::string tag = "lsm-cross-filter-" + std::to_string(shape.key_size) + "-" +
                            std::to_string(shape.batch_entries) + "-" +
                            std::to_string(shape.log_batches);
    SCOPED_TRACE(tag);
    Twin twin(tag, shape);
    ASSERT_TRUE(twin.ok());
    std::mt19937_64 random(shape.key_size * 131 + shape.batch_entries);
    uint32_t checked = 0;
    for (int round = 0; round < 40; ++round) {
      // From a few keys (the log) to many times the batch (a run of its
      // own, then merges down the levels).
      const size_t n = 1 + random() % (shape.batch_entries << (round % 6));
      std::vector<uint64_t> ids(n);
      for (uint64_t& id : ids) id = random() % (uint64_t{1} << 40);
      const std::vector<uint8_t> keys = MakeKeys(ids, shape.key_size);
      const std::string what = "round " + std::to_string(round);
      if (round % 7 == 6) {
        ASSERT_NO_FATAL_FAILURE(twin.Erase(keys, what));
      } else {
        ASSERT_NO_FATAL_FAILURE(twin.Put(keys, MakeValues(n, shape.value_size, round), what));
      }
      if (round % 13 == 12) ASSERT_NO_FATAL_FAILURE(twin.Compact(what));
      uint32_t runs = 0;
      ExpectHostFilters(twin.gpu_pool.path(), shape, what, &runs);
      if (runs > 0) twin.ExpectSamePoolBytes();
      if (HasFailure()) return;
      checked += runs;
    }
    EXPECT_GE(checked, 40u) << "the workload must write runs";
  }
}

// Gets through the levels' run filters answer as the CPU's and as the
// workload says: a table with runs on levels 0, 1, 2 and 4 behind the write
// buffer (lsm/lsm_layers.h: most keys' newest entry past the first source a
// get searches, overwrites and tombstones over older entries, many keys only
// in the oldest run), of 8-, 16- and 32-byte keys (filters hashed over 1, 2
// and 4 words); after each batch, after a reopen (the GPU then builds the
// filters of the runs it reads) and with each pool opened on the other
// backend.
TEST(LsmGpu, GetsThroughTheLevelsFiltersAnswerAsTheCpuAndTheWorkload) {
  SKIP_WITHOUT_DEVICE();
  for (const Shape& shape : {Shape{8, 8, 64}, Shape{16, 5, 32}, Shape{32, 24, 128}}) {
    const std::string tag = "lsm-cross-layers-" + std::to_string(shape.key_size);
    SCOPED_TRACE(tag);
    Twin twin(tag, shape);
    ASSERT_TRUE(twin.ok());
    const uint64_t u = shape.batch_entries;
    const uint32_t value_size = shape.value_size;
    const std::vector<uint64_t> lookup_ids = lsmtest::LayeredLookups(u);
    const std::vector<uint8_t> lookups = MakeKeys(lookup_ids, shape.key_size);
    std::vector<uint64_t> high_ids(lookup_ids.size());
    for (size_t i = 0; i < lookup_ids.size(); ++i) high_ids[i] = lookup_ids[i] + i % 9;
    const std::vector<uint8_t> highs = MakeKeys(high_ids, shape.key_size);
    // The value of each live id.
    std::map<uint64_t, std::vector<uint8_t>> live;
    auto expect_gets = [&](Table& table, const std::string& what) {
      const size_t n = lookup_ids.size();
      std::vector<uint8_t> values(n * value_size), found(n);
      ASSERT_TRUE(table.Get(lookups, values, found).ok()) << what;
      for (size_t i = 0; i < n; ++i) {
        auto it = live.find(lookup_ids[i]);
        ASSERT_EQ(found[i] != 0, it != live.end()) << what << ": id " << lookup_ids[i];
        if (it == live.end()) continue;
        ASSERT_TRUE(std::equal(it->second.begin(), it->second.end(), &values[i * value_size]))
            << what << ": id " << lookup_ids[i] << "'s value";
      }
    };
    int round = 0;
    for (const lsmtest::LayerBatch& batch : lsmtest::LayeredBatches(u)) {
      ++round;
      const std::string what = "batch " + std::to_string(round);
      const size_t n = batch.ids.size();
      const std::vector<uint8_t> keys = MakeKeys(batch.ids, shape.key_size);
      if (batch.erase) {
        ASSERT_NO_FATAL_FAILURE(twin.Erase(keys, what));
        for (uint64_t id : batch.ids) live.erase(id);
      } else {
        const std::vector<uint8_t> values = MakeValues(n, value_size, round);
        ASSERT_NO_FATAL_FAILURE(twin.Put(keys, values, what));
        for (size_t i = 0; i < n; ++i) {
          live[batch.ids[i]].assign(&values[i * value_size], &values[(i + 1) * value_size]);
        }
      }
      ASSERT_NO_FATAL_FAILURE(expect_gets(*twin.gpu, what));
      ExpectSameAnswers(*twin.cpu, *twin.gpu, lookups, highs, what);
      if (HasFailure()) return;
    }
    ASSERT_NO_FATAL_FAILURE(lsmtest::ExpectLayeredRuns(*twin.cpu, u));
    ASSERT_NO_FATAL_FAILURE(lsmtest::ExpectLayeredRuns(*twin.gpu, u));

    twin.Reopen();
    ASSERT_NO_FATAL_FAILURE(lsmtest::ExpectLayeredRuns(*twin.gpu, u));
    ASSERT_NO_FATAL_FAILURE(expect_gets(*twin.gpu, "reopened"));
    ExpectSameAnswers(*twin.cpu, *twin.gpu, lookups, highs, "reopened");
    twin.CloseAndExpectSameBytes();

    Twin::Crossed crossed;
    ASSERT_NO_FATAL_FAILURE(twin.OpenCrossed(&crossed));
    ASSERT_NO_FATAL_FAILURE(expect_gets(*crossed.cpu_pool_on_gpu, "the CPU's pool on the GPU"));
    ExpectSameAnswers(*crossed.cpu_pool_on_gpu, *crossed.gpu_pool_on_cpu, lookups, highs,
                      "crossed");
    if (HasFailure()) return;
  }
}

TEST(LsmGpu, ADamagedRunIsCorruptionAtOpenTableWithAnOffset) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("lsm-gpu-corrupt");
  {
    auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCuda));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->CreateTable("o", OrderedOptions(16));
    ASSERT_TRUE(table.ok());
    std::vector<uint64_t> keys(100), values(100);
    for (uint64_t i = 0; i < 100; ++i) keys[i] = i * 3, values[i] = i;
    ASSERT_TRUE((*table)->Put(keys, values).ok());
  }
  auto root = testutil::ReadBytes<lsm::LsmRoot>(temp.path(), RootOffset(temp.path()));
  const lsm::Manifest& manifest = root.manifests[log::ActiveIndex(root.active_manifest)];
  uint64_t run = 0;
  for (const lsm::RunRef& ref : manifest.levels) run = ref.offset != 0 ? ref.offset : run;
  ASSERT_NE(run, 0u);
  testutil::FlipByte(temp.path(), run + lsm::kRunHeaderSize + 8 * 7, 0x10);  // a key
  // The damage stays with the table: the pool opens, the table's OpenTable
  // says what is wrong and where.
  auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCuda));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto table = (*db)->OpenTable("o");
  ASSERT_FALSE(table.ok());
  const Status& status = table.status();
  EXPECT_TRUE(status.IsCorruption()) << status.ToString();
  EXPECT_NE(status.message().find("table 'o'"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("data checksum"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("(offset 0x"), std::string::npos) << status.ToString();
}

// A row record (a pool written before columnar records) is replayed on the
// device, and a columnar record appended after it replays beside it.
TEST(LsmGpu, ARowRecordOfAnOlderPoolIsReplayedOnTheDevice) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("lsm-gpu-row-record");
  Oracle oracle;
  auto put = [&](Table& table, uint64_t first, uint64_t count) {
    std::vector<uint64_t> keys, values;
    for (uint64_t i = 0; i < count; ++i) {
      keys.push_back(first + i);
      values.push_back(first * 1000 + i);
      oracle[keys.back()] = values.back();
    }
    ASSERT_TRUE(table.Put(keys, values).ok());
  };
  {
    auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCpu));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->CreateTable("o", OrderedOptions(16));
    ASSERT_TRUE(table.ok());
    put(**table, 0, 16);   // a run
    put(**table, 100, 5);  // the log's one record
  }
  lsmtest::RewriteLogAsRowRecord(temp.path());
  {
    auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCuda));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    Table* table = *(*db)->OpenTable("o");
    EXPECT_EQ(lsmtest::Contents(*table), oracle);
    put(*table, 200, 3);  // a columnar record after the row record
  }
  auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCuda));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Table* table = *(*db)->OpenTable("o");
  EXPECT_EQ(lsmtest::Contents(*table), oracle);
  EXPECT_EQ(*table->GetProperty("lsm.buffer-entries"), 8.0);
}

// A crash while a checkpoint is in flight (the process stops after its run
// is written or while the GPU copies it, before its manifest is published):
// a copy of the pool file taken then holds records in both log halves. Each
// backend completes that checkpoint at open and writes the same bytes; the
// GPU's own in-flight state opens on the CPU.
TEST(LsmGpu, ACheckpointInFlightAtACrashIsCompletedAtOpenOnEitherBackend) {
  SKIP_WITHOUT_DEVICE();
  const Shape shape{8, 8, 16, 4};
  Oracle oracle;
  auto put_batch = [&](Table& table, uint64_t batch) {
    std::vector<uint64_t> keys, values;
    for (uint64_t i = 0; i < 16; ++i) {
      keys.push_back(i * 5 + batch);
      values.push_back(batch * 1000 + i);
      oracle[keys.back()] = values.back();
    }
    ASSERT_TRUE(table.Put(keys, values).ok());
  };
  testutil::TempPool cpu_written("lsm-in-flight-cpu"), gpu_written("lsm-in-flight-gpu");
  testutil::TempPool on_cpu("lsm-in-flight-on-cpu"), on_gpu("lsm-in-flight-on-gpu"),
      gpu_on_cpu("lsm-in-flight-gpu-on-cpu");
  TableOptions options = OrderedOptions(shape.batch_entries, shape.value_size, shape.key_size);
  options.ordered.log_batches = shape.log_batches;
  const auto copy = std::filesystem::copy_options::overwrite_existing;
  for (const Backend backend : {Backend::kCpu, Backend::kCuda}) {
    const std::string& path = backend == Backend::kCpu ? cpu_written.path() : gpu_written.path();
    auto db = Twin::Open(path, backend);
    ASSERT_NE(db, nullptr);
    Table* table = *db->CreateTable("o", options);
    oracle.clear();
    // Three batches fill half 0 (< 4 * 16 entries); the fourth starts the
    // checkpoint, the fifth is the second batch of half 1 (published
    // before the third).
    for (uint64_t batch = 0; batch < 5; ++batch) put_batch(*table, batch);
    ASSERT_EQ(Active(ReadRoot(path)).applied_seq, 0u) << "the checkpoint must be in flight";
    if (backend == Backend::kCpu) {
      std::filesystem::copy_file(path, on_cpu.path(), copy);
      std::filesystem::copy_file(path, on_gpu.path(), copy);
    } else {
      std::filesystem::copy_file(path, gpu_on_cpu.path(), copy);
    }
  }
  // oracle: the five batches (the same keys and values on both).
  for (const auto& [path, backend] :
       {std::pair{on_cpu.path(), Backend::kCpu}, std::pair{on_gpu.path(), Backend::kCuda},
        std::pair{gpu_on_cpu.path(), Backend::kCpu}}) {
    auto db = Twin::Open(path, backend);
    ASSERT_NE(db, nullptr);
    Table* table = *db->OpenTable("o");
    EXPECT_EQ(lsmtest::Contents(*table), oracle) << path;
    const lsm::Manifest manifest = Active(ReadRoot(path));
    EXPECT_EQ(manifest.applied_seq, 3u) << path;
    EXPECT_EQ(manifest.log_half, 1u) << path;
    EXPECT_EQ(manifest.levels[2].entries, 48u) << path;
    EXPECT_EQ(*table->GetProperty("lsm.buffer-entries"), 32.0) << path;
  }
  ExpectSameBytes(on_cpu.path(), on_gpu.path(), shape);
  for (const std::string& path : {on_cpu.path(), gpu_on_cpu.path()}) {
    auto report = recovery::VerifyPool(path, nullptr);
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->findings.empty()) << path << ": " << report->findings[0].message;
  }
}

TEST(LsmGpu, DeviceBuffersInAndOut) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("lsm-gpu-device-buffers");
  auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCuda));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto created = (*db)->CreateTable("o", OrderedOptions(64, 12));
  ASSERT_TRUE(created.ok());
  Table& table = **created;
  constexpr size_t n = 500;
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = (i * 7919) % 1000;
  const std::vector<uint8_t> values = MakeValues(n, 12, 5);
  auto device_keys = gpu::DeviceBytes::Allocate(n * 8);
  auto device_values = gpu::DeviceBytes::Allocate(n * 12);
  ASSERT_TRUE(device_keys.ok() && device_values.ok());
  ASSERT_TRUE(device_keys->CopyFromHost(keys.data(), n * 8).ok());
  ASSERT_TRUE(device_values->CopyFromHost(values.data(), n * 12).ok());
  ASSERT_TRUE(
      table.Put(ConstBytes(device_keys->data(), n * 8), ConstBytes(device_values->data(), n * 12))
          .ok());
  // Gets into device outputs equal gets into host outputs.
  auto device_out = gpu::DeviceBytes::Allocate(n * 12);
  auto device_found = gpu::DeviceBytes::Allocate(n);
  ASSERT_TRUE(device_out.ok() && device_found.ok());
  ASSERT_TRUE(table
                  .Get(ConstBytes(device_keys->data(), n * 8),
                       MutableBytes(device_out->data(), n * 12),
                       MutableBytes(device_found->data(), n))
                  .ok());
  std::vector<uint8_t> out(n * 12), found(n), host_out(n * 12), host_found(n);
  ASSERT_TRUE(device_out->CopyToHost(out.data(), n * 12).ok());
  ASSERT_TRUE(device_found->CopyToHost(found.data(), n).ok());
  ASSERT_TRUE(table.Get(keys, host_out, host_found).ok());
  EXPECT_EQ(out, host_out);
  EXPECT_EQ(found, host_found);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(found[i], 1);
  // The last occurrence of a key wins: key i's value is the last input's.
  for (size_t i = 0; i < n; ++i) {
    size_t last = i;
    for (size_t j = 0; j < n; ++j) last = keys[j] == keys[i] ? j : last;
    ASSERT_EQ(0, std::memcmp(&out[i * 12], &values[last * 12], 12)) << i;
  }
  // Counts and erase flags into device memory.
  std::vector<uint64_t> highs(n);
  for (size_t i = 0; i < n; ++i) highs[i] = keys[i] + 50;
  auto device_highs = gpu::DeviceBytes::Allocate(n * 8);
  auto device_counts = gpu::DeviceBytes::Allocate(n * 8);
  ASSERT_TRUE(device_highs.ok() && device_counts.ok());
  ASSERT_TRUE(device_highs->CopyFromHost(highs.data(), n * 8).ok());
  ASSERT_TRUE(table
                  .Count(ConstBytes(device_keys->data(), n * 8),
                         ConstBytes(device_highs->data(), n * 8),
                         MutableBytes(device_counts->data(), n * 8))
                  .ok());
  std::vector<uint64_t> counts(n), host_counts(n);
  ASSERT_TRUE(device_counts->CopyToHost(counts.data(), n * 8).ok());
  ASSERT_TRUE(table.Count(keys, highs, host_counts).ok());
  EXPECT_EQ(counts, host_counts);
  auto device_erased = gpu::DeviceBytes::Allocate(n);
  ASSERT_TRUE(device_erased.ok());
  ASSERT_TRUE(
      table.Erase(ConstBytes(device_keys->data(), n * 8), MutableBytes(device_erased->data(), n))
          .ok());
  std::vector<uint8_t> erased(n);
  ASSERT_TRUE(device_erased->CopyToHost(erased.data(), n).ok());
  for (size_t i = 0; i < n; ++i) {
    bool first = true;
    for (size_t j = 0; j < i; ++j) first = first && keys[j] != keys[i];
    EXPECT_EQ(erased[i], first ? 1 : 0) << i;
  }
  ASSERT_TRUE(table.Get(keys, host_out, host_found).ok());
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(host_found[i], 0) << i;
}

// The copy the library's cudart provides (tests have no CUDA headers; the
// static libgpkv links cudart for them). kind 2 = cudaMemcpyDeviceToHost.
extern "C" int cudaMemcpy(void* to, const void* from, size_t bytes, int kind);

template <typename T>
std::vector<T> FromDevice(const void* device, size_t count) {
  std::vector<T> host(count);
  if (count != 0 && cudaMemcpy(host.data(), device, count * sizeof(T), 2) != 0) host.clear();
  return host;
}

// RangeOnDevice answers as Range (offsets, keys, values), with bounds in host
// or device memory, on keys in the buffer, the levels and erased, and with a
// limit; it reuses its storage unless the caller holds a copy, and a kept
// copy stays intact.
TEST(LsmGpu, RangeOnDeviceEqualsRange) {
  SKIP_WITHOUT_DEVICE();
  for (uint32_t key_size : {8u, 16u, 32u}) {
    SCOPED_TRACE(key_size);
    testutil::TempPool temp("lsm-gpu-device-range");
    auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCuda));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto created = (*db)->CreateTable("o", OrderedOptions(256, 12, key_size));
    ASSERT_TRUE(created.ok());
    Table& table = **created;
    std::mt19937_64 random(key_size);
    for (int batch = 0; batch < 12; ++batch) {
      const size_t n = batch % 3 == 0 ? 700 : 90;  // flushed and logged batches
      std::vector<uint64_t> ids(n);
      for (uint64_t& id : ids) id = random() % 4000;
      const std::vector<uint8_t> keys = MakeKeys(ids, key_size);
      ASSERT_TRUE(table.Put(keys, MakeValues(n, 12, batch)).ok());
      if (batch % 4 == 3) {
        std::vector<uint64_t> gone(n / 3);
        for (uint64_t& id : gone) id = random() % 4000;
        ASSERT_TRUE(table.Erase(MakeKeys(gone, key_size)).ok());
      }
    }
    constexpr size_t q = 300;
    std::vector<uint64_t> lo_ids(q), hi_ids(q);
    for (size_t i = 0; i < q; ++i) {
      lo_ids[i] = random() % 4200;
      hi_ids[i] = i % 7 == 0 ? lo_ids[i] / 2 : lo_ids[i] + random() % 300;  // some empty
    }
    const std::vector<uint8_t> lo = MakeKeys(lo_ids, key_size), hi = MakeKeys(hi_ids, key_size);
    Table::RangeResults host;
    ASSERT_TRUE(table.Range(lo, hi, &host).ok());
    ASSERT_GT(host.offsets.back(), 0u);
    auto check = [&](const Table::DeviceRangeResults& device) {
      EXPECT_EQ(device.queries, q);
      EXPECT_EQ(device.pairs, host.offsets.back());
      EXPECT_EQ(FromDevice<uint64_t>(device.offsets, q + 1), host.offsets);
      EXPECT_EQ(FromDevice<uint8_t>(device.keys, device.pairs * key_size), host.keys);
      EXPECT_EQ(FromDevice<uint8_t>(device.values, device.pairs * 12), host.values);
    };
    Table::DeviceRangeResults device;
    ASSERT_TRUE(table.RangeOnDevice(lo, hi, &device).ok());
    check(device);
    // Bounds in device memory; the storage reused.
    auto device_lo = gpu::DeviceBytes::Allocate(lo.size());
    auto device_hi = gpu::DeviceBytes::Allocate(hi.size());
    ASSERT_TRUE(device_lo.ok() && device_hi.ok());
    ASSERT_TRUE(device_lo->CopyFromHost(lo.data(), lo.size()).ok());
    ASSERT_TRUE(device_hi->CopyFromHost(hi.data(), hi.size()).ok());
    const void* first_storage = device.storage.get();
    ASSERT_TRUE(table
                    .RangeOnDevice(ConstBytes(device_lo->data(), lo.size()),
                                   ConstBytes(device_hi->data(), hi.size()), &device)
                    .ok());
    check(device);
    EXPECT_EQ(device.storage.get(), first_storage);
    // A kept copy: the next call allocates anew and the kept arrays hold.
    const Table::DeviceRangeResults kept = device;
    std::vector<uint8_t> other_lo = MakeKeys({0}, key_size), other_hi = MakeKeys({4200}, key_size);
    ASSERT_TRUE(table.RangeOnDevice(other_lo, other_hi, &device).ok());
    EXPECT_NE(device.storage.get(), kept.storage.get());
    EXPECT_EQ(device.queries, 1u);
    std::vector<uint64_t> all_count(1);
    ASSERT_TRUE(table.Count(other_lo, other_hi, MutableBytes(all_count.data(), 8)).ok());
    EXPECT_EQ(device.pairs, all_count[0]);
    check(kept);
    // With a limit, as Range with the same limit: at most 5 pairs a query.
    BatchOptions limited;
    limited.range_limit = 5;
    ASSERT_TRUE(table.Range(lo, hi, &host, limited).ok());
    for (size_t i = 0; i < q; ++i) ASSERT_LE(host.offsets[i + 1] - host.offsets[i], 5u);
    ASSERT_TRUE(table.RangeOnDevice(lo, hi, &device, limited).ok());
    check(device);
    // No queries: one offset, no pairs.
    ASSERT_TRUE(table.RangeOnDevice(ConstBytes(), ConstBytes(), &device).ok());
    EXPECT_EQ(device.pairs, 0u);
    EXPECT_EQ(FromDevice<uint64_t>(device.offsets, 1), std::vector<uint64_t>{0});
  }
}

TEST(LsmGpu, RangeOnDeviceIsUnsupportedOnTheCpuBackend) {
  testutil::TempPool temp("lsm-cpu-device-range");
  auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCpu));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto created = (*db)->CreateTable("o", OrderedOptions(64));
  ASSERT_TRUE(created.ok());
  const std::vector<uint64_t> lo = {1}, hi = {9};
  Table::DeviceRangeResults device;
  const Status status =
      (*created)->RangeOnDevice(ConstBytes(lo.data(), 8), ConstBytes(hi.data(), 8), &device);
  EXPECT_TRUE(status.IsUnsupported()) << status.ToString();
}

// Writers are serialised and queries beside them see whole batches: every
// batch sets all keys to its number (some through the log, some flushed
// down the levels), and a reader's Get of all keys must see one number.
TEST(LsmGpu, QueriesBesideWritersSeeWholeBatches) {
  SKIP_WITHOUT_DEVICE();
  testutil::TempPool temp("lsm-gpu-concurrent");
  auto db = DB::Open(temp.path(), PoolOptions(kPoolSize, 2, Backend::kCuda));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto created = (*db)->CreateTable("o", OrderedOptions(4096));
  ASSERT_TRUE(created.ok());
  Table& table = **created;
  constexpr size_t n = 1000;
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = i * 11;
  std::vector<uint64_t> values(n, 0);
  ASSERT_TRUE(table.Put(keys, values).ok());
  std::atomic<bool> done{false};
  std::atomic<uint64_t> reads{0}, torn{0};
  std::thread reader([&] {
    std::vector<uint64_t> out(n);
    std::vector<uint8_t> found(n);
    while (!done.load()) {
      if (!table.Get(keys, out, found).ok()) {
        ++torn;
        continue;
      }
      for (size_t i = 0; i < n; ++i) {
        if (!found[i] || out[i] != out[0]) {
          ++torn;
          break;
        }
      }
      ++reads;
    }
  });
  for (uint64_t batch = 1; batch <= 300; ++batch) {
    std::fill(values.begin(), values.end(), batch);
    ASSERT_TRUE(table.Put(keys, values).ok());
    if (batch % 100 == 0) ASSERT_TRUE(table.Compact().ok());
  }
  done = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
}

}  // namespace
}  // namespace gpkv
