// Maintenance kernels of the slab hash: empty bucket arrays, freeing retired
// value slabs and whole chains, clearing batch tags, flush (list
// compaction), rehash and scan. Each runs while no batch kernel of the table
// does (the host holds the table exclusively, or shared for scan).
#include "tables/slab_hash/gpu/kernels.h"
#include "tables/slab_hash/gpu/launch.cuh"
#include "tables/slab_hash/gpu/warp_ops.cuh"

namespace gpkv::slab_hash::gpu {
namespace {

using device::LaneRole;
using device::NextOf;
using device::Shape;
using device::SlabOf;
using device::SlabRead;
using gpkv::gpu::warp::kFullMask;
using gpkv::gpu::warp::LaneId;

__global__ void __launch_bounds__(kBlockThreads)
    InitBucketsKernel(uint8_t* buckets, uint64_t words) {
  for (uint64_t i = ThreadIndex(); i < words; i += uint64_t{gridDim.x} * blockDim.x) {
    reinterpret_cast<uint64_t*>(buckets)[i] =
        i % kSlabWords == kLinkWord ? uint64_t{kNullNext} << 32 : uint64_t{0};
  }
}

__global__ void __launch_bounds__(kBlockThreads)
    FreeRetiredKernel(gpkv::gpu::SlabAllocView alloc, const uint32_t* retired,
                      const BatchCounters* counters) {
  const uint64_t count = counters->retired;
  for (uint64_t i = ThreadIndex(); i < count; i += uint64_t{gridDim.x} * blockDim.x) {
    gpkv::gpu::FreeSlab(alloc, retired[i]);
  }
}

// One thread per bucket: walks its list.
__global__ void __launch_bounds__(kBlockThreads) ClearTagsKernel(DeviceView view) {
  for (uint64_t bucket = ThreadIndex(); bucket < view.bucket_count;
       bucket += uint64_t{gridDim.x} * blockDim.x) {
    uint8_t* slab = device::BaseSlab(view, bucket);
    while (true) {
      uint32_t* aux = device::AuxOf(slab);
      *aux &= kStateMask;
      const uint32_t next = *NextOf(slab);
      if (next == kNullNext) break;
      slab = SlabOf(view, next);
    }
  }
}

__global__ void __launch_bounds__(kBlockThreads) FreeChainsKernel(DeviceView view) {
  for (uint64_t bucket = ThreadIndex(); bucket < view.bucket_count;
       bucket += uint64_t{gridDim.x} * blockDim.x) {
    uint32_t next = *NextOf(device::BaseSlab(view, bucket));
    while (next != kNullNext) {
      const uint32_t after = *NextOf(SlabOf(view, next));
      gpkv::gpu::FreeSlab(view.alloc, next);
      next = after;
    }
  }
}

// One warp per bucket. Live slots move, in list order, to the lowest slots
// from the base slab on: the slot written is never after the slot read, so
// each slab is read (into registers) before it is written.
template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads) FlushKernel(DeviceView view) {
  const device::WarpTile tile = device::WarpTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  const uint32_t lane = LaneId();
  const uint32_t slot_words = shape.slot_words();
  const uint32_t slots = shape.slots();
  for (uint64_t bucket = WarpIndex(); bucket < view.bucket_count; bucket += WarpCount()) {
    uint8_t* out = device::BaseSlab(view, bucket);
    uint32_t out_count = 0;  // slots of `out` written
    uint8_t* in = out;
    while (true) {
      const SlabRead read = device::SplitLink(tile, device::LoadRelaxed(in + 8 * role.word));
      uint32_t live = LivePairs(read.aux, slots);
      while (live != 0) {
        const uint32_t slot = (__ffs(live) - 1) / 2;
        live &= live - 1;
        if (out_count == slots) {  // `out` is full: it keeps its next, now its aux
          if (lane == 0) *device::AuxOf(out) = PackedAux(slots);
          out = SlabOf(view, *NextOf(out));
          out_count = 0;
        }
        const uint32_t from = slot * slot_words + (lane < slot_words ? lane : 0);
        const uint64_t word = __shfl_sync(kFullMask, read.word, static_cast<int>(from));
        if (lane < slot_words)
          device::StoreRelaxed(out + 8 * (out_count * slot_words + lane), word);
        ++out_count;
      }
      if (read.next == kNullNext) break;
      in = SlabOf(view, read.next);
    }
    // `out` ends the list: its unwritten slots free and zeroed.
    if (lane < kSlotAreaWords && lane >= out_count * slot_words) {
      device::StoreRelaxed(out + 8 * lane, 0);
    }
    __syncwarp();
    if (lane == 0) {
      uint32_t rest = *NextOf(out);
      *device::AuxOf(out) = PackedAux(out_count);
      *NextOf(out) = kNullNext;
      while (rest != kNullNext) {
        const uint32_t after = *NextOf(SlabOf(view, rest));
        gpkv::gpu::FreeSlab(view.alloc, rest);
        rest = after;
      }
    }
    __syncwarp();
  }
}

// One warp per bucket of `from`: each live pair goes into `to` by
// InsertAbsent (keys are unique, so no search).
template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads)
    RehashKernel(DeviceView from, DeviceView to, BatchCounters* counters) {
  const device::WarpTile tile = device::WarpTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(from.geometry);
  const LaneRole role = device::RoleOf(shape);
  const uint32_t slot_words = shape.slot_words();
  const uint32_t slots = shape.slots();
  gpkv::gpu::SlabAllocWarp alloc;
  gpkv::gpu::InitSlabAllocWarp(to.alloc, &alloc);
  for (uint64_t bucket = WarpIndex(); bucket < from.bucket_count; bucket += WarpCount()) {
    unsigned int failed = 0;
    if (LaneId() == 0) failed = *reinterpret_cast<volatile unsigned int*>(&counters->failed);
    if (__shfl_sync(kFullMask, failed, 0) != 0) return;  // another warp ran out of slabs
    const uint8_t* slab = device::BaseSlab(from, bucket);
    while (true) {
      const SlabRead read = device::ReadSlabStill(tile, role, slab);
      uint32_t live = LivePairs(read.aux, slots);
      while (live != 0) {
        const uint32_t head = (__ffs(live) - 1) / 2 * slot_words;
        live &= live - 1;
        device::Key<kKeyWords> key;
#pragma unroll
        for (int w = 0; w < kKeyWords; ++w) {
          key.words[w] = __shfl_sync(kFullMask, read.word, static_cast<int>(head + w));
        }
        const uint32_t part = role.part < slot_words ? role.part : 0;
        const uint64_t slot_word = __shfl_sync(kFullMask, read.word, static_cast<int>(head + part));
        const uint64_t target = BucketOf(device::HashOf(key, to.seed), to.bucket_count);
        if (!device::InsertAbsent(to, &alloc, shape, role, target, slot_word)) {
          if (LaneId() == 0) atomicOr(&counters->failed, 1u);
          return;
        }
      }
      if (read.next == kNullNext) break;
      slab = SlabOf(from, read.next);
    }
  }
}

