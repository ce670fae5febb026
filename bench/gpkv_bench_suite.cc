// What the suites of gpkv-bench share (see gpkv_bench_suite.h).
#include "bench/gpkv_bench_suite.h"

#include <algorithm>
#include <memory>
#include <string>

namespace gpkv::bench {

uint64_t PoolSizeFor(const BenchConfig& config, uint32_t key_size, uint32_t value_size) {
  if (config.pool_size > 0) return config.pool_size;
  // A slot holds the key, an inline value (<= 8 bytes) or a value reference,
  // and a state word; ~1.25 slots per key at the expected load; x3 for one
  // resize (a new top level twice the size). Out-of-line values: two copies
  // (replaced out of place) with a header.
  const uint64_t inline_value = std::min<uint32_t>(value_size, 8);
  const uint64_t slot_bytes = key_size + inline_value + 8;
  const uint64_t per_key =
      3 * slot_bytes * 5 / 4 + (value_size > 8 ? 2 * (uint64_t{value_size} + 8) : 0);
  const uint64_t records = config.keys + config.ops_or_keys() / 10;  // D's inserts
  return records * per_key + (uint64_t{256} << 20);
}

uint64_t RunSeed(uint64_t seed, const std::string& workload, const std::string& distribution) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : workload + "/" + distribution) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return Mix64(seed ^ h);
}

DriverConfig MakeDriverConfig(const BenchConfig& config, uint32_t key_size, uint32_t value_size) {
  DriverConfig driver;
  driver.key_size = key_size;
  driver.value_size = value_size;
  driver.expected_keys = config.keys;
  driver.threads = config.threads;
  driver.pool_path = config.pool_path;
  driver.pool_size = PoolSizeFor(config, key_size, value_size);
  driver.backend = config.backend;
  driver.ordered_gpu = config.ordered_gpu;
  driver.rocksdb_dir = config.rocksdb_dir;
  driver.logged_log_batches = config.hash_log_batches;
  return driver;
}

bool RunSequence(const BenchConfig& config, const std::string& system, uint32_t key_size,
                 uint32_t value_size, const std::vector<Step>& steps, ProgressSink* progress,
                 BenchReport* report) {
  const std::string sizes =
      std::to_string(key_size) + " B keys / " + std::to_string(value_size) + " B values";
  const DriverInfo* info = FindDriver(system);
  if (info == nullptr) {
    report->notes.push_back("system " + system + ": not built into this program");
    return false;
  }
  bool listed = false;
  for (const auto& entry : report->systems) listed |= entry.first == system;
  if (!listed) report->systems.push_back({system, info->durability});
  auto driver = info->create(MakeDriverConfig(config, key_size, value_size));
  if (!driver.ok()) {
    report->notes.push_back("system " + system + " (" + sizes +
                            "): could not be created: " + driver.status().ToString());
    return false;
  }
  RecordState state;
  bool ok = true;
  for (size_t i = 0; i < steps.size() && ok; ++i) {
    const Step& step = steps[i];
    RunParams params;
    params.ops = step.ops;
    params.batch_size = step.batch;
    params.key_size = key_size;
    params.value_size = value_size;
    params.key_seed = config.seed;
    params.run_seed = RunSeed(config.seed, step.spec.name, KeyChoiceName(step.spec.key_choice));
    params.max_seconds = step.max_seconds;
    if (progress != nullptr) {
      progress->Start(
          system + " " + step.spec.name +
              (step.spec.is_load ? "" : std::string(" ") + KeyChoiceName(step.spec.key_choice)) +
              " batch " + std::to_string(step.batch),
          step.ops);
    }
    Measurement m = RunWorkload(**driver, step.spec, params, &state, [&](uint64_t done, uint64_t) {
      if (progress != nullptr) progress->Update(done);
    });
    if (progress != nullptr) progress->Finish();
    m.suite = config.suite;
    m.system = system;
    if (!m.error.empty()) {
      report->notes.push_back("system " + system + " " + step.spec.name + " (" + sizes +
                              "): " + m.error + "; its remaining workloads were not run");
      ok = false;
    }
    report->results.push_back(m);
    if (i == 0 && step.spec.is_load) {
      report->facts.push_back({system, "after load", sizes, (*driver)->Facts()});
    }
  }
  report->facts.push_back({system, "at end", sizes, (*driver)->Facts()});
  driver->reset();
  return ok;
}

