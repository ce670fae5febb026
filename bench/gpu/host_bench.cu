// The host-batch section of the GPU suite (see host_bench.h).
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_workload.h"
#include "bench/gpu/api_table.h"
#include "bench/gpu/gpu_modes.h"
#include "bench/gpu/host_bench.h"
#include "gpkv/db.h"
#include "gpu/device_memory.h"

namespace gpkv::bench::gpu {
namespace {

using ::gpkv::gpu::DeviceBytes;

constexpr uint64_t kSeed = 0x686f7374;    // "host"
constexpr size_t kOps = size_t{1} << 24;  // operations drawn; batches cycle through them
constexpr size_t kMaxBatch = size_t{1} << 22;
constexpr size_t kLoadBatch = size_t{1} << 20;
constexpr double kMaxSecondsPerPoint = 1.0;
constexpr size_t kSmallBatch = 4096;
constexpr size_t kLargeBatch = size_t{1} << 20;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Percentile(std::vector<double> values, double percent) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(percent / 100.0 * values.size()));
  return values[std::min(std::max<size_t>(rank, 1), values.size()) - 1];
}

// The arrays one memory kind runs from: operation keys and values, answers.
struct Arrays {
  const uint8_t* keys = nullptr;
  const uint8_t* values = nullptr;
  uint8_t* out_values = nullptr;  // kMaxBatch values
  uint8_t* out_found = nullptr;   // kMaxBatch flags
  bool on_device = false;
};

// The records and operations, in pageable, registrable and device memory.
struct Data {
  std::vector<uint8_t> load_keys, load_values;
  std::vector<uint8_t> keys, values, out_values, out_found;                  // pageable
  std::vector<uint8_t> reg_keys, reg_values, reg_out_values, reg_out_found;  // registered per table
  DeviceBytes dev_keys, dev_values, dev_out_values, dev_out_found;

  Arrays Pageable() { return {keys.data(), values.data(), out_values.data(), out_found.data()}; }
  Arrays Registered() {
    return {reg_keys.data(), reg_values.data(), reg_out_values.data(), reg_out_found.data()};
  }
  Arrays Device() {
    return {dev_keys.data(), dev_values.data(), dev_out_values.data(), dev_out_found.data(), true};
  }
  // The registrable buffers, for RegisterHostMemory.
  std::vector<std::pair<uint8_t*, size_t>> RegisteredRanges() {
    return {{reg_keys.data(), reg_keys.size()},
            {reg_values.data(), reg_values.size()},
            {reg_out_values.data(), reg_out_values.size()},
            {reg_out_found.data(), reg_out_found.size()}};
  }
};

Status MakeData(uint64_t keys, Data* data) {
  data->load_keys.resize(keys * 8);
  data->load_values.resize(keys * 8);
  for (uint64_t r = 0; r < keys; ++r) {
    EncodeKey(r, kSeed, 8, &data->load_keys[r * 8]);
    EncodeValue(r, 0, 8, &data->load_values[r * 8]);
  }
  Random random(kSeed);
  data->keys.resize(kOps * 8);
  data->values.resize(kOps * 8);
  for (size_t i = 0; i < kOps; ++i) {
    const uint64_t r = random.Uniform(keys);
    EncodeKey(r, kSeed, 8, &data->keys[i * 8]);
    EncodeValue(r, 0, 8, &data->values[i * 8]);  // updates rewrite the loaded value
  }
  data->reg_keys = data->keys;
  data->reg_values = data->values;
  data->out_values.assign(kMaxBatch * 8, 0);
  data->out_found.assign(kMaxBatch, 0);
  data->reg_out_values = data->out_values;
  data->reg_out_found = data->out_found;
  auto allocate = [](size_t bytes, DeviceBytes* out) -> Status {
    auto allocated = DeviceBytes::Allocate(bytes);
    if (!allocated.ok()) return allocated.status();
    *out = std::move(*allocated);
    return Status::OK();
  };
  GPKV_RETURN_IF_ERROR(allocate(kOps * 8, &data->dev_keys));
  GPKV_RETURN_IF_ERROR(allocate(kOps * 8, &data->dev_values));
  GPKV_RETURN_IF_ERROR(allocate(kMaxBatch * 8, &data->dev_out_values));
  GPKV_RETURN_IF_ERROR(allocate(kMaxBatch, &data->dev_out_found));
  GPKV_RETURN_IF_ERROR(data->dev_keys.CopyFromHost(data->keys.data(), kOps * 8));
  return data->dev_values.CopyFromHost(data->values.data(), kOps * 8);
}