// One warp per bucket of [first, last).
template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads)
    ScanKernel(DeviceView view, uint64_t first, uint64_t last, uint64_t* keys_out,
               uint64_t* values_out, uint64_t capacity, BatchCounters* counters) {
  const device::WarpTile tile = device::WarpTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  const uint32_t lane = LaneId();
  const uint32_t slot_words = shape.slot_words();
  const uint32_t slots = shape.slots();
  const uint32_t value_words = InlineValueWords(view.geometry.value_size);
  const bool out_of_line = view.geometry.value_out_of_line;
  for (uint64_t bucket = first + WarpIndex(); bucket < last; bucket += WarpCount()) {
    const uint8_t* slab = device::BaseSlab(view, bucket);
    while (true) {
      const SlabRead read = device::ReadSlabStill(tile, role, slab);
      uint32_t live = LivePairs(read.aux, slots);
      unsigned long long at = 0;
      if (lane == 0 && live != 0) at = atomicAdd(&counters->pairs, __popc(live));
      at = __shfl_sync(kFullMask, at, 0);
      while (live != 0) {
        const uint32_t head = (__ffs(live) - 1) / 2 * slot_words;
        live &= live - 1;
        const uint32_t key_from = head + (lane < kKeyWords ? lane : 0);
        const uint64_t key_word = __shfl_sync(kFullMask, read.word, static_cast<int>(key_from));
        uint64_t value_word;
        if (out_of_line) {
          const uint32_t address = static_cast<uint32_t>(
              __shfl_sync(kFullMask, read.word, static_cast<int>(head + kKeyWords)));
          value_word = device::LoadRelaxed(SlabOf(view, address) + 8 * (lane & 15u));
        } else {
          const uint32_t value_from = head + kKeyWords + (lane < value_words ? lane : 0);
          value_word = __shfl_sync(kFullMask, read.word,
                                   static_cast<int>(value_from < kSlotAreaWords ? value_from : 0));
        }
        if (at < capacity) {
          if (lane < kKeyWords) keys_out[at * kKeyWords + lane] = key_word;
          if (lane < value_words) values_out[at * value_words + lane] = value_word;
        }
        ++at;
      }
      if (read.next == kNullNext) break;
      slab = SlabOf(view, read.next);
    }
  }
}

}  // namespace

