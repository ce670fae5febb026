// The GPU suite's measurements (see gpu_bench.h): the link calibration, the
// load-factor probes and the timed points of each mode. CUDA code, built
// with the CUDA backend only; gpu_bench.cc is the entry in every build.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_workload.h"
#include "bench/gpu/api_table.h"
#include "bench/gpu/gpu_bench_report.h"
#include "bench/gpu/gpu_bench_run.h"
#include "bench/gpu/gpu_modes.h"
#include "bench/gpu/host_bench.h"
#include "bench/gpu/link_calibration.h"
#include "bench/gpu/naive_table.h"
#include "gpkv/db.h"
#include "gpu/device_memory.h"

namespace gpkv::bench::gpu {
namespace {

using ::gpkv::gpu::DeviceBytes;

constexpr uint64_t kSeed = 0x67706b76;  // "gpkv"
constexpr size_t kOpsPerPoint = size_t{1} << 22;
// Operations drawn per workload. A point times the first kTimedSpan (at most
// 2 * 2^22) and warms a BktCache on the rest, so the cache never sees the
// timed keys in advance.
constexpr size_t kOpArray = size_t{1} << 25;
constexpr size_t kTimedSpan = size_t{1} << 23;

// The configuration of a run, and where its text goes.
struct Args : GpuBenchConfig {
  std::FILE* text = stdout;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Host and device copies of the keys and values of a list of records.
struct OpSet {
  std::vector<uint64_t> records;
  std::vector<uint8_t> keys;
  std::vector<uint8_t> values;
  DeviceBytes device_keys;
  DeviceBytes device_values;
};

Status MakeOpSet(std::vector<uint64_t> records, OpSet* set) {
  set->records = std::move(records);
  size_t count = set->records.size();
  set->keys.resize(count * 8);
  set->values.resize(count * 8);
  for (size_t i = 0; i < count; ++i) {
    EncodeKey(set->records[i], kSeed, 8, &set->keys[i * 8]);
    EncodeValue(set->records[i], 0, 8, &set->values[i * 8]);
  }
  auto keys = DeviceBytes::Allocate(count * 8);
  if (!keys.ok()) return keys.status();
  auto values = DeviceBytes::Allocate(count * 8);
  if (!values.ok()) return values.status();
  set->device_keys = std::move(keys.value());
  set->device_values = std::move(values.value());
  GPKV_RETURN_IF_ERROR(set->device_keys.CopyFromHost(set->keys.data(), count * 8));
  return set->device_values.CopyFromHost(set->values.data(), count * 8);
}

// Copies `bytes` of device memory to the host.
Status CopyToHost(void* host, const void* device, size_t bytes) {
  if (cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    return Status::IOError("cudaMemcpy of answers to the host failed");
  }
  return Status::OK();
}

// Where a get batch's answers go: device memory (GPU runs) or host memory.
struct Outputs {
  uint8_t* values = nullptr;
  uint8_t* found = nullptr;
  bool on_device = false;
};

// Checks one get batch's answers against the records.
Status CheckAnswers(const OpSet& set, size_t first, size_t count, const Outputs& out,
                    const std::string& what) {
  std::vector<uint8_t> got(count * 8), hit(count);
  if (out.on_device) {
    GPKV_RETURN_IF_ERROR(CopyToHost(got.data(), out.values, count * 8));
    GPKV_RETURN_IF_ERROR(CopyToHost(hit.data(), out.found, count));
  } else {
    std::memcpy(got.data(), out.values, count * 8);
    std::memcpy(hit.data(), out.found, count);
  }
  for (size_t i = 0; i < count; ++i) {
    if (hit[i] != 1 || std::memcmp(&got[i * 8], &set.values[(first + i) * 8], 8) != 0) {
      return Status::Corruption(what + ": wrong answer for op " + std::to_string(i));
    }
  }
  return Status::OK();
}

// Untimed operations of a point's workload that warm a BktCache first: two
// reload periods, at least this many.
constexpr size_t kWarmupOps = size_t{1} << 22;

// The counters of a table under test: a gpkv table's Stats() properties,
// the naive table's own (no cache of hot buckets).
Result<HashCounters> CountersOf(const ApiTable& table) { return table.Counters(); }
Result<HashCounters> CountersOf(const NaiveTable& table) {
  const NaiveStats stats = table.Stats();
  HashCounters counters;
  counters.keys = stats.keys;
  counters.slots = stats.slots;
  counters.load_factor = stats.load_factor;
  counters.levels = stats.levels;
  counters.resizes = stats.resizes;
  counters.index_bytes = stats.index_bytes;
  return counters;
}

// Operations between two reloads of a table's cache of hot buckets.
uint64_t ReloadOps(const ApiTable& table) { return table.tuning().bkt_cache_reload_ops; }
uint64_t ReloadOps(const NaiveTable&) { return 0; }

// The gphash.write-* properties of a table: what a logged table's write
// batches spent in each step since open (all zero for other tables).
struct WriteTimes {
  double batches = 0;
  // total, checkpoint, record, publish, sync, index, and the checkpoint's
  // scan, wait and publish
  double ns[9] = {};
};
WriteTimes WriteTimesOf(const ApiTable& table) {
  WriteTimes times;
  auto stats = table.table().Stats();
  if (!stats.ok()) return times;
  times.batches = stats->Property("gphash.write-batches").value_or(0);
  const char* names[] = {"gphash.write-ns",
                         "gphash.write-checkpoint-ns",
                         "gphash.write-record-ns",
                         "gphash.write-publish-ns",
                         "gphash.write-sync-ns",
                         "gphash.write-index-ns",
                         "gphash.write-checkpoint-scan-ns",
                         "gphash.write-checkpoint-wait-ns",
                         "gphash.write-checkpoint-publish-ns"};
  for (int i = 0; i < 9; ++i) times.ns[i] = stats->Property(names[i]).value_or(0);
  return times;
}
WriteTimes WriteTimesOf(const NaiveTable&) { return {}; }

// Microseconds per batch of each step between two readings.
WritePhases PhasesBetween(const WriteTimes& before, const WriteTimes& after) {
  WritePhases phases;
  phases.batches = after.batches - before.batches;
  if (phases.batches <= 0) return WritePhases();
  auto per_batch = [&](int i) { return (after.ns[i] - before.ns[i]) / phases.batches / 1e3; };
  phases.total_us = per_batch(0);
  phases.checkpoint_us = per_batch(1);
  phases.record_us = per_batch(2);
  phases.publish_us = per_batch(3);
  phases.sync_us = per_batch(4);
  phases.index_us = per_batch(5);
  phases.scan_us = per_batch(6);
  phases.wait_us = per_batch(7);
  phases.ckpt_publish_us = per_batch(8);
  return phases;
}

// The timed part of a point as NVTX ranges "gpkv-timed" / "<what> batch
// <n> ops <m>": `ncu --nvtx --nvtx-include gpkv-timed/` then counts the pool
// (system-memory) transactions of exactly those kernels
// (scripts/gpu-pool-transactions.py).
class TimedRange {
 public:
  TimedRange(const std::string& what, size_t batch, size_t ops) {
    nvtxRangePushA("gpkv-timed");
    const std::string label =
        what + " batch " + std::to_string(batch) + " ops " + std::to_string(ops);
    nvtxRangePushA(label.c_str());
  }
  ~TimedRange() {
    nvtxRangePop();
    nvtxRangePop();
  }
};

// Times `run(first)` over `ops` operations in batches of `batch` into *row:
// after a warm-up of kWarmupOps when the table has a BktCache, with the
// cache's reads per get of the timed part (gets_per_op: the share of the
// operations that are gets).
template <typename Table, typename Run>
Status TimePoint(Table& table, size_t batch, size_t ops, double gets_per_op, Run&& run, Row* row,
                 const std::string& what) {
  auto initial = CountersOf(table);
  if (!initial.ok()) return initial.status();
  const bool cached = initial->cache_buckets != 0;
  if (cached) {
    const size_t warmup = std::max<size_t>(kWarmupOps, 2 * ReloadOps(table));
    for (size_t done = 0; done < warmup; done += batch) {
      GPKV_RETURN_IF_ERROR(run(kTimedSpan + done % (kOpArray - kTimedSpan)));
    }
  }
  const auto before = cached ? CountersOf(table) : std::move(initial);
  if (!before.ok()) return before.status();
  const WriteTimes times_before = WriteTimesOf(table);
  double start = Now();
  {
    TimedRange range(what, batch, ops);
    for (size_t done = 0; done < ops; done += batch) GPKV_RETURN_IF_ERROR(run(done % kTimedSpan));
  }
  row->seconds = Now() - start;
  row->batch = batch;
  row->ops = ops;
  row->write_phases = PhasesBetween(times_before, WriteTimesOf(table));
  if (cached && gets_per_op > 0) {
    const auto after = CountersOf(table);
    if (!after.ok()) return after.status();
    const double gets = gets_per_op * static_cast<double>(ops);
    row->cache_reads_per_get =
        static_cast<double>(after->cache_get_reads - before->cache_get_reads) / gets;
    row->pool_reads_per_get =
        static_cast<double>(after->cache_get_pool_reads - before->cache_get_pool_reads) / gets;
  }
  return Status::OK();
}

// Runs `ops` operations of set in batches of `batch` (after one untimed
// batch, whose get answers are checked). Batches come from device memory
// when out.on_device, else from host memory.
template <typename Table>
Status TimeBatches(Table& table, const OpSet& set, bool is_get, size_t batch, size_t ops,
                   const Outputs& out, const std::string& what, Row* row) {
  const uint8_t* keys = out.on_device ? set.device_keys.data() : set.keys.data();
  const uint8_t* values = out.on_device ? set.device_values.data() : set.values.data();
  auto run = [&](size_t first) -> Status {
    if (is_get) return table.Get(keys + first * 8, out.values, out.found, batch);
    return table.Put(keys + first * 8, values + first * 8, batch);
  };
  GPKV_RETURN_IF_ERROR(run(0));
  if (is_get) GPKV_RETURN_IF_ERROR(CheckAnswers(set, 0, batch, out, what));
  return TimePoint(table, batch, ops, is_get ? 1.0 : 0.0, run, row, what);
}

// YCSB A: each batch is one get batch of half the operations, then one
// update batch of the other half (uniform records; the first get's answers
// are checked).
template <typename Table>
Status TimeYcsbA(Table& table, const OpSet& set, size_t batch, size_t ops, const Outputs& out,
                 const std::string& what, Row* row) {
  const uint8_t* keys = out.on_device ? set.device_keys.data() : set.keys.data();
  const uint8_t* values = out.on_device ? set.device_values.data() : set.values.data();
  const size_t half = batch / 2;
  auto run = [&](size_t first) -> Status {
    GPKV_RETURN_IF_ERROR(table.Get(keys + first * 8, out.values, out.found, half));
    return table.Put(keys + (first + half) * 8, values + (first + half) * 8, half);
  };
  GPKV_RETURN_IF_ERROR(run(0));
  GPKV_RETURN_IF_ERROR(CheckAnswers(set, 0, half, out, what));
  return TimePoint(table, batch, ops, 0.5, run, row, what);
}

// LOAD, then the sweep of batch sizes, on one open table.
template <typename Table>
Status RunWorkloads(const Args& args, const std::string& mode, Table& table, const OpSet& load,
                    const OpSet& uniform, const OpSet& zipf, const Outputs& out,
                    std::vector<Row>* rows) {
  const uint8_t* load_keys = out.on_device ? load.device_keys.data() : load.keys.data();
  const uint8_t* load_values = out.on_device ? load.device_values.data() : load.values.data();
  const WriteTimes load_before = WriteTimesOf(table);
  double start = Now();
  for (size_t done = 0; done < args.keys; done += kLoadBatch) {
    size_t count = std::min<size_t>(kLoadBatch, args.keys - done);
    GPKV_RETURN_IF_ERROR(table.Put(load_keys + done * 8, load_values + done * 8, count));
  }
  rows->push_back({mode, "LOAD (insert)", kLoadBatch, args.keys, Now() - start});
  rows->back().write_phases = PhasesBetween(load_before, WriteTimesOf(table));
  const auto stats = CountersOf(table);
  if (!stats.ok()) return stats.status();
  if (stats->keys != args.keys) {
    return Status::Corruption("after LOAD the table holds " + std::to_string(stats->keys) +
                              " keys, not " + std::to_string(args.keys));
  }
  if (IsTableMode(mode)) {
    std::fprintf(args.text, "# %s: loaded %llu keys\n", mode.c_str(),
                 static_cast<unsigned long long>(stats->keys));
  } else {
    std::fprintf(args.text, "# %s: loaded %llu keys, load factor %.3f, %u levels, %llu resizes\n",
                 mode.c_str(), static_cast<unsigned long long>(stats->keys), stats->load_factor,
                 stats->levels, static_cast<unsigned long long>(stats->resizes));
  }
  for (int log2 : args.batch_log2) {
    size_t batch = size_t{1} << log2;
    size_t ops = std::max(kOpsPerPoint, 2 * batch);
    Row row;
    row.mode = mode;
    row.workload = "C get uniform";
    GPKV_RETURN_IF_ERROR(
        TimeBatches(table, uniform, true, batch, ops, out, mode + " C uniform", &row));
    rows->push_back(row);
    row = Row{mode, "C get zipfian"};
    GPKV_RETURN_IF_ERROR(
        TimeBatches(table, zipf, true, batch, ops, out, mode + " C zipfian", &row));
    rows->push_back(row);
    row = Row{mode, "update uniform"};
    GPKV_RETURN_IF_ERROR(
        TimeBatches(table, uniform, false, batch, ops, out, mode + " update uniform", &row));
    rows->push_back(row);
    row = Row{mode, "A uniform (50% update)"};
    GPKV_RETURN_IF_ERROR(TimeYcsbA(table, uniform, batch, ops, out, mode + " A uniform", &row));
    rows->push_back(row);
    row = Row{mode, "A zipfian (50% update)"};
    GPKV_RETURN_IF_ERROR(TimeYcsbA(table, zipf, batch, ops, out, mode + " A zipfian", &row));
    rows->push_back(row);
  }
  return Status::OK();
}

// RunWorkloads with the get answers in device memory (GPU tables).
template <typename Table>
Status RunOnDevice(const Args& args, const std::string& mode, Table& table, const OpSet& load,
                   const OpSet& uniform, const OpSet& zipf, std::vector<Row>* rows) {
  size_t largest = size_t{1} << *std::max_element(args.batch_log2.begin(), args.batch_log2.end());
  auto out_values = DeviceBytes::Allocate(largest * 8);
  auto out_found = DeviceBytes::Allocate(largest);
  if (!out_values.ok()) return out_values.status();
  if (!out_found.ok()) return out_found.status();
  Outputs out{out_values->data(), out_found->data(), true};
  return RunWorkloads(args, mode, table, load, uniform, zipf, out, rows);
}

// The pool file of one mode, in args.dir (staged mode: args.staged_dir when
// given), and its size.
std::string PoolPath(const Args& args, const std::string& mode) {
  const std::string& dir =
      BaseMode(mode) == "staged" && !args.staged_dir.empty() ? args.staged_dir : args.dir;
  return dir + "/gpkv-gpu-bench-" + mode + "-" + std::to_string(::getpid()) + ".gpkv";
}
uint64_t PoolBytes(uint64_t keys) { return keys * 96 + (uint64_t{256} << 20); }

// A table of `keys` expected keys in a pool of its own, opened with `options`
// (its table options: the mode's, gpu_modes.h ModeTableOptions).
Result<std::unique_ptr<BenchDb>> CreateBenchDb(const Args& args, const std::string& mode,
                                               uint64_t keys, const Options& options) {
  return BenchDb::Create(PoolPath(args, mode), PoolBytes(keys), options,
                         ModeTableOptions(BaseMode(mode), keys));
}

// The DB options of the cpu mode: the CPU backend on all hardware threads.
Options CpuOptions() {
  Options options;
  options.backend = Backend::kCpu;
  options.cpu_threads = 0;
  return options;
}

// The stats property `name` of `table`, 0 when it has none.
double PropertyOf(Table& table, const std::string& name) {
  auto stats = table.Stats();
  if (!stats.ok()) return 0;
  return stats->Property(name).value_or(0);
}

// A logged table's log filled with update batches of kLoadBatch until the
// next would not fit (so that the reopen replays a full log); *fill: the
// log's bytes over its capacity then.
Status FillLog(const Args& args, const ApiTable& table, const OpSet& uniform, double* fill) {
  const double capacity = PropertyOf(table.table(), "gphash.log-capacity");
  // A record of kLoadBatch 8/8-byte pairs: its 24-byte header, then its keys
  // and values (docs/FORMAT.md).
  const double record = static_cast<double>(kLoadBatch) * 16 + 24;
  for (size_t done = 0;; done += kLoadBatch) {
    const double bytes = PropertyOf(table.table(), "gphash.log-bytes");
    if (bytes + record > capacity) {
      std::fprintf(args.text, "# logged: log filled to %.1f of %.1f MiB before the reopen\n",
                   bytes / 1048576.0, capacity / 1048576.0);
      *fill = bytes / capacity;
      return Status::OK();
    }
    const size_t first = done % kTimedSpan;
    GPKV_RETURN_IF_ERROR(table.Put(uniform.device_keys.data() + first * 8,
                                   uniform.device_values.data() + first * 8, kLoadBatch));
  }
}

Status RunGpuMode(const Args& args, const std::string& mode, const OpSet& load,
                  const OpSet& uniform, const OpSet& zipf, std::vector<Row>* rows,
                  std::vector<OpenRow>* opens) {
  Options options;
  if (IsTableMode(mode)) {
    options.backend = Backend::kCuda;
  } else {
    auto mode_options = ParseGpuMode(mode);
    if (!mode_options.ok()) return mode_options.status();
    options = mode_options->Apply(Options());
  }
  double open_start = Now();
  auto bench = CreateBenchDb(args, mode, args.keys, options);
  if (!bench.ok()) return bench.status();
  const double open_seconds = Now() - open_start;
  ApiTable table((*bench)->table(), options.hash_gpu);
  auto opened = table.Counters();
  if (!opened.ok()) return opened.status();
  auto info = (*bench)->db().Info();
  if (!info.ok()) return info.status();
  std::fprintf(args.text, "# %s: open %.3f s, index %.1f MiB, pool %.1f GiB (%s)\n", mode.c_str(),
               open_seconds, opened->index_bytes / 1048576.0, info->pool_size / 1073741824.0,
               (*bench)->path().c_str());
  if (mode == "logged") {
    // The first write batch from device memory after an open waits for the
    // pool's registration, which the open starts on a thread of its own
    // (0.4-0.8 s for a fresh pool of 2^24 keys on an H200): LOAD starts once
    // it is done, so that LOAD measures the writes, not how long the setup
    // between the open and LOAD happened to take.
    const double wait_start = Now();
    while (PropertyOf(table.table(), "gphash.registration-ns") == 0 && Now() - wait_start < 60) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::fprintf(args.text,
                 "# logged: the pool's registration took %.3f s after the open; LOAD waited %.3f "
                 "s for it\n",
                 PropertyOf(table.table(), "gphash.registration-ns") * 1e-9, Now() - wait_start);
  }
  GPKV_RETURN_IF_ERROR(RunOnDevice(args, mode, table, load, uniform, zipf, rows));
  const auto cache = table.Counters();
  if (!cache.ok()) return cache.status();
  if (cache->cache_buckets != 0) {
    std::fprintf(args.text,
                 "# %s: BktCache of %llu of %llu buckets (%.1f MiB), %llu reloads loaded %llu "
                 "buckets\n",
                 mode.c_str(), static_cast<unsigned long long>(cache->cache_buckets),
                 static_cast<unsigned long long>(cache->cache_table_buckets),
                 cache->cache_buckets * cache->index_bytes /
                     static_cast<double>(cache->cache_table_buckets) / 1048576.0,
                 static_cast<unsigned long long>(cache->cache_reloads),
                 static_cast<unsigned long long>(cache->cache_buckets_loaded));
  }
  // One point with the batch in host memory (copies in and out included).
  size_t batch = size_t{1} << 20;
  std::vector<uint8_t> values(batch * 8), found(batch);
  double start = Now();
  for (size_t done = 0; done < kOpsPerPoint; done += batch) {
    GPKV_RETURN_IF_ERROR(
        table.Get(uniform.keys.data() + done * 8, values.data(), found.data(), batch));
  }
  rows->push_back({mode, "C get uniform, host batch", batch, kOpsPerPoint, Now() - start});
  OpenRow open;
  open.mode = mode;
  if (mode == "logged") {
    // Pool bytes written per operation of a 2^20 batch: its share of the
    // record (16 bytes and the 24-byte header's share), and its share of the
    // image (of every key) that a checkpoint writes once per full log.
    const double image_bytes = static_cast<double>(args.keys) * 16 + 64;
    const double log_ops = PropertyOf(table.table(), "gphash.log-batches") *
                           PropertyOf(table.table(), "gphash.batch-entries");
    std::fprintf(args.text,
                 "# logged: %.0f checkpoints since open, image %.1f MiB; pool bytes written per "
                 "operation: %.2f (record) + %.2f (image, once per full log) = %.2f\n",
                 PropertyOf(table.table(), "gphash.checkpoints"), image_bytes / 1048576.0,
                 16 + 24.0 / kLoadBatch, image_bytes / log_ops,
                 16 + 24.0 / kLoadBatch + image_bytes / log_ops);
    std::fprintf(args.text,
                 "# logged: %.0f records from device memory were copied through pageable memory "
                 "(a pool the driver cannot pin)\n",
                 PropertyOf(table.table(), "gphash.pageable-records"));
    GPKV_RETURN_IF_ERROR(FillLog(args, table, uniform, &open.log_fill));
  }
  // And an open of the loaded pool (the table's recovery scan; mirror build;
  // a logged table's image read and log replayed).
  GPKV_RETURN_IF_ERROR((*bench)->Close());
  open_start = Now();
  GPKV_RETURN_IF_ERROR((*bench)->Open(options));
  open.seconds = Now() - open_start;
  std::fprintf(args.text, "# %s: reopen of the loaded table %.3f s\n", mode.c_str(), open.seconds);
  if (mode == "logged") {
    // The table's part of that open (the rest is the pool's).
    Table& reopened = *(*bench)->table();
    open.check_seconds = PropertyOf(reopened, "gphash.open-check-ns") * 1e-9;
    open.index_seconds = PropertyOf(reopened, "gphash.open-index-ns") * 1e-9;
    open.image_seconds = PropertyOf(reopened, "gphash.open-image-ns") * 1e-9;
    open.replay_seconds = PropertyOf(reopened, "gphash.open-replay-ns") * 1e-9;
    std::fprintf(args.text,
                 "# logged: the table's open: image checked %.3f s, index made %.3f s, image "
                 "put into the index %.3f s, log replayed %.3f s\n",
                 open.check_seconds, open.index_seconds, open.image_seconds, open.replay_seconds);
  }
  opens->push_back(open);
  return Status::OK();
}

// The load factor a table of ~2^18 expected keys reaches before its first
// resize: distinct keys in batches of 1/16 of the free slots (so the last
// batches are small); the answer is the load factor before the batch that
// resized, within that batch's size.
constexpr uint64_t kProbeKeys = uint64_t{1} << 18;

Status ProbeLoadFactor(const ApiTable& table, const std::string& mode,
                       std::vector<LoadFactorRow>* out) {
  LoadFactorRow row;
  row.mode = mode;
  std::vector<uint8_t> keys, values;
  uint64_t next = 0;
  for (;;) {
    const auto before = table.Counters();
    if (!before.ok()) return before.status();
    if (next > 4 * before->slots) break;
    uint64_t batch = std::max<uint64_t>(1, (before->slots - before->keys) / 16);
    keys.resize(batch * 8);
    values.resize(batch * 8);
    for (uint64_t i = 0; i < batch; ++i, ++next) {
      EncodeKey(next, kSeed ^ 0x1f, 8, &keys[i * 8]);
      EncodeValue(next, 0, 8, &values[i * 8]);
    }
    GPKV_RETURN_IF_ERROR(table.Put(keys.data(), values.data(), batch));
    const auto after = table.Counters();
    if (!after.ok()) return after.status();
    if (after->resizes > 0) {
      row.resized = true;
      row.load_factor = before->load_factor;
      row.batch = batch;
      row.slots = before->slots;
      break;
    }
  }
  out->push_back(row);
  return Status::OK();
}

// One probe per mode, on a small pool of its own in args.dir.
Status ProbeModeLoadFactor(const Args& args, const std::string& mode,
                           std::vector<LoadFactorRow>* out) {
  Options options = CpuOptions();
  if (mode != "cpu") {
    auto mode_options = ParseGpuMode(mode);
    if (!mode_options.ok()) return mode_options.status();
    options = mode_options->Apply(Options());
  }
  auto bench = CreateBenchDb(args, mode + "-lf", kProbeKeys, options);
  if (!bench.ok()) return bench.status();
  return ProbeLoadFactor(ApiTable((*bench)->table(), options.hash_gpu), mode, out);
}

// The CPU backend on the same records, host batches, all hardware threads.
Status RunCpuMode(const Args& args, const OpSet& load, const OpSet& uniform, const OpSet& zipf,
                  std::vector<Row>* rows) {
  const Options options = CpuOptions();
  auto bench = CreateBenchDb(args, "cpu", args.keys, options);
  if (!bench.ok()) return bench.status();
  const int threads = static_cast<int>(std::thread::hardware_concurrency());
  std::fprintf(args.text, "# cpu: the CPU backend on %d threads\n", threads);
  size_t largest = size_t{1} << *std::max_element(args.batch_log2.begin(), args.batch_log2.end());
  std::vector<uint8_t> values(largest * 8), found(largest);
  Outputs out{values.data(), found.data(), false};
  ApiTable table((*bench)->table(), options.hash_gpu);
  return RunWorkloads(args, "cpu", table, load, uniform, zipf, out, rows);
}

// The naive baseline on the same records: device batches, a registered file
// in the same directory as the pools.
Status RunNaiveMode(const Args& args, const OpSet& load, const OpSet& uniform, const OpSet& zipf,
                    std::vector<Row>* rows) {
  auto table = NaiveTable::Create(args.dir, args.keys);
  if (!table.ok()) return table.status();
  std::fprintf(args.text, "# naive: %llu slots (%.1f MiB registered file)\n",
               static_cast<unsigned long long>((*table)->Stats().slots),
               (*table)->bytes() / 1048576.0);
  return RunOnDevice(args, "naive", **table, load, uniform, zipf, rows);
}
// `status` with what failed in front of its message.
Status Within(const std::string& what, const Status& status) {
  return Status(status.code(), what + ": " + status.message());
}

}  // namespace

Status RunGpuBenchOnDevice(const GpuBenchConfig& config, std::FILE* text, std::string* json_lines) {
  Args args;
  static_cast<GpuBenchConfig&>(args) = config;
  args.text = text;
  GPKV_RETURN_IF_ERROR(::gpkv::gpu::DeviceUsable());
  const std::string device = ::gpkv::gpu::DeviceDescription();
  std::fprintf(text, "# device: %s\n# keys: %llu, pool dir %s\n", device.c_str(),
               static_cast<unsigned long long>(args.keys), args.dir.c_str());

  // The index of a table loaded with --keys 8-byte keys at load factor 2/3:
  // 24-byte slots (key, value, slot word), 1.5 slots per key.
  const uint64_t index_bytes = args.keys * 36;
  std::vector<LinkResult> link;
  if (args.calibrate) {
    std::vector<uint64_t> regions = {uint64_t{256} << 20, uint64_t{512} << 20, uint64_t{1} << 30,
                                     uint64_t{4} << 30, index_bytes};
    std::sort(regions.begin(), regions.end());
    regions.erase(std::unique(regions.begin(), regions.end()), regions.end());
    Status calibrated = CalibrateLink(args.dir, regions, &link);
    if (!calibrated.ok()) return Within("link calibration", calibrated);
  }

  std::vector<Row> rows;
  std::vector<OpenRow> opens;
  std::vector<LoadFactorRow> load_factors;
  std::vector<HostRow> host_rows;
  auto named = [&](const char* name) {
    return std::find(args.modes.begin(), args.modes.end(), name) != args.modes.end();
  };
  const bool host_tables = named("host-tables") && !named("host");
  const bool host = named("host") || host_tables;
  std::vector<std::string> modes;
  for (const std::string& mode : args.modes) {
    if (mode != "host" && mode != "host-tables") modes.push_back(mode);
  }
  if (modes.empty()) {  // the host-batch section alone
    PrintLinkCalibration(link, index_bytes, text);
    Status ran = RunHostBatches(args.keys, args.dir, host_tables, text, &host_rows);
    if (!ran.ok()) return Within("host batches", ran);
    *json_lines = JsonLines(device, args.keys, link, index_bytes, load_factors, rows) +
                  HostJsonLines(device, args.keys, host_rows);
    return Status::OK();
  }

  // Records: LOAD inserts 0..keys-1; the gets and updates draw from them.
  std::vector<uint64_t> records(args.keys);
  for (uint64_t i = 0; i < args.keys; ++i) records[i] = i;
  Random random(kSeed);
  std::vector<uint64_t> uniform_records(kOpArray), zipf_records(kOpArray);
  ScrambledZipfianGenerator zipfian(0, args.keys - 1);
  for (size_t i = 0; i < kOpArray; ++i) {
    uniform_records[i] = random.Uniform(args.keys);
    zipf_records[i] = zipfian.Next(random);
  }
  OpSet load, uniform, zipf;
  GPKV_RETURN_IF_ERROR(MakeOpSet(std::move(records), &load));
  GPKV_RETURN_IF_ERROR(MakeOpSet(std::move(uniform_records), &uniform));
  GPKV_RETURN_IF_ERROR(MakeOpSet(std::move(zipf_records), &zipf));

  for (const std::string& mode : modes) {
    if (mode == "naive" || IsTableMode(mode)) continue;
    Status probed = ProbeModeLoadFactor(args, mode, &load_factors);
    if (!probed.ok()) return Within(mode + " load factor", probed);
  }
  for (const std::string& mode : modes) {
    Status ran = mode == "cpu"     ? RunCpuMode(args, load, uniform, zipf, &rows)
                 : mode == "naive" ? RunNaiveMode(args, load, uniform, zipf, &rows)
                                   : RunGpuMode(args, mode, load, uniform, zipf, &rows, &opens);
    if (!ran.ok()) return Within(mode + " mode", ran);
  }

  PrintLinkCalibration(link, index_bytes, text);
  PrintTransactionModel(text);
  PrintRows(rows, text);
  PrintWritePhases(rows, text);
  PrintNaiveRatios(rows, text);
  PrintTableModeRatios(rows, text);
  PrintCpuRatios(rows, link, load_factors, index_bytes, text);
  if (host) {
    Status ran = RunHostBatches(args.keys, args.dir, host_tables, text, &host_rows);
    if (!ran.ok()) return Within("host batches", ran);
  }
  *json_lines = JsonLines(device, args.keys, link, index_bytes, load_factors, rows, opens) +
                HostJsonLines(device, args.keys, host_rows);
  return Status::OK();
}

}  // namespace gpkv::bench::gpu
