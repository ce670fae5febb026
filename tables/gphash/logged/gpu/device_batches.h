// What the CUDA backend of a logged hash table asks of a write batch's
// arrays: whether they lie in device memory (a put or erase batch there has
// its record written from the device, device_records.h; a mixed batch there
// is refused).
//
// Who may call: tables/gphash/ (the family's open on CUDA). Built with the
// CUDA backend only; no CUDA headers here.
// Thread safety: any thread.
#pragma once

namespace gpkv::gphash::logged::gpu {

// True when `address` is device memory of CUDA device `device`.
bool InDeviceMemory(const void* address, int device);

}  // namespace gpkv::gphash::logged::gpu