Status LaunchInitBuckets(uint8_t* buckets, uint64_t bucket_count, cudaStream_t stream) {
  const uint64_t words = bucket_count * kSlabWords;
  InitBucketsKernel<<<StrideBlocksFor(words, kBlockThreads), kBlockThreads, 0, stream>>>(buckets,
                                                                                         words);
  return CheckLaunch("InitBucketsKernel");
}

Status LaunchFreeRetired(const DeviceView& view, const WriteSink& sink, cudaStream_t stream) {
  FreeRetiredKernel<<<256, kBlockThreads, 0, stream>>>(view.alloc, sink.retired, sink.counters);
  return CheckLaunch("FreeRetiredKernel");
}

Status LaunchClearTags(const DeviceView& view, cudaStream_t stream) {
  ClearTagsKernel<<<StrideBlocksFor(view.bucket_count, kBlockThreads), kBlockThreads, 0, stream>>>(
      view);
  return CheckLaunch("ClearTagsKernel");
}

Status LaunchFreeChains(const DeviceView& view, cudaStream_t stream) {
  FreeChainsKernel<<<StrideBlocksFor(view.bucket_count, kBlockThreads), kBlockThreads, 0, stream>>>(
      view);
  return CheckLaunch("FreeChainsKernel");
}

Status LaunchFlush(const DeviceView& view, cudaStream_t stream) {
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    FlushKernel<decltype(key_words)::value, decltype(slot_words)::value>
        <<<StrideBlocksFor(view.bucket_count, kWarpsPerBlock), kBlockThreads, 0, stream>>>(view);
    return CheckLaunch("FlushKernel");
  });
}

Status LaunchRehash(const DeviceView& from, const DeviceView& to, BatchCounters* counters,
                    cudaStream_t stream) {
  return DispatchShape(from.geometry, [&](auto key_words, auto slot_words) -> Status {
    RehashKernel<decltype(key_words)::value, decltype(slot_words)::value>
        <<<StrideBlocksFor(from.bucket_count, kWarpsPerBlock), kBlockThreads, 0, stream>>>(
            from, to, counters);
    return CheckLaunch("RehashKernel");
  });
}

Status LaunchScan(const DeviceView& view, uint64_t first_bucket, uint64_t last_bucket,
                  uint64_t* keys_out, uint64_t* values_out, uint64_t capacity,
                  BatchCounters* counters, cudaStream_t stream) {
  if (last_bucket <= first_bucket) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    ScanKernel<decltype(key_words)::value, decltype(slot_words)::value>
        <<<StrideBlocksFor(last_bucket - first_bucket, kWarpsPerBlock), kBlockThreads, 0, stream>>>(
            view, first_bucket, last_bucket, keys_out, values_out, capacity, counters);
    return CheckLaunch("ScanKernel");
  });
}

}  // namespace gpkv::slab_hash::gpu
