// The CUDA backend's writer of a logged hash table's log records whose
// arrays are in device memory: the record's checksum is summed on the
// device and its arrays are copied from there into the pool in bulk (the
// shared log's GPU primitives, tables/log/gpu/record_writer.cuh), so that a
// write batch in device memory reaches the pool without a copy through host
// memory. The bytes are those log::cpu::WriteRecordArrays writes from host
// memory. A record is started (queued on the writer's stream) and then
// waited for, so that the core applies the batch to its index on the GPU
// beside the copy.
//
// Who may call: tables/gphash/ (the family's open on CUDA). Built with the
// CUDA backend only; no CUDA headers here.
// Thread safety: one call at a time (the core's writer mutex).
#pragma once

#include <memory>

#include "pm/pool.h"
#include "tables/gphash/logged/core.h"

namespace gpkv::gphash::logged::gpu {

// A record writer for `pool` on CUDA device `device`, with a stream of its
// own. The pool is registered with CUDA on a thread of the writer's, from
// now until the first record, which waits for it (copies then run at the
// link's bulk rate); a pool the driver cannot pin is reached through
// pageable memory. REQUIRES: the writer is destroyed before the pool.
std::unique_ptr<DeviceRecordWriter> MakeDeviceRecordWriter(pm::Pool& pool, int device);

}  // namespace gpkv::gphash::logged::gpu
