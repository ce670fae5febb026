// RocksDB as a system of gpkv-bench ("rocksdb", "rocksdb-nosync"), built
// into the benchmark library when CMake finds librocksdb (GPKV_WITH_ROCKSDB).
// RocksDB is only something to compare against: libgpkv never links it.
#pragma once

#include <memory>

#include "bench/gpkv_bench_driver.h"

namespace gpkv::bench {

// A fresh RocksDB in config.rocksdb_dir (removed before and after). `sync`:
// WAL on, each batch's writes synced before the batch returns (the
// durability gpkv gives: "rocksdb"); false: WAL on, not synced (a process
// crash loses nothing, a power failure may lose the last batches:
// "rocksdb-nosync").
Result<std::unique_ptr<Driver>> CreateRocksdbDriver(const DriverConfig& config, bool sync);

}  // namespace gpkv::bench
