// The operations of the slab suite at one key count, in host and device
// memory, and what its phases share (timing, batching, answer checks):
// the same arrays drive the slab hash (slab_bench_run.cu) and its persistent
// peer (slab_bench_gphash.cu).
//
// Records follow the other suites (bench/gpkv_bench_workload.h): a build
// inserts records 0..keys-1 (EncodeKey / EncodeValue version 0); a search
// miss looks up records from kAbsentRecordBase on. A mixed batch of b
// operations holds b/10 inserts of new records (keys, keys+1, ...), b/10
// deletes of built records (0, 1, ... in order, never searched), and the rest
// half search hits (built records past the deleted ones, uniform) and half
// search misses, shuffled within the batch.
//
// Built with the CUDA backend only (device buffers).
// Who may call: the slab suite's .cu files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "gpu/device_memory.h"

namespace gpkv::bench::gpu {

// An array of bytes in host memory and its copy in device memory.
struct MirroredBytes {
  std::vector<uint8_t> host;
  ::gpkv::gpu::DeviceBytes device;

  const uint8_t* data(bool on_device) const { return on_device ? device.data() : host.data(); }
  uint8_t* mutable_data(bool on_device) { return on_device ? device.data() : host.data(); }
  // Allocates the device copy and copies `host` there.
  Status Upload();
};

// One mixed batch: operations [first, first + count) of the mixed arrays;
// in the grouped arrays (the persistent peer) the same operations as `inserts` puts,
// then `deletes` erases, then the searches.
struct MixedBatch {
  uint64_t first = 0;
  uint64_t count = 0;
  uint64_t inserts = 0;
  uint64_t deletes = 0;
  uint64_t searches() const { return count - inserts - deletes; }
};

// What a mixed operation is, for the answer check.
enum class MixedKind : uint8_t { kInsert, kDelete, kHit, kMiss };

struct SlabKeySets {
  uint64_t keys = 0;
  uint64_t batch = 0;
  MirroredBytes load_keys;    // keys * 8
  MirroredBytes load_values;  // keys * 8
  MirroredBytes miss_keys;    // keys * 8
  // Mixed batches: keys operations in order (slab_hash::MixedBatch's arrays).
  MirroredBytes mixed_ops;     // MixedOp per operation
  MirroredBytes mixed_keys;    // 8 bytes each
  MirroredBytes mixed_values;  // inserts: the new value; searches: zero (receive the answer)
  std::vector<MixedKind> mixed_kinds;
  std::vector<uint64_t> mixed_records;  // each operation's record
  std::vector<MixedBatch> mixed_batches;
  // The same operations grouped per batch (inserts, deletes, searches).
  MirroredBytes grouped_keys;
  MirroredBytes grouped_values;
};

// Generates every array for `keys` keys and batches of `batch` (on all
// hardware threads) and uploads it.
Status MakeSlabKeySets(uint64_t keys, uint64_t batch, uint64_t seed, SlabKeySets* sets);

// Seconds on the host's steady clock.
double Now();

// Calls run(first, count) over [0, total) in batches of `batch`; stops at
// the first error.
Status ForEachBatch(uint64_t total, uint64_t batch,
                    const std::function<Status(uint64_t first, uint64_t count)>& run);

// Output buffers of search batches of up to `capacity` operations.
struct SearchOutputs {
  MirroredBytes values;  // capacity * 8
  MirroredBytes found;   // capacity
};
Status MakeSearchOutputs(uint64_t capacity, SearchOutputs* outputs);

// Checks the answers of the search batch of load / miss keys [first, first +
// count) left in `outputs` (device or host copy): every key found with its
// value (`hit`), or none found. Corruption naming `what` otherwise.
Status CheckSearchBatch(const SlabKeySets& sets, const SearchOutputs& outputs, bool on_device,
                        bool hit, uint64_t first, uint64_t count, const std::string& what);

// Checks a mixed run's answers (device results and values, copied back):
// inserts and deletes report 1, hits find their value, misses nothing.
Status CheckMixedAnswers(const SlabKeySets& sets, const ::gpkv::gpu::DeviceBytes& results,
                         const std::string& what);

}  // namespace gpkv::bench::gpu
