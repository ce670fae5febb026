// The foundation suite of gpkv-bench: load, get, update and erase rates of
// gpkv beside libcuckoo's, and the load factor gpkv reaches before its first
// resize.
#include <string>
#include <vector>

#include "bench/gpkv_bench_load_factor.h"
#include "bench/gpkv_bench_suite.h"

namespace gpkv::bench {
namespace {

std::vector<Step> FoundationSteps(const BenchConfig& config) {
  std::vector<Step> steps;
  auto add = [&](const char* name, uint64_t ops) {
    Step step;
    MicroWorkload(name, &step.spec);
    step.ops = ops;
    step.batch = config.batch;
    step.max_seconds = config.max_seconds > 0 ? config.max_seconds : 0.0;
    steps.push_back(step);
  };
  const uint64_t ops = config.ops_or_keys();
  add("insert", config.keys);
  add("search+", ops);
  add("search-", ops);
  add("update", ops);
  add("delete", std::min(ops, config.keys));
  return steps;
}

nlohmann::ordered_json ProbeJson(const ResizeProbe& probe) {
  return {{"resized", probe.resized},     {"load_factor", probe.load_factor},
          {"keys", probe.keys},           {"slots", probe.slots},
          {"inserted", probe.inserted},   {"resize_batch", probe.batch},
          {"precision", probe.precision}, {"error", probe.error}};
}

// Runs both probes and adds the load-factor line.
bool LoadFactorSection(const BenchConfig& config, BenchReport* report) {
  const uint32_t key_size = config.key_sizes.front();
  const uint32_t value_size = config.value_sizes.front();
  BenchConfig probe_config = config;
  probe_config.keys = 4 * config.lf_keys;  // the most the probe inserts
  probe_config.ops = 1;
  DriverConfig driver = MakeDriverConfig(probe_config, key_size, value_size);
  ResizeProbe gpkv = ProbeGpkvLoadFactor(driver, config.lf_keys, config.seed ^ 0x1f);
  ResizeProbe cuckoo = ProbeCuckooLoadFactor(config.lf_keys, config.seed ^ 0x1f);
  report->sections["load_factor_before_first_resize"] = {{"expected_keys", config.lf_keys},
                                                         {"key_size", key_size},
                                                         {"value_size", value_size},
                                                         {"gpkv", ProbeJson(gpkv)},
                                                         {"libcuckoo", ProbeJson(cuckoo)}};

  const std::string name = "load factor before first resize";
  std::string peer =
      cuckoo.resized
          ? "libcuckoo (4-way buckets) in the same run: " + FormatFixed(cuckoo.load_factor, 3) +
                " (" + std::to_string(cuckoo.keys) + " / " + std::to_string(cuckoo.slots) + ")"
          : "libcuckoo did not resize";
  if (!gpkv.error.empty()) {
    report->lines.push_back(name + ": not measured (gpkv: " + gpkv.error + ")");
  } else if (!gpkv.resized) {
    report->lines.push_back(name + ": no resize up to " + std::to_string(gpkv.inserted) +
                            " keys (table for " + std::to_string(config.lf_keys) + " keys)");
  } else {
    report->lines.push_back(name + ": " + FormatFixed(gpkv.load_factor, 3));
    report->lines.push_back(
        "  gpkv table for " + std::to_string(config.lf_keys) +
        " keys: " + std::to_string(gpkv.keys) + " keys / " + std::to_string(gpkv.slots) +
        " slots before the batch that resized (" + gpkv.precision + ": the load factor lies in [" +
        FormatFixed(gpkv.load_factor, 4) + ", " +
        FormatFixed(static_cast<double>(gpkv.keys + gpkv.batch) / static_cast<double>(gpkv.slots),
                    4) +
        ")); " + peer);
  }
  return gpkv.error.empty();
}

}  // namespace

bool RunFoundation(const BenchConfig& config, ProgressSink* progress, BenchReport* report) {
  std::vector<std::string> systems = config.systems;
  if (systems.empty()) systems = {"gpkv", "libcuckoo"};
  report->config = ConfigJson(config, systems);
  report->config["lf_keys"] = config.lf_keys;
  bool ok = true;
  const uint32_t key_size = config.key_sizes.front();
  const uint32_t value_size = config.value_sizes.front();
  if (config.lf_keys > 0) ok &= LoadFactorSection(config, report);
  for (const std::string& system : systems) {
    ok &= RunSequence(config, system, key_size, value_size, FoundationSteps(config), progress,
                      report);
  }
  AddReadAgreement(report);
  const std::string why = "gpkv or libcuckoo is missing from this run, or failed";
  auto find = [&](const std::string& system, const char* workload) {
    WorkloadSpec spec;
    MicroWorkload(workload, &spec);
    return FindMeasurement(*report, system, workload,
                           spec.is_load ? "new" : KeyChoiceName(spec.key_choice), key_size,
                           value_size);
  };
  AddRatio(report, "get", "libcuckoo find", find("gpkv", "search+"), find("libcuckoo", "search+"),
           why);
  AddRatio(report, "insert", "libcuckoo insert", find("gpkv", "insert"),
           find("libcuckoo", "insert"), why);
  report->notes.push_back(
      "workloads in order on one table per system: insert (load of `keys` distinct keys into a "
      "table sized for them: gpkv expected_keys, libcuckoo initial capacity), search+ (uniform "
      "present keys), search- (keys never inserted), update (uniform present keys), delete "
      "(distinct present keys, each once; not reinserted).");
  report->notes.push_back(
      "each batch is timed alone (generation excluded); Mops/s = ops / sum of batch times; "
      "p50/p99 are per-batch latencies.");
  return ok;
}

}  // namespace gpkv::bench