// A table under test, as batch calls.
struct Target {
  std::string name;
  std::function<Status(const uint8_t*, uint8_t*, uint8_t*, size_t)> get;
  std::function<Status(const uint8_t*, const uint8_t*, size_t)> put;
  std::function<Status(void*, size_t)> register_memory;
  std::function<Status(void*)> unregister_memory;
};

// Checks a get batch's answers (first `count` operations from `first`).
Status CheckAnswers(const Arrays& arrays, const Data& data, size_t first, size_t count,
                    uint8_t* out_values, uint8_t* out_found, const std::string& what) {
  std::vector<uint8_t> got(count * 8), hit(count);
  if (arrays.on_device) {
    if (cudaMemcpy(got.data(), out_values, count * 8, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(hit.data(), out_found, count, cudaMemcpyDeviceToHost) != cudaSuccess) {
      return Status::IOError(what + ": cudaMemcpy of the answers failed");
    }
  } else {
    std::memcpy(got.data(), out_values, count * 8);
    std::memcpy(hit.data(), out_found, count);
  }
  for (size_t i = 0; i < count; ++i) {
    if (hit[i] != 1 || std::memcmp(&got[i * 8], &data.values[(first + i) * 8], 8) != 0) {
      return Status::Corruption(what + ": wrong answer for operation " + std::to_string(i));
    }
  }
  return Status::OK();
}

// Runs `workload` ("C" or "A") in batches of `batch` from `callers` threads
// at once, each with its own slice of the answer buffers, for max(2^22, 4
// batches) operations or kMaxSecondsPerPoint.
Status RunPoint(Target& target, const Arrays& arrays, const Data& data, const std::string& memory,
                const std::string& workload, size_t batch, int callers, std::vector<HostRow>* rows,
                std::FILE* text) {
  const size_t total = std::max(size_t{1} << 22, 4 * batch);
  const size_t batches = total / batch;
  std::atomic<size_t> next{0};
  std::vector<std::vector<double>> latencies(callers);
  std::vector<std::unique_ptr<Status>> results(callers);
  const std::string what = target.name + " " + memory + " " + workload + " batch " +
                           std::to_string(batch) + " x" + std::to_string(callers);
  const bool is_get = workload == "C";
  const size_t half = is_get ? batch : batch / 2;
  // One batch (C: a get batch; A: a get batch and an update batch).
  auto one_batch = [&](size_t first, uint8_t* out_values, uint8_t* out_found) -> Status {
    GPKV_RETURN_IF_ERROR(target.get(arrays.keys + first * 8, out_values, out_found, half));
    if (!is_get) {
      GPKV_RETURN_IF_ERROR(target.put(arrays.keys + (first + half) * 8,
                                      arrays.values + (first + half) * 8, batch - half));
    }
    return Status::OK();
  };
  // Each caller first runs one untimed batch and checks its answers (the
  // first call also sizes the table's staging), then all start together.
  std::atomic<int> ready{0};
  std::vector<double> starts(callers), ends(callers);
  auto caller = [&](int c) {
    uint8_t* out_values = arrays.out_values + c * batch * 8;
    uint8_t* out_found = arrays.out_found + c * batch;
    const size_t warm = (static_cast<size_t>(c) * batch) % kOps;
    Status warmed = one_batch(warm, out_values, out_found);
    if (warmed.ok()) {
      Status checked = CheckAnswers(arrays, data, warm, half, out_values, out_found, what);
      if (!checked.ok()) results[c] = std::make_unique<Status>(checked);
    } else {
      results[c] = std::make_unique<Status>(warmed);
    }
    ready.fetch_add(1);
    while (ready.load() < callers) std::this_thread::yield();
    starts[c] = ends[c] = Now();
    if (results[c] != nullptr) return;
    for (;;) {
      const size_t j = next.fetch_add(1);
      if (j >= batches || Now() - starts[c] > kMaxSecondsPerPoint) break;
      const size_t first = (j * batch) % kOps;
      const double t0 = Now();
      Status status = one_batch(first, out_values, out_found);
      latencies[c].push_back((Now() - t0) * 1e6);
      if (!status.ok()) {
        results[c] = std::make_unique<Status>(status);
        break;
      }
    }
    ends[c] = Now();
  };
  if (callers == 1) {
    caller(0);
  } else {
    std::vector<std::thread> threads;
    for (int c = 0; c < callers; ++c) threads.emplace_back(caller, c);
    for (std::thread& thread : threads) thread.join();
  }
  HostRow row;
  row.seconds =
      *std::max_element(ends.begin(), ends.end()) - *std::min_element(starts.begin(), starts.end());
  for (int c = 0; c < callers; ++c) {
    if (results[c] != nullptr) return *results[c];
  }
  std::vector<double> all;
  for (auto& list : latencies) all.insert(all.end(), list.begin(), list.end());
  row.table = target.name;
  row.memory = memory;
  row.workload = workload;
  row.batch = batch;
  row.callers = callers;
  row.ops = all.size() * batch;
  row.p50_us = Percentile(all, 50);
  row.p99_us = Percentile(all, 99);
  std::fprintf(text, "# %s: %.1f Mops/s, p50 %.1f us, p99 %.1f us\n", what.c_str(), row.mops(),
               row.p50_us, row.p99_us);
  std::fflush(text);
  rows->push_back(row);
  return Status::OK();
}

// LOAD of every record, host batches of 2^20 (pageable).
Status Load(Target& target, const Data& data, uint64_t keys, std::vector<HostRow>* rows,
            std::FILE* text) {
  const double start = Now();
  for (uint64_t done = 0; done < keys; done += kLoadBatch) {
    const size_t n = std::min<uint64_t>(kLoadBatch, keys - done);
    GPKV_RETURN_IF_ERROR(
        target.put(data.load_keys.data() + done * 8, data.load_values.data() + done * 8, n));
  }
  HostRow row;
  row.table = target.name;
  row.memory = "pageable";
  row.workload = "LOAD";
  row.batch = kLoadBatch;
  row.ops = keys;
  row.seconds = Now() - start;
  std::fprintf(text, "# %s: LOAD %.1f Mops/s\n", target.name.c_str(), row.mops());
  rows->push_back(row);
  return Status::OK();
}

// What one table runs: the memories and batch sizes of C and A, and the
// caller counts of the 4096-op points.
struct Plan {
  bool pageable = true, registered = true, device = true;
  std::vector<size_t> batches = {kSmallBatch, kLargeBatch};
  std::vector<int> callers = {};
};

Status RunPlan(Target& target, Data& data, const Plan& plan, std::vector<HostRow>* rows,
               std::FILE* text) {
  for (const char* workload : {"C", "A"}) {
    for (size_t batch : plan.batches) {
      if (plan.pageable) {
        GPKV_RETURN_IF_ERROR(
            RunPoint(target, data.Pageable(), data, "pageable", workload, batch, 1, rows, text));
      }
      if (plan.registered) {
        GPKV_RETURN_IF_ERROR(RunPoint(target, data.Registered(), data, "registered", workload,
                                      batch, 1, rows, text));
      }
      if (plan.device && (batch == kSmallBatch || batch == kLargeBatch)) {
        GPKV_RETURN_IF_ERROR(
            RunPoint(target, data.Device(), data, "device", workload, batch, 1, rows, text));
      }
    }
    for (int callers : plan.callers) {
      if (plan.pageable) {
        GPKV_RETURN_IF_ERROR(RunPoint(target, data.Pageable(), data, "pageable", workload,
                                      kSmallBatch, callers, rows, text));
      }
      if (plan.registered) {
        GPKV_RETURN_IF_ERROR(RunPoint(target, data.Registered(), data, "registered", workload,
                                      kSmallBatch, callers, rows, text));
      }
    }
  }
  return Status::OK();
}

// Registers the registrable buffers for the plan's run, then unregisters.
Status RunRegistered(Target& target, Data& data, const Plan& plan, std::vector<HostRow>* rows,
                     std::FILE* text) {
  std::vector<void*> registered;
  auto run = [&]() -> Status {
    if (plan.registered) {
      for (auto& [address, bytes] : data.RegisteredRanges()) {
        GPKV_RETURN_IF_ERROR(target.register_memory(address, bytes));
        registered.push_back(address);
      }
    }
    return RunPlan(target, data, plan, rows, text);
  };
  Status status = run();
  for (void* address : registered) {
    Status undone = target.unregister_memory(address);
    if (status.ok() && !undone.ok()) return undone;
  }
  return status;
}

std::string PoolPath(const std::string& dir, const std::string& name) {
  return dir + "/gpkv-host-bench-" + name + "-" + std::to_string(::getpid()) + ".gpkv";
}

uint64_t PoolBytes(uint64_t keys) { return keys * 96 + (uint64_t{256} << 20); }

// The batch calls of `table` in `db` (memory registered with the DB).
Target EngineTarget(const std::string& name, DB* db, Table* table) {
  Target target;
  target.name = name;
  target.get = [table](const uint8_t* k, uint8_t* v, uint8_t* f, size_t n) {
    return table->Get(ConstBytes(k, n * 8), MutableBytes(v, n * 8), MutableBytes(f, n));
  };
  target.put = [table](const uint8_t* k, const uint8_t* v, size_t n) {
    return table->Put(ConstBytes(k, n * 8), ConstBytes(v, n * 8));
  };
  target.register_memory = [db](void* a, size_t b) { return db->RegisterHostMemory(a, b); };
  target.unregister_memory = [db](void* a) { return db->UnregisterHostMemory(a); };
  return target;
}

// The engine on `backend` (kAuto's choice of mode on CUDA): DB + Table,
// LOAD, then the plan.
Status RunEngine(Backend backend, uint64_t keys, const std::string& dir, Data& data,
                 const Plan& plan, std::vector<HostRow>* rows, std::FILE* text) {
  const std::string name = backend == Backend::kCuda ? "engine cuda" : "engine cpu";
  Options options;
  options.backend = backend;
  options.sync_mode = SyncMode::kBatch;
  TableOptions table_options;
  table_options.expected_keys = keys;
  auto bench = BenchDb::Create(PoolPath(dir, backend == Backend::kCuda ? "cuda" : "cpu"),
                               PoolBytes(keys), options, table_options);
  if (!bench.ok()) return bench.status();
  Table* table = (*bench)->table();
  Target target = EngineTarget(name, &(*bench)->db(), table);
  GPKV_RETURN_IF_ERROR(Load(target, data, keys, rows, text));
  auto stats = table->Stats();
  if (stats.ok()) {
    std::fprintf(text, "# %s: %llu keys, load factor %.3f\n", name.c_str(),
                 static_cast<unsigned long long>(stats->keys),
                 stats->Property("gphash.load-factor").value_or(0));
  }
  return RunRegistered(target, data, plan, rows, text);
}

// A table on the CUDA backend in one index mode: LOAD, then the plan for
// each of `variants` (a name suffix and the Options::hash_gpu the pool is
// opened again with).
Status RunGpuTable(HashGpuIndexMode mode, const std::string& name, uint64_t keys,
                   const std::string& dir, Data& data,
                   const std::vector<std::pair<std::string, HashGpuOptions>>& variants,
                   const std::vector<Plan>& plans, std::vector<HostRow>* rows, std::FILE* text) {
  TableOptions table_options;
  table_options.expected_keys = keys;
  std::unique_ptr<BenchDb> bench;
  for (size_t v = 0; v < variants.size(); ++v) {
    Options options;
    options.backend = Backend::kCuda;
    options.sync_mode = SyncMode::kBatch;
    options.hash_gpu = variants[v].second;
    options.hash_gpu.index_mode = mode;
    if (v == 0) {
      auto created = BenchDb::Create(PoolPath(dir, name), PoolBytes(keys), options, table_options);
      if (!created.ok()) return created.status();
      bench = std::move(*created);
    } else {
      GPKV_RETURN_IF_ERROR(bench->Close());
      GPKV_RETURN_IF_ERROR(bench->Open(options));
    }
    Target target = EngineTarget(name + variants[v].first, &bench->db(), bench->table());
    if (v == 0) GPKV_RETURN_IF_ERROR(Load(target, data, keys, rows, text));
    GPKV_RETURN_IF_ERROR(RunRegistered(target, data, plans[v], rows, text));
  }
  return Status::OK();
}

// A logged hash table or an ordered table (gpu_modes.h ModeTableOptions) on
// the CUDA backend, on the same keys: LOAD, then the plan. `name` labels
// the rows; `gpu` tunes the DB.
Status RunTableMode(const std::string& mode, const std::string& name, const HashGpuOptions& gpu,
                    uint64_t keys, const std::string& dir, Data& data, const Plan& plan,
                    std::vector<HostRow>* rows, std::FILE* text) {
  Options options;
  options.backend = Backend::kCuda;
  options.sync_mode = SyncMode::kBatch;
  options.hash_gpu = gpu;
  auto bench =
      BenchDb::Create(PoolPath(dir, mode), PoolBytes(keys), options, ModeTableOptions(mode, keys));
  if (!bench.ok()) return bench.status();
  Target target = EngineTarget(name, &(*bench)->db(), (*bench)->table());
  GPKV_RETURN_IF_ERROR(Load(target, data, keys, rows, text));
  return RunRegistered(target, data, plan, rows, text);
}

// The logged hash table and the ordered table on the same keys, batches of
// 2^20 and 4096 (one caller and 8); the logged table also at 2^16 and 2^18,
// and again with every host batch's record written by the host
// ("logged host records": HashGpuOptions::logged_device_copy_min_ops 0)
// beside its default, which copies put batches of 2^16 and more to device
// memory first.
Status RunTables(uint64_t keys, const std::string& dir, Data& data, std::vector<HostRow>* rows,
                 std::FILE* text) {
  Plan tables;
  tables.callers = {8};
  Plan logged = tables;
  logged.batches = {kSmallBatch, size_t{1} << 16, size_t{1} << 18, kLargeBatch};
  GPKV_RETURN_IF_ERROR(RunTableMode("logged", "logged", {}, keys, dir, data, logged, rows, text));
  Plan host_records;
  host_records.device = false;
  host_records.batches = {size_t{1} << 16, size_t{1} << 18, kLargeBatch};
  HashGpuOptions records_on_host;
  records_on_host.logged_device_copy_min_ops = 0;
  GPKV_RETURN_IF_ERROR(RunTableMode("logged", "logged host records", records_on_host, keys, dir,
                                    data, host_records, rows, text));
  return RunTableMode("ordered", "ordered", {}, keys, dir, data, tables, rows, text);
}

void PrintRows(const std::vector<HostRow>& rows, std::FILE* out) {
  std::fprintf(out, "\n## Host batches\n\n");
  std::fprintf(out, "| table | memory | workload | batch | callers | Mops/s | p50 us | p99 us |\n");
  std::fprintf(out, "|---|---|---|---:|---:|---:|---:|---:|\n");
  for (const HostRow& row : rows) {
    std::fprintf(out, "| %s | %s | %s | %llu | %d | %.1f | %.1f | %.1f |\n", row.table.c_str(),
                 row.memory.c_str(), row.workload.c_str(),
                 static_cast<unsigned long long>(row.batch), row.callers, row.mops(), row.p50_us,
                 row.p99_us);
  }
}

}  // namespace

