// gpu::ArenaPlan: where the pieces of one batch's device scratch lie in a
// workspace's arena (one device allocation that only grows, so that no batch
// allocates). A batch first plans every piece it needs (Take returns the
// piece's offset), then makes the arena at least plan.bytes() long and
// places its pieces at arena + offset. Both GPU hash backends plan their
// scratch this way (the slab hash in a gpu::DeviceWorkspace's arena).
//
// Who may call: the GPU backends (tables/*/gpu/). No CUDA headers here.
// Thread safety: a plan is a value used by one thread.
#pragma once

#include <cstddef>

namespace gpkv::gpu {

// Bytes a piece of `bytes` takes in an arena: every piece starts 256-byte
// aligned (cudaMalloc's alignment, and what CUB's temporary storage wants).
inline size_t ArenaBytes(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Bump allocation of one batch's scratch: 256-byte aligned offsets from
// `start`; the arena is sized from bytes().
class ArenaPlan {
 public:
  explicit ArenaPlan(size_t start = 0) : used_(start) {}
  size_t Take(size_t bytes) {
    const size_t offset = used_;
    used_ += ArenaBytes(bytes);
    return offset;
  }
  size_t bytes() const { return used_; }

 private:
  size_t used_ = 0;
};

}  // namespace gpkv::gpu