void AddRatio(BenchReport* report, const std::string& name, const std::string& label,
              const Measurement* numerator, const Measurement* denominator,
              const std::string& missing_why) {
  Ratio check;
  check.name = name;
  if (numerator == nullptr || denominator == nullptr || !numerator->error.empty() ||
      !denominator->error.empty() || denominator->mops() <= 0.0) {
    check.comparison = label;
    check.measured = false;
    check.why = missing_why;
    check.text = name + ": not measured";
    report->ratios.push_back(check);
    return;
  }
  check.comparison = numerator->system + " / " + denominator->system;
  check.measured = true;
  check.value = numerator->mops() / denominator->mops();
  auto mops = [](const Measurement* m) {
    double v = m->mops();
    return FormatFixed(v, v >= 100 ? 1 : v >= 1 ? 2 : 3);
  };
  check.text = name + ": " + mops(numerator) + " Mops/s vs " + label + " " + mops(denominator) +
               " Mops/s = " + FormatFixed(check.value, check.value < 10 ? 2 : 1) + "x";
  if (!numerator->complete || !denominator->complete) {
    check.text += " [a run stopped at the time limit]";
  }
  report->ratios.push_back(check);
}

const Measurement* FindMeasurement(const BenchReport& report, const std::string& system,
                                   const std::string& workload, const std::string& distribution,
                                   uint32_t key_size, uint32_t value_size) {
  for (const Measurement& m : report.results) {
    if (m.system == system && m.workload == workload && m.distribution == distribution &&
        m.key_size == key_size && m.value_size == value_size) {
      return &m;
    }
  }
  return nullptr;
}

nlohmann::ordered_json ConfigJson(const BenchConfig& config,
                                  const std::vector<std::string>& systems) {
  nlohmann::ordered_json json;
  json["keys"] = config.keys;
  json["ops"] = config.ops_or_keys();
  json["batch"] = config.batch;
  json["threads"] = config.threads;
  json["key_sizes"] = config.key_sizes;
  json["value_sizes"] = config.value_sizes;
  json["seed"] = config.seed;
  json["pool"] = config.pool_path;
  json["pool_size"] = PoolSizeFor(config, config.key_sizes.front(), config.value_sizes.front());
  json["backend"] = config.backend == Backend::kCpu    ? "cpu"
                    : config.backend == Backend::kCuda ? "cuda"
                                                       : "auto";
  json["systems"] = systems;
  return json;
}

void AddReadAgreement(BenchReport* report) {
  std::vector<std::string> disagreements;
  int compared = 0;
  for (const Measurement& m : report->results) {
    if ((m.reads == 0 && m.erases == 0) || !m.complete || !m.error.empty()) continue;
    const Measurement* gpkv = FindPeer(*report, m, "gpkv");
    if (gpkv == nullptr || gpkv == &m || !gpkv->complete || !gpkv->error.empty()) continue;
    ++compared;
    if (gpkv->read_digest != m.read_digest || gpkv->found != m.found || gpkv->erased != m.erased) {
      disagreements.push_back(m.system + " " + m.workload + " " + m.distribution);
    }
  }
  std::string text =
      compared == 0 ? "read results: nothing to compare (no peer of gpkv ran a read to the end)"
      : disagreements.empty()
          ? "read results: every system returned the same answers as gpkv in all " +
                std::to_string(compared) +
                " comparisons (found counts, read digests and erase counts agree)"
          : "read results DISAGREE with gpkv:";
  for (const std::string& d : disagreements) text += " [" + d + "]";
  report->lines.push_back(text);
  report->sections["read_results_compared"] = compared;
  report->sections["read_results_agree"] = disagreements.empty();
}

}  // namespace gpkv::bench
