// The CUDA backend's handling of a logged hash table's batch arrays in
// device memory (logged::DeviceBatches): whether an array lies there, the
// wait for a caller's stream, the copies of a mixed batch's arrays to host
// memory and of its erased flags back, and the device memory a large put or
// erase batch from host memory is copied into (a put or erase batch's record
// is written from device memory, device_records.h).
//
// Who may call: tables/gphash/ (the family's open on CUDA). Built with the
// CUDA backend only; no CUDA headers here.
// Thread safety: any thread.
#pragma once

#include <memory>

#include "tables/gphash/logged/table.h"

namespace gpkv::gphash::logged::gpu {

// The device batches of a table on CUDA device `device`. Its copies and
// waits are synchronous CUDA calls on that device.
std::unique_ptr<DeviceBatches> MakeDeviceBatches(int device);

}  // namespace gpkv::gphash::logged::gpu
