// RocksDB as a system of `gpkv bench`, for the gpkv-bench program only
// (RocksDB is a comparison, never a dependency of the gpkv tool).
#pragma once

namespace gpkv::bench {

// Registers "rocksdb" (WAL on, each batch's writes synced before the batch
// returns: the durability gpkv gives) and "rocksdb-nosync" (WAL on, not
// synced: a process crash loses nothing, a power failure may lose the last
// batches).
void RegisterRocksdbDrivers();

}  // namespace gpkv::bench
