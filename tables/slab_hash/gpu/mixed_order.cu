// The order in which a mixed batch runs: its operations partitioned by kind
// (CUB three-way DevicePartition::If over the batch positions), so that the
// two half-warp tiles of a warp take neighbouring units of one kind and run
// the same code path. In batch order a warp's tiles took a search and a
// write at once in about a third of their turns, and the warp then ran both
// paths one after the other. The operations of a mixed batch are concurrent
// (no order among them is promised), so running them in another order
// changes no result.
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_partition.cuh>

#include "gpu/cub_temp_storage.h"
#include "tables/slab_hash/gpu/backend.h"
#include "tables/slab_hash/gpu/kernels.h"

namespace gpkv::slab_hash::gpu {
namespace {

// Whether the operation at a batch position is of kind kCode.
template <MixedOp kCode>
struct IsKind {
  const uint8_t* ops;
  __device__ __forceinline__ bool operator()(uint32_t op) const {
    return ops[op] == static_cast<uint8_t>(kCode);
  }
};

template <typename Out>
cudaError_t Partition(void* storage, size_t& bytes, const uint8_t* ops, uint64_t count, Out deletes,
                      Out replaces, Out searches, uint32_t* kind_counts, cudaStream_t stream) {
  return cub::DevicePartition::If(storage, bytes, thrust::counting_iterator<uint32_t>(0), deletes,
                                  replaces, searches, kind_counts, static_cast<int64_t>(count),
                                  IsKind<MixedOp::kDelete>{ops}, IsKind<MixedOp::kReplace>{ops},
                                  stream);
}

}  // namespace

Status MixedOrderTempBytes(uint64_t count, size_t* bytes) {
  auto partition = [&](void* storage, size_t& storage_bytes) {
    return Partition(storage, storage_bytes, nullptr, count, static_cast<uint32_t*>(nullptr),
                     static_cast<uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr), nullptr,
                     nullptr);
  };
  return gpkv::gpu::CubTempBytes(
      partition, bytes, "slab hash: cub::DevicePartition::If of a mixed batch (size query)");
}

Status LaunchMixedOrder(const BatchArrays& batch, const MixedOrder& order, cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  auto partition = [&](void* storage, size_t& bytes) {
    return Partition(storage, bytes, batch.ops, batch.count, order.positions,
                     order.positions + batch.count, order.positions + 2 * batch.count,
                     order.kind_counts, stream);
  };
  return gpkv::gpu::RunCub(partition, order.temp,
                           "slab hash: cub::DevicePartition::If of a mixed batch by kind");
}

}  // namespace gpkv::slab_hash::gpu
