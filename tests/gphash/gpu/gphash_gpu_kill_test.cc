// Process kills during GPU write batches: a child process runs a fixed
// workload of put, update and erase batches (65,536 operations each, with
// resizes) on a gpu::GpuBackend table and reports each acknowledged batch
// through a pipe; the parent sends SIGKILL at a random moment of a random
// batch, reopens the pool on the GPU (open-time recovery), and checks that
// every acknowledged batch is there, that each operation of the batch in
// flight is applied or absent (its whole value old or new, never another),
// and that gphash::VerifyGphash finds the pool clean. In direct, mirror and
// staged mode, with 8-byte values in the slots and with 128-byte values in
// value cells. In logged mode (TableOptions::hash_log, opened through the
// public API on the CUDA backend) with batches from host memory (their
// records written by the host, or the puts and erases copied to device
// memory and written from there) and from device memory (its updates as
// mixed Write batches), a log half holding
// about three batches (so checkpoints start at every third batch and are
// pending across the next ones): every acknowledged batch is there, the
// batch in flight whole or absent, and the pool verifies clean. Device
// test (label `gpu`); skipped without a usable device.
//
// The child is this test binary run again (fork + exec of /proc/self/exe with
// a gtest filter naming the disabled test GphashGpuKillChild.DISABLED_Run and the plan in the
// environment): a forked child may not use CUDA once the parent has.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gpkv/db.h"
#include "gpu_test_util.h"
#include "pm/pool.h"
#include "recovery/verify.h"
#include "tables/gphash/check.h"
#include "tables/gphash/gpu/backend.h"
#include "test_util.h"

