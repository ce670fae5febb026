// The gpkv load-factor probe (see gpkv_bench_load_factor.h).
#include "bench/gpkv_bench_load_factor.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "bench/gpkv_bench_workload.h"
#include "gpkv/db.h"

namespace gpkv::bench {
namespace {

// Inserts records [first, first + count) in one Put.
Status PutRecords(Table* table, uint64_t first, uint64_t count, uint64_t key_seed) {
  const TableOptions& options = table->options();
  std::vector<uint8_t> keys(count * options.key_size);
  std::vector<uint8_t> values(count * options.value_size);
  for (uint64_t i = 0; i < count; ++i) {
    EncodeKey(first + i, key_seed, options.key_size, keys.data() + i * options.key_size);
    EncodeValue(first + i, 0, options.value_size, values.data() + i * options.value_size);
  }
  return table->Put(keys, values);
}

}  // namespace

ResizeProbe ProbeGpkvLoadFactor(const DriverConfig& config, uint64_t expected_keys,
                                uint64_t key_seed) {
  ResizeProbe probe;
  ::unlink(config.pool_path.c_str());
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.pool_size = config.pool_size;
  options.backend = config.backend;
  // One worker: concurrent inserts place keys in a different order from run
  // to run, and pass 2 must meet the same resize as pass 1. The load factor
  // is a property of the geometry, not of the thread count.
  options.cpu_threads = 1;
  auto db = DB::Open(config.pool_path, options);
  if (!db.ok()) {
    probe.error = db.status().ToString();
    return probe;
  }
  TableOptions table_options;
  table_options.key_size = config.key_size;
  table_options.value_size = config.value_size;
  table_options.expected_keys = expected_keys;
  const uint64_t limit = 4 * expected_keys;

  // The GPHash counters this probe reads (TableStats properties).
  auto count_of = [](const TableStats& stats, const char* name) {
    return static_cast<uint64_t>(stats.Property(name).value_or(0));
  };
  auto run = [&]() -> Status {
    auto table = (*db)->CreateTable("lf_probe", table_options);
    if (!table.ok()) return table.status();
    uint64_t inserted = 0;
    auto before = (*table)->Stats();
    if (!before.ok()) return before.status();
    while (inserted < limit) {
      // Batches of 1/16 of the free slots: few batches (Stats may scan the
      // table), shrinking to single keys near the end, so the resize is
      // pinned to a small batch.
      const uint64_t slots = count_of(*before, "gphash.slots");
      uint64_t free_slots = slots > before->keys ? slots - before->keys : 0;
      uint64_t count = std::min(std::max<uint64_t>(1, free_slots / 16), limit - inserted);
      GPKV_RETURN_IF_ERROR(PutRecords(*table, inserted, count, key_seed));
      auto after = (*table)->Stats();
      if (!after.ok()) return after.status();
      inserted += count;
      if (count_of(*after, "gphash.resizes") > count_of(*before, "gphash.resizes")) {
        probe.resized = true;
        probe.load_factor = before->Property("gphash.load-factor").value_or(0);
        probe.keys = before->keys;
        probe.slots = slots;
        probe.inserted = inserted;
        probe.batch = count;
        probe.precision = count == 1 ? "1 key" : "batch of " + std::to_string(count) + " keys";
        break;
      }
      before = after;
    }
    return (*db)->DropTable("lf_probe");
  };
  Status status = run();
  if (!status.ok()) probe.error = status.ToString();
  db->reset();
  ::unlink(config.pool_path.c_str());
  return probe;
}

}  // namespace gpkv::bench
