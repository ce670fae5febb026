// Runs one workload on one driver (see gpkv_bench_runner.h).
#include "bench/gpkv_bench_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace gpkv::bench {

double Percentile(std::vector<double>* values, double percent) {
  if (values->empty()) return 0.0;
  std::sort(values->begin(), values->end());
  auto rank = static_cast<size_t>(std::ceil(percent / 100.0 * static_cast<double>(values->size())));
  if (rank == 0) rank = 1;
  return (*values)[std::min(rank, values->size()) - 1];
}

namespace {

// Runs one batch; *seconds receives its wall time.
Status RunBatch(Driver& driver, OpBatch& batch, uint32_t value_size, std::vector<uint8_t>* values,
                std::vector<uint8_t>* found, std::vector<uint8_t>* erased, double* seconds) {
  const size_t read_count = batch.read_count();
  values->assign(read_count * value_size, 0);
  found->assign(read_count, 0);
  erased->assign(batch.erases, 0);
  // The RMW values are filled in the timed part, from what was read.
  const size_t fixed_values = (batch.updates + batch.inserts) * value_size;
  batch.write_values.resize(batch.write_count() * value_size);

  auto start = std::chrono::steady_clock::now();
  if (read_count > 0) {
    GPKV_RETURN_IF_ERROR(
        driver.Read(batch.read_keys.data(), read_count, values->data(), found->data()));
  }
  for (size_t i = 0; i < batch.read_modify_writes; ++i) {
    uint8_t* value = batch.write_values.data() + fixed_values + i * value_size;
    std::memcpy(value, values->data() + (batch.reads + i) * value_size, value_size);
    ModifyValue(value, value_size);
  }
  if (batch.write_count() > 0) {
    GPKV_RETURN_IF_ERROR(
        driver.Write(batch.write_keys.data(), batch.write_values.data(), batch.write_count()));
  }
  if (batch.erases > 0) {
    GPKV_RETURN_IF_ERROR(driver.Erase(batch.erase_keys.data(), batch.erases, erased->data()));
  }
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::OK();
}

}  // namespace

Measurement RunWorkload(Driver& driver, const WorkloadSpec& spec, const RunParams& params,
                        RecordState* state, const ProgressFn& progress) {
  Measurement m;
  m.workload = spec.name;
  m.distribution = spec.is_load ? "new" : KeyChoiceName(spec.key_choice);
  m.key_size = params.key_size;
  m.value_size = params.value_size;
  m.batch_size = params.batch_size;
  BatchGenerator generator(spec, params.key_size, params.value_size, params.key_seed,
                           params.run_seed, state);
  OpBatch batch;
  std::vector<uint8_t> values, found, erased;
  std::vector<double> batch_us;
  batch_us.reserve(params.ops / std::max<uint64_t>(params.batch_size, 1) + 1);
  while (m.ops < params.ops) {
    uint64_t size = std::min(params.batch_size, params.ops - m.ops);
    generator.Next(size, &batch);
    double seconds = 0.0;
    Status status = RunBatch(driver, batch, params.value_size, &values, &found, &erased, &seconds);
    if (!status.ok()) {
      m.error = status.ToString();
      break;
    }
    m.ops += size;
    m.batches += 1;
    m.seconds += seconds;
    batch_us.push_back(seconds * 1e6);
    m.reads += batch.read_count();
    m.writes += batch.write_count();
    m.erases += batch.erases;
    for (size_t i = 0; i < batch.read_count(); ++i) {
      m.found += found[i];
      m.read_digest +=
          ReadResultHash(found[i] != 0, values.data() + i * params.value_size, params.value_size);
    }
    for (size_t i = 0; i < batch.erases; ++i) m.erased += erased[i];
    if (progress) progress(m.ops, params.ops);
    if (params.max_seconds > 0.0 && m.seconds >= params.max_seconds && m.ops < params.ops) {
      m.complete = false;
      break;
    }
  }
  m.p50_us = Percentile(&batch_us, 50.0);
  m.p99_us = Percentile(&batch_us, 99.0);
  m.max_us = batch_us.empty() ? 0.0 : batch_us.back();
  return m;
}

}  // namespace gpkv::bench