namespace gpkv::gphash::gpu {
namespace {

constexpr uint32_t kSteps = 24;
constexpr size_t kBatch = size_t{1} << 16;
constexpr uint64_t kPoolSize = uint64_t{256} << 20;
constexpr const char* kChildEnv = "GPKV_GPU_KILL_CHILD";

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// One batch of the workload. Steps 4i and 4i+1 insert new keys, 4i+2 updates
// the keys of 4i+1, 4i+3 erases the first half of the keys of 4i.
struct Step {
  bool erase = false;
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;  // puts only
};

std::vector<uint64_t> NewKeys(uint32_t step) {
  std::vector<uint64_t> keys(kBatch);
  for (size_t j = 0; j < kBatch; ++j) keys[j] = Mix(uint64_t{step} * kBatch + j + 1);
  return keys;
}

Step MakeStep(uint32_t step) {
  Step out;
  switch (step % 4) {
    case 0:
    case 1:
      out.keys = NewKeys(step);
      break;
    case 2:
      out.keys = NewKeys(step - 1);
      break;
    case 3:
      out.erase = true;
      out.keys = NewKeys(step - 3);
      out.keys.resize(kBatch / 2);
      return out;
  }
  out.values.resize(out.keys.size());
  for (size_t j = 0; j < out.keys.size(); ++j) out.values[j] = Mix(out.keys[j] ^ step);
  return out;
}

// The value_size bytes of a value whose model word is `word`: the word, then
// words mixed from it (a value of one step differs from the others in every
// word).
void ExpandValue(uint64_t word, uint32_t value_size, uint8_t* out) {
  for (uint32_t at = 0; at < value_size; at += 8) {
    const uint64_t part = at == 0 ? word : Mix(word + at);
    std::memcpy(out + at, &part, std::min<uint32_t>(8, value_size - at));
  }
}

using Model = std::unordered_map<uint64_t, uint64_t>;

void ApplyStep(const Step& step, Model* model) {
  for (size_t j = 0; j < step.keys.size(); ++j) {
    if (step.erase) {
      model->erase(step.keys[j]);
    } else {
      (*model)[step.keys[j]] = step.values[j];
    }
  }
}

// A test case: "<mode>" (8-byte values) or "<mode>_cells" (128-byte values),
// or "logged_host" / "logged_copied" / "logged_device" (a logged table,
// 8-byte values, batches from host memory with records written by the host,
// from host memory copied to device memory, or from device memory).
bool IsLogged(const std::string& name) { return name.rfind("logged", 0) == 0; }
bool FromDevice(const std::string& name) { return name == "logged_device"; }
GpuIndexMode ModeOf(const std::string& name) {
  if (name.rfind("direct", 0) == 0) return GpuIndexMode::kDirect;
  if (name.rfind("staged", 0) == 0) return GpuIndexMode::kStaged;
  return GpuIndexMode::kMirror;
}
uint32_t ValueSizeOf(const std::string& name) {
  return name.size() > 6 && name.compare(name.size() - 6, 6, "_cells") == 0 ? 128 : 8;
}

// The logged table: batches of kBatch entries, a log half of three of
// them.
TableOptions LoggedOptions() {
  TableOptions options;
  options.expected_keys = 4096;
  options.hash_log.batch_entries = kBatch;
  options.hash_log.log_batches = 3;
  return options;
}

// The DB of a logged case: "logged_host" writes every host batch's record
// from host memory, "logged_copied" copies every put and erase batch to
// device memory first (HashGpuOptions::logged_device_copy_min_ops).
Options LoggedDbOptions(const std::string& mode = "") {
  Options options = testutil::DbOptions(kPoolSize, 2, gpkv::Backend::kCuda);
  options.create_if_missing = false;
  if (mode == "logged_host") options.hash_gpu.logged_device_copy_min_ops = 0;
  if (mode == "logged_copied") options.hash_gpu.logged_device_copy_min_ops = 1;
  return options;
}

// ---------------------------------------------------------------- child

// kEnd's step: kSteps, or the checkpoints a logged child's table published.
enum RecordType : uint32_t { kOpened = 0, kAcknowledged = 1, kEnd = 2 };
struct Record {
  uint32_t type;
  uint32_t step;
};

// Device memory of `bytes` bytes; freed at scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&data_, bytes) != cudaSuccess) _exit(25);
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  // Holds `bytes` of `from` once this returns (the batches pass no stream).
  uint8_t* Fill(const void* from, size_t bytes) {
    if (cudaMemcpy(data_, from, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
      _exit(26);
    }
    return static_cast<uint8_t*>(data_);
  }

 private:
  void* data_ = nullptr;
};

// The workload on a logged table through the public API: puts and erases,
// updates as mixed Write batches of puts; from host memory or from device
// memory (FromDevice).
void RunLoggedChild(const char* path, const std::string& mode,
                    const std::function<void(uint32_t, uint32_t)>& send) {
  auto db = DB::Open(path, LoggedDbOptions(mode));
  if (!db.ok()) {
    std::fprintf(stderr, "kill child: %s\n", db.status().ToString().c_str());
    _exit(22);
  }
  auto table = (*db)->OpenTable("t");
  if (!table.ok()) {
    std::fprintf(stderr, "kill child: %s\n", table.status().ToString().c_str());
    _exit(23);
  }
  const bool device = FromDevice(mode);
  DeviceBuffer device_keys(kBatch * 8), device_values(kBatch * 8), device_flags(kBatch);
  std::vector<uint8_t> flags(kBatch);
  const std::vector<uint8_t> ops(kBatch, static_cast<uint8_t>(Table::WriteOp::kPut));
  send(kOpened, 0);
  for (uint32_t s = 0; s < kSteps; ++s) {
    const Step step = MakeStep(s);
    const size_t n = step.keys.size();
    ConstBytes keys(step.keys.data(), n * 8);
    ConstBytes values(step.values.data(), step.values.size() * 8);
    MutableBytes erased(flags.data(), n);
    if (device) {
      keys = ConstBytes(device_keys.Fill(step.keys.data(), n * 8), n * 8);
      if (!step.erase) {
        values = ConstBytes(device_values.Fill(step.values.data(), n * 8), n * 8);
      }
      erased = MutableBytes(device_flags.Fill(flags.data(), n), n);
    }
    Status status;
    if (step.erase) {
      status = (*table)->Erase(keys, erased);
    } else if (s % 4 == 2) {
      status = (*table)->Write(keys, values, ConstBytes(ops.data(), n));
    } else {
      status = (*table)->Put(keys, values);
    }
    if (!status.ok()) {
      std::fprintf(stderr, "kill child: step %u: %s\n", s, status.ToString().c_str());
      _exit(24);
    }
    send(kAcknowledged, s);
  }
  auto checkpoints = (*table)->GetProperty("gphash.checkpoints");
  send(kEnd, checkpoints.ok() ? static_cast<uint32_t>(*checkpoints) : 0);
  _exit(0);
}

// Runs the workload. Env: "<pool path> <root offset> <case> <pipe fd>".
TEST(GphashGpuKillChild, DISABLED_Run) {
  const char* spec = std::getenv(kChildEnv);
  if (spec == nullptr) GTEST_SKIP() << "run by GphashGpuKill tests only";
  char path[512], mode[32];
  unsigned long long root = 0;
  int fd = -1;
  if (std::sscanf(spec, "%511s %llu %31s %d", path, &root, mode, &fd) != 4) _exit(20);
  const uint32_t value_size = ValueSizeOf(mode);
  auto send = [fd](uint32_t type, uint32_t step) {
    Record record{type, step};
    if (write(fd, &record, sizeof(record)) != sizeof(record)) _exit(21);
  };
  if (IsLogged(mode)) RunLoggedChild(path, mode, send);
  auto pool = pm::Pool::Open(path, false, SyncMode::kBatch);
  if (!pool.ok()) {
    std::fprintf(stderr, "kill child: %s\n", pool.status().ToString().c_str());
    _exit(22);
  }
  GpuTableOptions options;
  options.index_mode = ModeOf(mode);
  auto table = GpuBackend::Open(**pool, "t", root, options, nullptr);
  if (!table.ok()) {
    std::fprintf(stderr, "kill child: %s\n", table.status().ToString().c_str());
    _exit(23);
  }
  send(kOpened, 0);
  std::vector<uint8_t> flags(kBatch);
  std::vector<uint8_t> values(kBatch * value_size);
  for (uint32_t s = 0; s < kSteps; ++s) {
    Step step = MakeStep(s);
    const auto* keys = reinterpret_cast<const uint8_t*>(step.keys.data());
    for (size_t j = 0; j < step.values.size(); ++j) {
      ExpandValue(step.values[j], value_size, &values[j * value_size]);
    }
    Status status = step.erase ? (*table)->Erase(keys, flags.data(), step.keys.size())
                               : (*table)->Put(keys, values.data(), step.keys.size());
    if (!status.ok()) {
      std::fprintf(stderr, "kill child: step %u: %s\n", s, status.ToString().c_str());
      _exit(24);
    }
    send(kAcknowledged, s);
  }
  send(kEnd, kSteps);
  _exit(0);
}

// ---------------------------------------------------------------- parent

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::chrono::steady_clock::time_point start;
  uint32_t acknowledged = 0;  // steps acknowledged so far
  uint32_t checkpoints = 0;   // kEnd's count

