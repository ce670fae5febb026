// The registry of systems gpkv-bench can measure.
#include "bench/gpkv_bench_driver.h"

#if GPKV_HAVE_ROCKSDB
#include "bench/gpkv_bench_rocksdb.h"
#endif

namespace gpkv::bench {

const std::vector<DriverInfo>& RegisteredDrivers() {
  static const std::vector<DriverInfo>* registry = [] {
    auto* drivers = new std::vector<DriverInfo>;
    drivers->push_back({"gpkv",
                        "durable per batch (SyncMode::kBatch: pool persisted before return)",
                        CreateGpkvDriver});
    drivers->push_back({"gpkv-logged",
                        "durable and atomic per batch (a logged hash table: each batch one log "
                        "record, the index in memory, an image written behind the batches "
                        "every --hash-log-batches batches of 4096 entries)",
                        [](const DriverConfig& config) {
                          DriverConfig logged_config = config;
                          logged_config.hash_log.log_batches = config.logged_log_batches;
                          logged_config.hash_log.batch_entries = 4096;
                          return CreateGpkvDriver(logged_config);
                        }});
    drivers->push_back({"gpkv-volatile",
                        "volatile (the slab hash family through the engine: contents in RAM, or "
                        "GPU memory with --backend cuda; nothing persisted)",
                        [](const DriverConfig& config) {
                          DriverConfig volatile_config = config;
                          volatile_config.durability = Durability::kVolatile;
                          return CreateGpkvDriver(volatile_config);
                        }});
    drivers->push_back({"libcuckoo", "volatile (DRAM, nothing persisted)", CreateCuckooDriver});
#if GPKV_HAVE_ROCKSDB
    drivers->push_back(
        {"rocksdb",
         "durable per batch (RocksDB 7.8, WAL on, WriteOptions.sync: each batch's "
         "writes synced before it returns)",
         [](const DriverConfig& config) { return CreateRocksdbDriver(config, true); }});
    drivers->push_back(
        {"rocksdb-nosync",
         "WAL on, not synced (RocksDB 7.8, WriteOptions.sync = false: survives a process crash, "
         "not a power failure)",
         [](const DriverConfig& config) { return CreateRocksdbDriver(config, false); }});
#endif
    return drivers;
  }();
  return *registry;
}

const DriverInfo* FindDriver(const std::string& name) {
  for (const DriverInfo& info : RegisteredDrivers()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace gpkv::bench
