// gpu::SlabAlloc: a warp-synchronous allocator of 128-byte slabs in GPU
// memory (Ashkiani, Farach-Colton, Owens, "A Dynamic Hash Table for the
// GPU", IPDPS 2018). The slab hash (tables/slab_hash/) allocates its list
// slabs and out-of-line values from it; the B-Tree will allocate its nodes.
//
// Memory: super blocks of kBlocksPerSuperBlock memory blocks of
// kSlabsPerBlock slabs (128 KiB a block, 32 MiB a super block), each block
// with a bitmap of 32 words of 32 bits (bit set = slab in use). A slab is
// named by a 32-bit address (super block, block, slab); kNullSlab names none.
// Allocation (gpu/slab_alloc.cuh) is warp-wide: a warp holds a resident
// block's bitmap in its registers (lane i holds word i), takes a free bit
// with one atomicOr in the common case, and re-selects a block by hashing
// when its block is full. Free clears the bit. When no block with a free
// slab is found after kMaxBlockAttempts re-selections, allocation fails
// (kNullSlab) and the caller grows the allocator (Grow) on the host and
// retries: device code never allocates device memory.
//
// Who may call: the host class from host code of gpu/ and tables/*/gpu/;
// the device functions from kernels (.cu files) through slab_alloc.cuh.
// Thread safety: the host class is used by one thread at a time (its owner
// serialises Grow / Reset against kernels using the view). Device
// allocation and free are safe from any number of warps at once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpkv/status.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace gpkv::gpu {

constexpr uint32_t kSlabBytes = 128;
constexpr uint32_t kSlabsPerBlock = 1024;       // bits of one block's bitmap
constexpr uint32_t kBitmapWordsPerBlock = 32;   // 32 x 32 bits
constexpr uint32_t kBlocksPerSuperBlock = 256;  // 32 MiB of slabs
constexpr uint32_t kSlabAddressSlabBits = 10;
constexpr uint32_t kSlabAddressBlockBits = 8;
constexpr uint32_t kSlabAddressSuperBits = 14;
constexpr uint32_t kMaxSuperBlocks = (1u << kSlabAddressSuperBits) - 1;  // 512 GiB
constexpr uint32_t kNullSlab = 0xffffffffu;
constexpr uint64_t kSuperBlockBytes = uint64_t{kSlabBytes} * kSlabsPerBlock * kBlocksPerSuperBlock;

// What a kernel needs to allocate, free and address slabs. Plain data,
// passed by value to kernels; valid until the next Grow / destruction.
struct SlabAllocView {
  uint8_t* const* super_blocks = nullptr;  // device array [super_block_count]
  uint32_t* const* bitmaps = nullptr;      // device array [super_block_count], each
                                           // kBlocksPerSuperBlock * 32 words
  uint32_t super_block_count = 0;
  uint32_t seed = 0;  // varies the hashed block choice between launches
};

class SlabAlloc {
 public:
  // An allocator with `super_blocks` (>= 1) super blocks, every slab free.
  // OutOfDeviceMemory naming the bytes asked for when the device lacks them.
  static Result<std::unique_ptr<SlabAlloc>> Create(uint32_t super_blocks);
  ~SlabAlloc();
  SlabAlloc(const SlabAlloc&) = delete;
  SlabAlloc& operator=(const SlabAlloc&) = delete;

  // Adds `count` super blocks (free). On OutOfDeviceMemory nothing changes
  // (slabs handed out stay valid). InvalidArgument past kMaxSuperBlocks.
  // REQUIRES: no kernel using view() runs.
  Status Grow(uint32_t count);
  // Grows (whole super blocks) until at least `free_slabs` slabs are free
  // and at most `max_fill` (0..1) of all slabs would be in use after
  // allocating them. Reads the in-use count from the device (a popcount
  // kernel on `stream`, then a wait).
  Status Reserve(uint64_t free_slabs, double max_fill, CUstream_st* stream);
  // Marks every slab free (the memory is kept). REQUIRES: no kernel runs.
  Status Reset(CUstream_st* stream);

  // The view for kernels; its seed changes with every call.
  SlabAllocView view();
  uint32_t super_blocks() const;
  uint64_t capacity_slabs() const;  // super_blocks() * slabs per super block
  // Slabs in use now (popcount of every bitmap on `stream`, then a wait).
  Result<uint64_t> CountInUse(CUstream_st* stream) const;
  // Device bytes held: slabs, bitmaps and the pointer arrays.
  uint64_t device_bytes() const;

  // For tests and the benchmark: the addresses handed out by `count`
  // allocations made by kernels in the slab hash's pattern (each warp
  // allocating for its lanes in turn, 8 warps a thread
  // block), in *addresses (host vector, resized), and the seconds the
  // allocation kernel took (events). Addresses are kNullSlab where an
  // allocation failed.
  Status TEST_AllocateMany(uint64_t count, std::vector<uint32_t>* addresses, double* seconds,
                           CUstream_st* stream);
  // Frees the given addresses (host vector) with a kernel.
  Status TEST_FreeMany(const std::vector<uint32_t>& addresses, CUstream_st* stream);
  // The device pointers SlabAt gives for `addresses` (host vector; slabs
  // handed out, never kNullSlab), computed by a kernel, as integers in
  // *pointers (resized): tests check that slabs do not overlap.
  Status TEST_SlabPointers(const std::vector<uint32_t>& addresses, std::vector<uint64_t>* pointers,
                           CUstream_st* stream);

  class Impl;

 private:
  explicit SlabAlloc(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpkv::gpu