  static Child Start(const std::string& path, uint64_t root, const std::string& mode) {
    Child child;
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return child;
    std::string spec =
        path + " " + std::to_string(root) + " " + mode + " " + std::to_string(pipe_fds[1]);
    child.start = std::chrono::steady_clock::now();
    child.pid = fork();
    if (child.pid == 0) {
      close(pipe_fds[0]);
      setenv(kChildEnv, spec.c_str(), 1);
      const char* argv[] = {"gphash_gpu_kill_test",
                            "--gtest_filter=GphashGpuKillChild.DISABLED_Run",
                            "--gtest_also_run_disabled_tests", nullptr};
      execv("/proc/self/exe", const_cast<char* const*>(argv));
      _exit(30);
    }
    close(pipe_fds[1]);
    child.fd = pipe_fds[0];
    return child;
  }

  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  bool Next(Record* record) {
    if (read(fd, record, sizeof(*record)) != sizeof(*record)) return false;
    if (record->type == kAcknowledged) acknowledged = record->step + 1;
    if (record->type == kEnd) checkpoints = record->step;
    return true;
  }
  int Finish() {
    Record record;
    while (Next(&record)) {
    }
    close(fd);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

struct Totals {
  uint64_t kills = 0, completed = 0, partial_batches = 0, acknowledged_batches = 0;
  uint64_t lost = 0, not_atomic = 0, failing_verify = 0;
};

class GphashGpuKill : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_DEVICE();
    std::vector<Step> steps;
    for (uint32_t s = 0; s < kSteps; ++s) steps.push_back(MakeStep(s));
    models_.resize(kSteps + 1);
    for (uint32_t s = 0; s < kSteps; ++s) {
      models_[s + 1] = models_[s];
      ApplyStep(steps[s], &models_[s + 1]);
      for (uint64_t key : steps[s].keys) universe_.push_back(key);
    }
    std::sort(universe_.begin(), universe_.end());
    universe_.erase(std::unique(universe_.begin(), universe_.end()), universe_.end());
    if (IsLogged(GetParam())) {
      Options options = LoggedDbOptions();
      options.create_if_missing = true;
      auto db = DB::Open(base_.path(), options);
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      auto table = (*db)->CreateTable("t", LoggedOptions());
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      return;
    }
    // The base pool: one empty table sized far below the workload (resizes).
    auto pool = pm::Pool::Create(base_.path(), kPoolSize, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    TableOptions options;
    options.expected_keys = 4096;
    options.value_size = ValueSizeOf(GetParam());
    auto root = GpuBackend::Create(**pool, 1, options);
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    root_ = *root;
  }

  void FreshCopy() {
    std::filesystem::copy_file(base_.path(), work_.path(),
                               std::filesystem::copy_options::overwrite_existing);
  }

  // Counts, over the universe's values and found flags read back, the keys
  // that match neither model (lost: unchanged by the step in flight; not
  // atomic: changed by it) and whether that step was applied part-way.
  void CountAgainstModels(const Model& before, const Model& after, const std::string& mode,
                          const std::vector<uint8_t>& values, const std::vector<uint8_t>& found,
                          Totals* totals) const {
    const uint32_t value_size = ValueSizeOf(mode);
    std::vector<uint8_t> expected(value_size);
    auto holds = [&](size_t i, uint64_t word) {
      ExpandValue(word, value_size, expected.data());
      return std::memcmp(&values[i * value_size], expected.data(), value_size) == 0;
    };
    uint64_t applied = 0, in_flight = 0;
    for (size_t i = 0; i < universe_.size(); ++i) {
      auto old_it = before.find(universe_[i]);
      auto new_it = after.find(universe_[i]);
      const bool old_present = old_it != before.end();
      const bool new_present = new_it != after.end();
      const bool matches_old =
          found[i] == old_present && (!old_present || holds(i, old_it->second));
      const bool matches_new =
          found[i] == new_present && (!new_present || holds(i, new_it->second));
      const bool changes =
          old_present != new_present || (old_present && old_it->second != new_it->second);
      if (changes) {
        ++in_flight;
        if (matches_new) ++applied;
        if (!matches_old && !matches_new) ++totals->not_atomic;
      } else if (!matches_old) {
        ++totals->lost;
      }
    }
    if (applied != 0 && applied != in_flight) ++totals->partial_batches;
  }

  // Reopens the logged table of the work pool on the GPU (open-time
  // recovery: its log replayed, a checkpoint in flight completed) and reads
  // the values and found flags of the universe, and the keys its stats count.
  void ReadLogged(std::vector<uint8_t>* values, std::vector<uint8_t>* found, uint64_t* keys) {
    // The killed child's lock goes with its mapping of the pool (see Check).
    auto db = DB::Open(work_.path(), LoggedDbOptions());
    for (int wait = 0; !db.ok() && db.status().IsBusy() && wait < 400; ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      db = DB::Open(work_.path(), LoggedDbOptions());
    }
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto table = (*db)->OpenTable("t");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_TRUE((*table)->Get(universe_, *values, *found).ok());
    auto stats = (*table)->Stats();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    *keys = stats->keys;
  }

  // Reopens the work pool on the GPU and checks it against the models of
  // `acknowledged` steps (and, for the keys of the step in flight, the model
  // after it).
  void Check(uint32_t acknowledged, const std::string& mode, Totals* totals) {
    const Model& before = models_[acknowledged];
    const Model& after = models_[std::min(acknowledged + 1, kSteps)];
    if (IsLogged(mode)) {
      const uint32_t value_size = ValueSizeOf(mode);
      std::vector<uint8_t> values(universe_.size() * value_size);
      std::vector<uint8_t> found(universe_.size());
      uint64_t keys = 0;
      ReadLogged(&values, &found, &keys);
      if (HasFatalFailure()) return;
      CountAgainstModels(before, after, mode, values, found, totals);
      EXPECT_EQ(keys, static_cast<uint64_t>(std::count(found.begin(), found.end(), uint8_t{1})));
      auto report = recovery::VerifyPool(work_.path(), nullptr);
      ASSERT_TRUE(report.ok()) << report.status().ToString();
      if (report->HasCorruption()) ++totals->failing_verify;
      totals->acknowledged_batches += acknowledged;
      return;
    }
    {
      // The killed child's lock goes with its mapping of the pool, which the
      // driver may release a moment after the child is reaped (its pages were
      // registered with CUDA): until then an open is Busy, not corrupt.
      auto pool = pm::Pool::Open(work_.path(), false, SyncMode::kBatch);
      for (int wait = 0; !pool.ok() && pool.status().IsBusy() && wait < 400; ++wait) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        pool = pm::Pool::Open(work_.path(), false, SyncMode::kBatch);
      }
      ASSERT_TRUE(pool.ok()) << pool.status().ToString();
      GpuTableOptions options;
      options.index_mode = ModeOf(mode);
      auto table = GpuBackend::Open(**pool, "t", root_, options, nullptr);
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      const uint32_t value_size = ValueSizeOf(mode);
      std::vector<uint8_t> values(universe_.size() * value_size);
      std::vector<uint8_t> found(universe_.size());
      ASSERT_TRUE((*table)
                      ->Get(reinterpret_cast<const uint8_t*>(universe_.data()), values.data(),
                            found.data(), universe_.size())
                      .ok());
      CountAgainstModels(before, after, mode, values, found, totals);
      // The key count recovery finds agrees with the keys found.
      EXPECT_EQ((*table)->Stats().keys,
                static_cast<uint64_t>(std::count(found.begin(), found.end(), uint8_t{1})));
    }
    auto pool = pm::Pool::Open(work_.path(), true, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    recovery::Report report;
    Status verified = gphash::VerifyGphash(**pool, "t", 1, root_, report, nullptr);
    if (!verified.ok() || report.HasCorruption()) ++totals->failing_verify;
    totals->acknowledged_batches += acknowledged;
  }

  testutil::TempPool base_{"gpu-kill-base"};
  testutil::TempPool work_{"gpu-kill-work"};
  uint64_t root_ = 0;
  std::vector<Model> models_;
  std::vector<uint64_t> universe_;
};

TEST_P(GphashGpuKill, EveryAcknowledgedBatchSurvivesSigkill) {
  const std::string mode = GetParam();
  // Calibration: when each step ends, without a kill.
  FreshCopy();
  std::vector<double> ends;  // ends[0]: opened; ends[s + 1]: step s acknowledged
  {
    Child child = Child::Start(work_.path(), root_, mode);
    ASSERT_GT(child.pid, 0);
    Record record;
    while (child.Next(&record)) {
      if (record.type != kEnd) ends.push_back(child.seconds());
    }
    ASSERT_EQ(child.Finish(), 0) << "calibration run";
    ASSERT_EQ(ends.size(), kSteps + 1);
    // A checkpoint starts at about every third batch: kills land beside
    // pending ones.
    if (IsLogged(mode)) EXPECT_GE(child.checkpoints, 3u);
  }
  Totals totals;
  Check(kSteps, mode, &totals);  // the completed run answers like the model
  ASSERT_EQ(totals.lost + totals.not_atomic + totals.failing_verify, 0u);
  totals = Totals{};

  // A logged child's batches take milliseconds, its start (CUDA, the
  // replay) most of a run: fewer runs keep the mode at a few seconds.
  const int iterations = IsLogged(mode) ? 10 : 32;
  std::mt19937_64 random(20261125);
  for (int i = 0; i < iterations; ++i) {
    FreshCopy();
    const uint32_t step = static_cast<uint32_t>(random() % kSteps);
    const double length = ends[step + 1] - ends[step];
    const double delay = std::uniform_real_distribution<double>(0.0, length)(random);
    Child child = Child::Start(work_.path(), root_, mode);
    ASSERT_GT(child.pid, 0);
    Record record;
    // Wait for the record before `step` (opened, or step - 1 acknowledged).
    while (child.Next(&record)) {
      if (step == 0 ? record.type == kOpened : child.acknowledged == step) break;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    kill(child.pid, SIGKILL);
    const int exit_code = child.Finish();
    if (exit_code == 0) {
      ++totals.completed;
    } else {
      ASSERT_EQ(exit_code, 128 + SIGKILL) << "child failed";
      ++totals.kills;
    }
    Check(child.acknowledged, mode, &totals);
    if (HasFatalFailure()) return;
  }
  std::printf(
      "gpu kill totals (%s): %llu kills, %llu runs completed first, %llu batches killed part-way, "
      "%llu acknowledged batches checked, %llu acknowledged writes lost, %llu operations neither "
      "old nor new, %llu pools failing verify\n",
      mode.c_str(), static_cast<unsigned long long>(totals.kills),
      static_cast<unsigned long long>(totals.completed),
      static_cast<unsigned long long>(totals.partial_batches),
      static_cast<unsigned long long>(totals.acknowledged_batches),
      static_cast<unsigned long long>(totals.lost),
      static_cast<unsigned long long>(totals.not_atomic),
      static_cast<unsigned long long>(totals.failing_verify));
  EXPECT_EQ(totals.lost, 0u);
  EXPECT_EQ(totals.not_atomic, 0u);
  EXPECT_EQ(totals.failing_verify, 0u);
  EXPECT_GT(totals.kills, 0u);
  // A logged table's batch is one atomic unit.
  if (IsLogged(mode)) EXPECT_EQ(totals.partial_batches, 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, GphashGpuKill,
                         ::testing::Values("direct", "mirror", "staged", "direct_cells",
                                           "mirror_cells", "staged_cells", "logged_host",
                                           "logged_copied", "logged_device"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace gpkv::gphash::gpu
