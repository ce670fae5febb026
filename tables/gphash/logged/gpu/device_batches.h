// What the CUDA backend of a logged hash table asks of a write batch's
// arrays: a batch's record is written to the pool from host memory, so a
// write batch in device memory is refused (gets take device memory: the
// index answers them on the device).
//
// Who may call: tables/gphash/ (the family's open on CUDA). Built with the
// CUDA backend only; no CUDA headers here.
// Thread safety: any thread.
#pragma once

namespace gpkv::gphash::logged::gpu {

// True when `address` is device memory of CUDA device `device`.
bool InDeviceMemory(const void* address, int device);

}  // namespace gpkv::gphash::logged::gpu
