// The version rules of a volatile ordered table, written once for every
// backend (plain functions over plain data, so that a GPU backend can call
// them from device code too).
//
// Every write batch gets the next timestamp of the table's clock (1, 2, ...);
// a snapshot reads at the clock's value when it was taken. Each key holds a
// short list of versions, newest first, each (timestamp, value or
// tombstone). A reader at timestamp t sees a key's newest version with
// timestamp <= t; the current contents are read at kLatest. A write changes
// the newest version in place unless a live snapshot can see it, and puts a
// new version in front otherwise; an older version stays only while a live
// snapshot can see it.
//
// Who may call: tables/btree/ (the core and the backends) and tests.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

// Host and device functions under nvcc (the GPU backend's kernels call
// them), plain functions elsewhere.
#if defined(__CUDACC__)
#define GPKV_BTREE_HOST_DEVICE __host__ __device__
#else
#define GPKV_BTREE_HOST_DEVICE
#endif

namespace gpkv::btree {

// The read timestamp of the current contents.
constexpr uint64_t kLatest = ~uint64_t{0};

// The timestamps of the live snapshots, ascending (duplicates allowed).
struct LiveSnapshots {
  const uint64_t* timestamps = nullptr;
  size_t count = 0;
};

// Whether a reader at read_timestamp sees a version written at timestamp
// (when no newer version is seen first).
GPKV_BTREE_HOST_DEVICE inline bool VisibleAt(uint64_t timestamp, uint64_t read_timestamp) {
  return timestamp <= read_timestamp;
}

// Whether a write may replace a key's newest version (written at
// head_timestamp) in place: no live snapshot can see it. Every snapshot is
// older than the write, so the newest snapshot decides.
GPKV_BTREE_HOST_DEVICE inline bool WriteInPlace(uint64_t head_timestamp, LiveSnapshots live) {
  return live.count == 0 || live.timestamps[live.count - 1] < head_timestamp;
}

// Whether a live snapshot sees an older version written at `timestamp`
// whose next newer version was written at newer_timestamp: some snapshot s
// with timestamp <= s < newer_timestamp.
GPKV_BTREE_HOST_DEVICE inline bool SeenBySnapshot(uint64_t timestamp, uint64_t newer_timestamp,
                                                  LiveSnapshots live) {
  // The first snapshot >= timestamp (a binary search, as std::lower_bound).
  size_t first = 0;
  size_t count = live.count;
  while (count > 0) {
    const size_t half = count / 2;
    if (live.timestamps[first + half] < timestamp) {
      first += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return first != live.count && live.timestamps[first] < newer_timestamp;
}

}  // namespace gpkv::btree