Status RunHostBatches(uint64_t keys, const std::string& dir, bool tables_only, std::FILE* text,
                      std::vector<HostRow>* rows) {
  Data data;
  GPKV_RETURN_IF_ERROR(MakeData(keys, &data));
  std::fprintf(text, "# host batches: %llu keys, %zu uniform operations\n",
               static_cast<unsigned long long>(keys), kOps);
  if (tables_only) {
    GPKV_RETURN_IF_ERROR(RunTables(keys, dir, data, rows, text));
    PrintRows(*rows, text);
    return Status::OK();
  }
  // The engine on CUDA: the batch-size sweep, device batches, several callers.
  Plan engine;
  engine.batches.clear();
  for (int log2 = 8; log2 <= 22; log2 += 2) engine.batches.push_back(size_t{1} << log2);
  engine.callers = {2, 4, 8};
  GPKV_RETURN_IF_ERROR(RunEngine(Backend::kCuda, keys, dir, data, engine, rows, text));
  Plan cpu;
  cpu.registered = false;
  cpu.device = false;
  GPKV_RETURN_IF_ERROR(RunEngine(Backend::kCpu, keys, dir, data, cpu, rows, text));
  // Each GPU mode; mirror also without the pipeline (one stream, pageable copies) and
  // over chunk sizes and lane counts.
  Plan plain;
  Plan legacy;
  legacy.registered = false;
  legacy.device = false;
  Plan large;
  large.device = false;
  large.batches = {kLargeBatch};
  std::vector<std::pair<std::string, HashGpuOptions>> mirror_variants = {{"", {}}};
  std::vector<Plan> mirror_plans = {plain};
  HashGpuOptions off;
  off.host_lanes = 0;
  mirror_variants.push_back({" legacy", off});
  mirror_plans.push_back(legacy);
  for (int log2 : {15, 16, 18, 19}) {
    HashGpuOptions options;
    options.host_chunk_ops = uint64_t{1} << log2;
    mirror_variants.push_back({" chunk 2^" + std::to_string(log2), options});
    mirror_plans.push_back(large);
  }
  // Small batches with and without zero copy (pageable staging used in place).
  Plan small;
  small.registered = false;
  small.device = false;
  small.batches = {256, 1024, kSmallBatch, 16384};
  HashGpuOptions copy;
  copy.host_zero_copy_ops = 0;
  mirror_variants.push_back({" small", {}});
  mirror_plans.push_back(small);
  mirror_variants.push_back({" small no zero-copy", copy});
  mirror_plans.push_back(small);
  for (uint32_t lanes : {2u, 4u}) {
    HashGpuOptions options;
    options.host_lanes = lanes;
    mirror_variants.push_back({" lanes " + std::to_string(lanes), options});
    mirror_plans.push_back(large);
  }
  GPKV_RETURN_IF_ERROR(RunGpuTable(HashGpuIndexMode::kMirror, "mirror", keys, dir, data,
                                   mirror_variants, mirror_plans, rows, text));
  GPKV_RETURN_IF_ERROR(RunGpuTable(HashGpuIndexMode::kDirect, "direct", keys, dir, data, {{"", {}}},
                                   {plain}, rows, text));
  GPKV_RETURN_IF_ERROR(RunGpuTable(HashGpuIndexMode::kStaged, "staged", keys, dir, data, {{"", {}}},
                                   {plain}, rows, text));
  GPKV_RETURN_IF_ERROR(RunTables(keys, dir, data, rows, text));
  PrintRows(*rows, text);
  return Status::OK();
}

std::string HostJsonLines(const std::string& device, uint64_t keys,
                          const std::vector<HostRow>& rows) {
  std::ostringstream json;
  for (const HostRow& row : rows) {
    json << "{\"kind\":\"host\",\"device\":\"" << device << "\",\"keys\":" << keys
         << ",\"table\":\"" << row.table << "\",\"memory\":\"" << row.memory << "\",\"workload\":\""
         << row.workload << "\",\"batch\":" << row.batch << ",\"callers\":" << row.callers
         << ",\"ops\":" << row.ops << ",\"seconds\":" << row.seconds << ",\"mops\":" << row.mops()
         << ",\"p50_us\":" << row.p50_us << ",\"p99_us\":" << row.p99_us << "}\n";
  }
  return json.str();
}

}  // namespace gpkv::bench::gpu
