// What the btree suite measured (a row per system, key count, batch size and
// operation) and how it prints it: a table for people, each snapshot row
// with its cost beside the same operation without a snapshot, and one JSON
// object per line for machines (the goals they are held to:
// docs/bench/targets.json, btree-*).
//
// Plain C++, no CUDA: tests check the lines and the JSON without a device.
// Who may call: the btree suite (bench/gpu/btree_bench.cc), tests.
#pragma once

#include <cstdint>
#include <string>

namespace gpkv::bench::gpu {

// One measured phase: the median rate of `repeats` runs on fresh tables.
struct BtreeRow {
  std::string system;           // "btree-gpu", "lsm-gpu", "slab-hash-gpu"
  uint64_t keys = 0;            // the tree size (keys loaded or built)
  std::string operation;        // "get", "update, snapshot held", ...
  uint64_t operations = 0;      // operations (range: queries) of one run
  uint64_t batch = 0;           // operations per call
  bool device_batches = false;  // batch arrays in GPU memory
  double mops = 0;              // M operations per second
  // Snapshot rows: the operation without a snapshot on the same tree size
  // and batch size ("" for the others), and its rate.
  std::string without;
  double without_mops = 0;

  // The cost of the operation with the snapshot over its cost without:
  // without_mops / mops; 0 when the row has no peer.
  double snapshot_cost() const;
};

// The table's header line, and one row of it (newline-terminated). Snapshot
// rows end in their cost ("1.34x").
std::string BtreeTextHeader();
std::string BtreeTextLine(const BtreeRow& row);

// One JSON object and a newline: kind "btree", system, keys, operation,
// operations, batch, batches ("host" or "device"), gops (10^9 per second),
// and for snapshot rows "without" and "snapshot_cost".
std::string BtreeJsonLine(const BtreeRow& row);

}  // namespace gpkv::bench::gpu
