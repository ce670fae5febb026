// The systems gpkv-bench measures, behind one batched interface, and the
// registry the benchmark picks them from by name.
//
// Every driver is fed the same operations (bench/gpkv_bench_workload.h) and
// runs each batch with the same number of threads. Built in: "gpkv" (the
// library, durable per batch), "gpkv-logged" (the library's persistent hash
// table in logged mode: durable and atomic per batch, a log record each, the
// index in memory), "gpkv-volatile" (the library's volatile hash
// table, the slab hash family: contents in RAM or GPU memory) and
// "libcuckoo" (a volatile DRAM hash map, the ceiling); "rocksdb" and
// "rocksdb-nosync" (bench/gpkv_bench_rocksdb.h) when the build found librocksdb.
//
// Thread safety: a driver is used by one benchmark thread at a time; it runs
// each call with its own `threads` workers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv::bench {

// What a driver is created with. Each system takes the fields it uses.
struct DriverConfig {
  uint32_t key_size = 8;
  uint32_t value_size = 8;
  // Keys the table is sized for up front (gpkv expected_keys, libcuckoo
  // initial capacity); RocksDB has no equivalent.
  uint64_t expected_keys = 0;
  int threads = 1;
  // gpkv: pool file (removed before create and when the driver is destroyed).
  std::string pool_path;
  uint64_t pool_size = 0;
  Backend backend = Backend::kCpu;
  // gpkv: the ordered table's GPU tuning (Options::ordered_gpu).
  OrderedGpuOptions ordered_gpu;
  // gpkv: the table's durability; kVolatile is the slab hash family (the
  // pool holds only its catalog entry).
  Durability durability = Durability::kPersistent;
  // gpkv: how a persistent hash table makes batches durable (log_batches 0:
  // in place; >= 1: logged).
  HashLogOptions hash_log;
  // gpkv-logged: M of its table (hash_log.log_batches).
  uint32_t logged_log_batches = 64;
  // RocksDB: database directory (removed before and after).
  std::string rocksdb_dir;
};

// One system under test, holding one table.
class Driver {
 public:
  virtual ~Driver() = default;

  // Reads n keys (n * key_size bytes): values receives n * value_size bytes,
  // found n bytes (1 where present).
  virtual Status Read(const uint8_t* keys, size_t n, uint8_t* values, uint8_t* found) = 0;
  // Inserts or replaces n pairs. Durable on return where the system is.
  virtual Status Write(const uint8_t* keys, const uint8_t* values, size_t n) = 0;
  // Erases n keys: erased receives n bytes (1 where the key was present).
  virtual Status Erase(const uint8_t* keys, size_t n, uint8_t* erased) = 0;

  // Name-value facts about the table now (size, load factor, ...), printed
  // beside the results.
  virtual std::vector<std::pair<std::string, std::string>> Facts() { return {}; }
};

// A system the benchmark can create by name.
struct DriverInfo {
  std::string name;        // "gpkv", "gpkv-logged", "gpkv-volatile", "libcuckoo", ...
  std::string durability;  // what "durable" means for it, printed with the results
  std::function<Result<std::unique_ptr<Driver>>(const DriverConfig&)> create;
};

// The systems built into this program: "gpkv", "gpkv-logged", "gpkv-volatile", "libcuckoo",
// then "rocksdb" and "rocksdb-nosync" in a build with RocksDB.
const std::vector<DriverInfo>& RegisteredDrivers();
// nullptr if there is no system of that name.
const DriverInfo* FindDriver(const std::string& name);

// Defined in gpkv_bench_gpkv.cc (both gpkv systems, by config.durability)
// and gpkv_bench_cuckoo.cc.
Result<std::unique_ptr<Driver>> CreateGpkvDriver(const DriverConfig& config);
Result<std::unique_ptr<Driver>> CreateCuckooDriver(const DriverConfig& config);

}  // namespace gpkv::bench
