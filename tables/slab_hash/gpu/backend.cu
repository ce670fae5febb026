// GpuBackend: create, the public calls and the batch paths (staging of host
// arrays, the write launches with their SlabAlloc retries, the duplicate
// slow path). Flush, rehash, reserve, scan and stats: maintenance.cu.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/device_memory.h"
#include "gpu/pointer_kind.h"
#include "gpu/staged_copy.h"
#include "tables/slab_hash/gpu/backend.h"
#include "tables/slab_hash/gpu/backend_impl.h"

namespace gpkv::slab_hash::gpu {
namespace {

bool Aligned8(const void* address) { return (reinterpret_cast<uintptr_t>(address) & 7) == 0; }

cudaStream_t AsStream(void* stream) { return static_cast<cudaStream_t>(stream); }

uint64_t RandomSeed() {
  std::random_device device;
  const uint64_t clock =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return (uint64_t{device()} << 32 ^ device()) ^ (clock * 0x9e3779b97f4a7c15ULL);
}

// Copies `bytes` between host or device memory, in stream order.
Status Copy(void* target, const void* source, size_t bytes, cudaStream_t stream, const char* what) {
  if (bytes == 0) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(target, source, bytes, cudaMemcpyDefault, stream),
                            std::string("slab hash: cudaMemcpyAsync of ") + what);
  return Status::OK();
}

// Copies between device scratch and a caller's array, in stream order
// (gpu/staged_copy.h: pageable arrays through pinned chunks, which the
// driver's one-thread staging of a pageable cudaMemcpyAsync would bound at
// 6-10 GB/s; any other array by one enqueued DMA).
Status CopyIn(void* device, const void* host, size_t bytes, cudaStream_t stream, const char* what) {
  return gpkv::gpu::CopyToDevice(device, host, bytes, stream, std::string("slab hash: ") + what);
}
Status CopyOut(void* host, const void* device, size_t bytes, cudaStream_t stream,
               const char* what) {
  return gpkv::gpu::CopyToHost(host, device, bytes, stream, std::string("slab hash: ") + what);
}

bool IsOutOfDeviceMemory(const Status& status) { return status.code() == Code::kOutOfDeviceMemory; }

// Whether the kernels need a copy of a caller's array in device memory: not
// when it is this device's memory, nor (in_place) host memory mapped at its
// own address. A null array (an optional one) needs none.
bool NeedsStaging(const void* array, size_t bytes, int device, bool in_place) {
  if (array == nullptr) return false;
  bool mapped = false;
  const gpkv::gpu::MemoryKind kind = gpkv::gpu::ClassifyMemory(array, bytes, device, &mapped);
  if (kind == gpkv::gpu::MemoryKind::kDevice) return false;
  return !(in_place && kind == gpkv::gpu::MemoryKind::kPinned && mapped);
}

// A caller's batch array as the kernels see it: the array itself when it is
// in this device's memory or used in place, else a piece of the batch's
// arena (taken from the plan at construction) that the caller's bytes are
// copied into or out of.
class StagedArray {
 public:
  StagedArray(const void* array, size_t bytes, int device, bool in_place,
              gpkv::gpu::ArenaPlan& plan)
      : array_(static_cast<const uint8_t*>(array)),
        bytes_(bytes),
        staged_(NeedsStaging(array, bytes, device, in_place)),
        at_(staged_ ? plan.Take(bytes) : 0) {}

  // The array the kernels use, once the arena is reserved.
  uint8_t* On(uint8_t* arena) const { return staged_ ? arena + at_ : const_cast<uint8_t*>(array_); }
  // Enqueues the copy of the caller's bytes into the arena (if staged).
  Status In(uint8_t* arena, cudaStream_t stream, const char* what) const {
    return staged_ ? CopyIn(arena + at_, array_, bytes_, stream, what) : Status::OK();
  }
  // Enqueues the copy of the kernels' results to the caller (if staged).
  Status Out(uint8_t* arena, cudaStream_t stream, const char* what) const {
    return staged_ ? CopyOut(const_cast<uint8_t*>(array_), arena + at_, bytes_, stream, what)
                   : Status::OK();
  }

 private:
  const uint8_t* array_;
  size_t bytes_;
  bool staged_;
  size_t at_;
};

// The arena pieces a write batch's kernels write (WriteSink): the operations
// that found no room (retries only: puts and mixed batches) and the list the
// next launch runs, and the retired value slabs (out-of-line values only).
class WritePieces {
 public:
  WritePieces(size_t count, bool retries, bool out_of_line, gpkv::gpu::ArenaPlan& plan)
      : retry_at_(retries ? plan.Take(count * sizeof(uint32_t)) : 0),
        list_at_(retries ? plan.Take(count * sizeof(uint32_t)) : 0),
        retired_at_(out_of_line ? plan.Take(count * sizeof(uint32_t)) : 0),
        retries_(retries),
        out_of_line_(out_of_line) {}

  // The sink of the batch, once the arena is reserved.
  WriteSink Sink(BatchCounters* counters, uint8_t* arena) const {
    WriteSink sink;
    sink.counters = counters;
    if (retries_) sink.retry_ops = reinterpret_cast<uint32_t*>(arena + retry_at_);
    if (out_of_line_) sink.retired = reinterpret_cast<uint32_t*>(arena + retired_at_);
    return sink;
  }
  uint32_t* List(uint8_t* arena) const { return reinterpret_cast<uint32_t*>(arena + list_at_); }

 private:
  size_t retry_at_;
  size_t list_at_;
  size_t retired_at_;
  bool retries_;
  bool out_of_line_;
};

// A batch call's caller arrays, planned together in this order: operation
// codes (mixed), keys, values, and a flag per operation (results, found or
// erased flags); a call passes null for those it has not. With in_place,
// a batch of at most kInPlaceMaxOps operations uses its mapped host arrays
// in place.
class StagedBatch {
 public:
  StagedBatch(const uint8_t* ops, const uint8_t* keys, const uint8_t* values, const uint8_t* flags,
              size_t count, const TableOptions& options, int device, bool in_place,
              gpkv::gpu::ArenaPlan& plan)
      : count_(count),
        value_size_(options.value_size),
        in_place_(in_place && count <= kInPlaceMaxOps),
        ops_(ops, count, device, in_place_, plan),
        keys_(keys, count * options.key_size, device, in_place_, plan),
        values_(values, count * options.value_size, device, in_place_, plan),
        flags_(flags, count, device, in_place_, plan) {}

  // The arrays the kernels use, once the arena is reserved.
  BatchArrays On(uint8_t* arena) const {
    BatchArrays batch;
    batch.ops = ops_.On(arena);
    batch.keys = keys_.On(arena);
    batch.values = values_.On(arena);
    batch.flags = flags_.On(arena);
    batch.count = count_;
    batch.keys_aligned = Aligned8(batch.keys);
    batch.values_aligned =
        batch.values != nullptr && Aligned8(batch.values) && value_size_ % 8 == 0;
    return batch;
  }
  // Enqueues the copies of what the kernels read: operations, keys and (when
  // values_in) values.
  Status In(uint8_t* arena, cudaStream_t stream, bool values_in) const {
    GPKV_RETURN_IF_ERROR(ops_.In(arena, stream, "operations"));
    GPKV_RETURN_IF_ERROR(keys_.In(arena, stream, "keys"));
    return values_in ? values_.In(arena, stream, "values") : Status::OK();
  }
  // Enqueues the copies of what the kernels wrote: (when values_out) values,
  // and the flags, named `flags_what`.
  Status Out(uint8_t* arena, cudaStream_t stream, bool values_out, const char* flags_what) const {
    if (values_out) GPKV_RETURN_IF_ERROR(values_.Out(arena, stream, "values"));
    return flags_.Out(arena, stream, flags_what);
  }

 private:
  size_t count_;
  uint32_t value_size_;
  bool in_place_;  // before the arrays: their constructors read it
  StagedArray ops_;
  StagedArray keys_;
  StagedArray values_;
  StagedArray flags_;
};

}  // namespace

// ---------------------------------------------------------------- public API

Result<std::unique_ptr<GpuBackend>> GpuBackend::Create(const TableOptions& options, int device) {
  GPKV_RETURN_IF_ERROR(gpkv::gpu::DeviceUsable(device));
  if (!IsValidSizes(options.key_size, options.value_size)) {
    return Status::InvalidArgument("slab hash: keys of " + std::to_string(options.key_size) +
                                   " bytes and values of " + std::to_string(options.value_size) +
                                   " bytes are not supported (keys 8, 16 or 32, values 1..128)");
  }
  auto impl = std::make_unique<Impl>(options, device);
  GPKV_RETURN_IF_ERROR(impl->Initialize());
  return std::unique_ptr<GpuBackend>(new GpuBackend(std::move(impl)));
}

GpuBackend::GpuBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuBackend::~GpuBackend() = default;

Status GpuBackend::PutWhile(const uint8_t* keys, const uint8_t* values, size_t count,
                            const std::function<void()>& meanwhile) {
  HostWork work(&meanwhile);
  const Status put = impl_->Put(keys, values, count, nullptr, &work);
  work.Run();  // unless run: the put ended before its first launch
  return put;
}
Status GpuBackend::Put(const uint8_t* keys, const uint8_t* values, size_t count, void* stream) {
  return impl_->Put(keys, values, count, AsStream(stream));
}
Status GpuBackend::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                       void* stream) {
  return impl_->Get(keys, values, found, count, AsStream(stream));
}
Status GpuBackend::Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) {
  return impl_->Erase(keys, erased, count, AsStream(stream));
}
Status GpuBackend::Mixed(const uint8_t* ops, const uint8_t* keys, uint8_t* values, uint8_t* results,
                         size_t count, void* stream) {
  return impl_->Mixed(ops, keys, values, results, count, AsStream(stream));
}
Status GpuBackend::Flush(void* stream) { return impl_->Flush(AsStream(stream)); }
Status GpuBackend::Reserve(uint64_t keys, void* stream) {
  return impl_->Reserve(keys, AsStream(stream));
}
Status GpuBackend::Scan(const Table::ScanVisitor& visit) { return impl_->Scan(visit); }
Status GpuBackend::ScanIntoDevice(uint64_t* keys, uint64_t* values, uint64_t capacity,
                                  uint64_t* pairs) {
  return impl_->ScanIntoDevice(keys, values, capacity, pairs);
}
int GpuBackend::cuda_device() const { return impl_->device(); }
Result<slab_hash::Stats> GpuBackend::Stats() { return impl_->Stats(); }

// ---------------------------------------------------------------- create

GpuBackend::Impl::Impl(const TableOptions& options, int device)
    : options_(options),
      device_(device),
      geometry_(GeometryFor(options.key_size, options.value_size)) {}

GpuBackend::Impl::~Impl() {
  cudaSetDevice(device_);
  workspaces_.clear();  // waits for their streams
  if (buckets_ != nullptr) cudaFree(buckets_);
  if (rehash_start_ != nullptr) cudaEventDestroy(rehash_start_);
  if (rehash_stop_ != nullptr) cudaEventDestroy(rehash_stop_);
}

Status GpuBackend::Impl::Initialize() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "slab hash: cudaSetDevice");
  seed_ = RandomSeed();
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreate(&rehash_start_), "slab hash: cudaEventCreate");
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreate(&rehash_stop_), "slab hash: cudaEventCreate");
  const uint64_t expected_keys = std::max<uint64_t>(options_.expected_keys, 1);
  const uint64_t buckets = BucketsFor(expected_keys, geometry_.slots_per_slab);
  // SlabAlloc sized for the expected keys, so that filling the table grows
  // nothing: lists at create's fill chain about an eighth of their buckets
  // (measured: 12% at 2^24 8-byte pairs), and out-of-line values take a slab
  // each.
  constexpr uint64_t kSlabsPerSuperBlock =
      uint64_t{gpkv::gpu::kSlabsPerBlock} * gpkv::gpu::kBlocksPerSuperBlock;
  const uint64_t slabs =
      buckets / 6 + (geometry_.value_out_of_line ? expected_keys + expected_keys / 8 : 0);
  const uint64_t super_blocks = std::min<uint64_t>(
      gpkv::gpu::kMaxSuperBlocks,
      std::max<uint64_t>(1, (slabs + kSlabsPerSuperBlock - 1) / kSlabsPerSuperBlock));
  auto alloc = gpkv::gpu::SlabAlloc::Create(static_cast<uint32_t>(super_blocks));
  if (alloc.ok()) {
    alloc_ = std::move(alloc.value());
  } else if (alloc.status().code() == Code::kOutOfDeviceMemory && super_blocks > 1) {
    auto small = gpkv::gpu::SlabAlloc::Create(1);  // grown as the keys come
    if (!small.ok()) return small.status();
    alloc_ = std::move(small.value());
  } else {
    return alloc.status();
  }
  alloc_view_ = alloc_->view();
  auto workspace = AcquireWorkspace();
  if (!workspace.ok()) return workspace.status();
  Lease lease(this, *workspace);
  GPKV_RETURN_IF_ERROR(AllocateBuckets(buckets, &buckets_, lease.workspace()->stream()));
  bucket_count_ = buckets;
  // The first caller's write scratch (retry and operation lists) for a batch
  // of the expected keys: a first bulk put allocates nothing.
  const uint64_t chunk = std::min<uint64_t>(expected_keys, kMaxChunkOps);
  GPKV_RETURN_IF_ERROR(
      lease.workspace()->Reserve(2 * gpkv::gpu::ArenaBytes(chunk * sizeof(uint32_t))));
  return lease.workspace()->Wait("the new bucket array");
}

// ---------------------------------------------------------------- helpers

Result<Workspace*> GpuBackend::Impl::AcquireWorkspace() {
  std::lock_guard<std::mutex> lock(workspaces_mutex_);
  if (!free_workspaces_.empty()) {
    Workspace* workspace = free_workspaces_.back();
    free_workspaces_.pop_back();
    return workspace;
  }
  auto created = Workspace::Create();
  if (!created.ok()) return created.status();
  workspaces_.push_back(std::move(created.value()));
  return workspaces_.back().get();
}

void GpuBackend::Impl::ReleaseWorkspace(Workspace* workspace) {
  std::lock_guard<std::mutex> lock(workspaces_mutex_);
  free_workspaces_.push_back(workspace);
}

DeviceView GpuBackend::Impl::View(uint32_t tag) const {
  DeviceView view;
  view.buckets = buckets_;
  view.bucket_count = bucket_count_;
  view.seed = seed_;
  view.alloc = alloc_view_;
  view.geometry = geometry_;
  view.tag = tag;
  return view;
}

uint64_t GpuBackend::Impl::NewSlabsEstimate(uint64_t count) const {
  const uint64_t slots = geometry_.slots_per_slab;
  uint64_t slabs = geometry_.value_out_of_line ? count : 0;
  // Lists of about one slab overflow rarely; fuller ones need a slab per
  // list's worth of new keys.
  const bool fits_base_slabs = live_keys_ + count <= bucket_count_ * slots;
  slabs += fits_base_slabs ? count / slots / 8 : count / slots;
  return slabs + 256;
}

Status GpuBackend::Impl::PrepareWrite(Workspace& ws, uint64_t new_slabs) {
  // Writes that may insert (new_slabs != 0) flush and rehash first; erases
  // never lengthen a list, so they leave both to the next insert.
  if (new_slabs != 0) GPKV_RETURN_IF_ERROR(MaybeMaintain(ws));
  bool wrapped = false;
  tag_ = NextBatchTag(tag_, &wrapped);
  if (wrapped) GPKV_RETURN_IF_ERROR(LaunchClearTags(View(0), ws.stream()));
  if (new_slabs != 0) {
    // Room ahead, so that launches rarely find SlabAlloc full. When the
    // device has no more, the launch's retries grow what they need, or fail.
    // The count of slabs in use costs a kernel and a wait: only when the
    // host's bound on it says the batch may pass the fill bound.
    const double room = kMaxSlabFill * static_cast<double>(alloc_->capacity_slabs());
    const auto fits = [&] {
      return slabs_in_use_bound_ != kUnknownSlabs &&
             static_cast<double>(slabs_in_use_bound_ + new_slabs) <= room;
    };
    if (!fits()) {
      auto counted = alloc_->CountInUse(ws.stream());
      if (!counted.ok()) return counted.status();
      slabs_in_use_bound_ = *counted;
    }
    if (!fits()) {
      const Status reserved = alloc_->Reserve(new_slabs, kMaxSlabFill, ws.stream());
      if (!reserved.ok() && !IsOutOfDeviceMemory(reserved)) return reserved;
      alloc_view_ = alloc_->view();
    }
  }
  return Status::OK();
}

Status GpuBackend::Impl::RunWrite(Workspace& ws, WriteLauncher launch, BatchArrays batch,
                                  WriteSink sink, uint32_t* op_list, WriteTotals* totals,
                                  HostWork* work) {
  // Out-of-line values take a value slab per put: whole warps from the start.
  const bool whole_warps = geometry_.value_out_of_line;
  while (true) {
    GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
    alloc_view_ = alloc_->view();  // a new seed: warps start from other blocks
    const DeviceView view = View(tag_);
    GPKV_RETURN_IF_ERROR(launch(view, sink, batch, whole_warps, ws.stream()));
    if (sink.retired != nullptr) GPKV_RETURN_IF_ERROR(LaunchFreeRetired(view, sink, ws.stream()));
    GPKV_RETURN_IF_ERROR(ws.FetchCounters());
    if (work != nullptr) work->Run();
    GPKV_RETURN_IF_ERROR(ws.Wait("a write batch"));
    const BatchCounters& counters = ws.counters();
    totals->inserted += counters.inserted;
    totals->replaced += counters.replaced;
    totals->erased += counters.erased;
    totals->duplicate |= counters.duplicate != 0;
    if (slabs_in_use_bound_ != kUnknownSlabs) slabs_in_use_bound_ += counters.allocated;
    const uint64_t retries = counters.retries;
    if (retries == 0) return Status::OK();
    if (op_list == nullptr) return Status::IOError("slab hash: an erase asked for a slab");
    // SlabAlloc was full for these operations (nothing of them applied): grow
    // it and run them again.
    GPKV_RETURN_IF_ERROR(GrowSlabs(retries * (geometry_.value_out_of_line ? 2 : 1)));
    GPKV_RETURN_IF_ERROR(Copy(op_list, sink.retry_ops, retries * sizeof(uint32_t), ws.stream(),
                              "the operations to retry"));
    batch.op_index = op_list;
    batch.kind_counts = nullptr;
    batch.count = retries;
  }
}

Result<DuplicateScratch> GpuBackend::Impl::DuplicateScratchFor(Workspace& ws, uint64_t count,
                                                               uint8_t** resolved) {
  size_t temp_bytes = 0;
  GPKV_RETURN_IF_ERROR(DuplicateSortTempBytes(count, &temp_bytes));
  gpkv::gpu::ArenaPlan plan;
  size_t arrays[4];
  for (size_t& at : arrays) at = plan.Take(count * sizeof(uint32_t));
  const size_t temp_at = plan.Take(temp_bytes);
  const size_t resolved_at = resolved != nullptr ? plan.Take(count) : 0;
  GPKV_RETURN_IF_ERROR(ws.ReserveSide(plan.bytes()));
  uint8_t* side = ws.side();
  DuplicateScratch scratch;
  scratch.sort_keys_in = reinterpret_cast<uint32_t*>(side + arrays[0]);
  scratch.sort_keys_out = reinterpret_cast<uint32_t*>(side + arrays[1]);
  scratch.indices_in = reinterpret_cast<uint32_t*>(side + arrays[2]);
  scratch.indices_out = reinterpret_cast<uint32_t*>(side + arrays[3]);
  scratch.sort_temp = gpkv::gpu::CubTempStorage{side + temp_at, temp_bytes};
  if (resolved != nullptr) *resolved = side + resolved_at;
  return scratch;
}

// ---------------------------------------------------------------- writes

Status GpuBackend::Impl::Put(const uint8_t* keys, const uint8_t* values, size_t count,
                             cudaStream_t caller, HostWork* work) {
  if (count == 0) return Status::OK();
  if (keys == nullptr || values == nullptr) {
    return Status::InvalidArgument("slab hash: Put without keys or values");
  }
  return WithWorkspace<std::unique_lock<std::shared_mutex>>(caller, [&](Workspace& ws) -> Status {
    // A bulk build: an empty table takes buckets for the whole batch at once.
    if (live_keys_ == 0 && static_cast<double>(count) > static_cast<double>(bucket_count_) *
                                                            geometry_.slots_per_slab *
                                                            kInitialSlabFill) {
      const Status reserved = ReserveLocked(ws, count);
      if (!reserved.ok() && !IsOutOfDeviceMemory(reserved)) return reserved;
    }
    for (size_t done = 0; done < count; done += kMaxChunkOps) {
      const size_t chunk = std::min<size_t>(count - done, kMaxChunkOps);
      GPKV_RETURN_IF_ERROR(PutChunk(ws, keys + done * options_.key_size,
                                    values + done * options_.value_size, chunk, work));
    }
    return Status::OK();
  });
}

Status GpuBackend::Impl::PutChunk(Workspace& ws, const uint8_t* keys, const uint8_t* values,
                                  size_t count, HostWork* work) {
  gpkv::gpu::ArenaPlan plan;
  const StagedBatch staged(nullptr, keys, values, nullptr, count, options_, device_,
                           /*in_place=*/true, plan);
  const WritePieces pieces(count, /*retries=*/true, geometry_.value_out_of_line, plan);
  GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  uint8_t* arena = ws.arena();
  BatchArrays batch = staged.On(arena);
  GPKV_RETURN_IF_ERROR(staged.In(arena, ws.stream(), /*values_in=*/true));
  const WriteSink sink = pieces.Sink(ws.device_counters(), arena);
  uint32_t* list = pieces.List(arena);

  GPKV_RETURN_IF_ERROR(PrepareWrite(ws, NewSlabsEstimate(count)));
  WriteTotals totals;
  const Status status = RunWrite(ws, LaunchPut, batch, sink, list, &totals, work);
  live_keys_ += totals.inserted;
  GPKV_RETURN_IF_ERROR(status);
  if (!totals.duplicate) return Status::OK();

  // The batch put some key twice and the copies ran in any order: run each
  // such key's last put again.
  auto scratch = DuplicateScratchFor(ws, count, nullptr);
  if (!scratch.ok()) return scratch.status();
  GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
  GPKV_RETURN_IF_ERROR(
      LaunchListLastPuts(View(tag_), batch, *scratch, list, ws.device_counters(), ws.stream()));
  GPKV_RETURN_IF_ERROR(ws.FetchCounters());
  GPKV_RETURN_IF_ERROR(ws.Wait("the duplicate sort of a put batch"));
  const uint64_t listed = ws.counters().retries;
  if (listed == 0) return Status::OK();
  BatchArrays last_puts = batch;
  last_puts.op_index = list;
  last_puts.count = listed;
  WriteTotals again;
  const Status reapplied = RunWrite(ws, LaunchPut, last_puts, sink, list, &again);
  live_keys_ += again.inserted;
  return reapplied;
}

Status GpuBackend::Impl::Erase(const uint8_t* keys, uint8_t* erased, size_t count,
                               cudaStream_t caller) {
  if (count == 0) return Status::OK();
  if (keys == nullptr) return Status::InvalidArgument("slab hash: Erase without keys");
  return WithWorkspace<std::unique_lock<std::shared_mutex>>(caller, [&](Workspace& ws) -> Status {
    for (size_t done = 0; done < count; done += kMaxChunkOps) {
      const size_t chunk = std::min<size_t>(count - done, kMaxChunkOps);
      GPKV_RETURN_IF_ERROR(EraseChunk(ws, keys + done * options_.key_size,
                                      erased == nullptr ? nullptr : erased + done, chunk));
    }
    // No flush here: dead slots make no list longer than it was before the
    // erase, so reads cost what they did. They cost when inserts must append
    // past them, so the put and mixed paths flush (MaybeMaintain). Flushing
    // here took deleting every key of a 60%-full table from about 6 to 2.2 G/s
    // (three flushes of every list while it emptied; H100, docs/bench).
    return Status::OK();
  });
}

Status GpuBackend::Impl::EraseChunk(Workspace& ws, const uint8_t* keys, uint8_t* erased,
                                    size_t count) {
  gpkv::gpu::ArenaPlan plan;
  const StagedBatch staged(nullptr, keys, nullptr, erased, count, options_, device_,
                           /*in_place=*/true, plan);
  const WritePieces pieces(count, /*retries=*/false, geometry_.value_out_of_line, plan);
  GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  uint8_t* arena = ws.arena();
  BatchArrays batch = staged.On(arena);
  GPKV_RETURN_IF_ERROR(staged.In(arena, ws.stream(), /*values_in=*/false));
  const WriteSink sink = pieces.Sink(ws.device_counters(), arena);

  GPKV_RETURN_IF_ERROR(PrepareWrite(ws, 0));
  WriteTotals totals;
  const Status status = RunWrite(ws, LaunchErase, batch, sink, nullptr, &totals);
  live_keys_ -= totals.erased;
  dead_slots_ += totals.erased;
  GPKV_RETURN_IF_ERROR(status);
  if (totals.duplicate && batch.flags != nullptr) {
    // The batch erased some key twice: the copy that reported it may not be
    // the first.
    uint8_t* resolved = nullptr;
    auto scratch = DuplicateScratchFor(ws, count, &resolved);
    if (!scratch.ok()) return scratch.status();
    GPKV_RETURN_IF_ERROR(LaunchResolveErased(View(tag_), batch, *scratch, resolved, ws.stream()));
  }
  GPKV_RETURN_IF_ERROR(staged.Out(arena, ws.stream(), /*values_out=*/false, "erased flags"));
  return ws.Wait("an erase batch");
}

Status GpuBackend::Impl::Mixed(const uint8_t* ops, const uint8_t* keys, uint8_t* values,
                               uint8_t* results, size_t count, cudaStream_t caller) {
  if (count == 0) return Status::OK();
  if (ops == nullptr || keys == nullptr || values == nullptr) {
    return Status::InvalidArgument("slab hash: Mixed without operations, keys or values");
  }
  return WithWorkspace<std::unique_lock<std::shared_mutex>>(caller, [&](Workspace& ws) -> Status {
    for (size_t done = 0; done < count; done += kMaxChunkOps) {
      const size_t chunk = std::min<size_t>(count - done, kMaxChunkOps);
      GPKV_RETURN_IF_ERROR(MixedChunk(ws, ops + done, keys + done * options_.key_size,
                                      values + done * options_.value_size,
                                      results == nullptr ? nullptr : results + done, chunk));
    }
    if (NeedsFlush(dead_slots_, live_keys_, bucket_count_, geometry_.slots_per_slab))
      GPKV_RETURN_IF_ERROR(FlushLocked(ws));
    return Status::OK();
  });
}

Status GpuBackend::Impl::MixedChunk(Workspace& ws, const uint8_t* ops, const uint8_t* keys,
                                    uint8_t* values, uint8_t* results, size_t count) {
  gpkv::gpu::ArenaPlan plan;
  const StagedBatch staged(ops, keys, values, results, count, options_, device_, /*in_place=*/true,
                           plan);
  const WritePieces pieces(count, /*retries=*/true, geometry_.value_out_of_line, plan);
  size_t order_temp_bytes = 0;
  GPKV_RETURN_IF_ERROR(MixedOrderTempBytes(count, &order_temp_bytes));
  const size_t order_at = plan.Take(3 * count * sizeof(uint32_t));
  const size_t kind_counts_at = plan.Take(2 * sizeof(uint32_t));
  const size_t order_temp_at = plan.Take(order_temp_bytes);
  GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  uint8_t* arena = ws.arena();
  BatchArrays batch = staged.On(arena);
  GPKV_RETURN_IF_ERROR(staged.In(arena, ws.stream(), /*values_in=*/true));
  const WriteSink sink = pieces.Sink(ws.device_counters(), arena);

  GPKV_RETURN_IF_ERROR(PrepareWrite(ws, NewSlabsEstimate(count)));
  // The batch in kind order (mixed_order.cu).
  MixedOrder order;
  order.positions = reinterpret_cast<uint32_t*>(arena + order_at);
  order.kind_counts = reinterpret_cast<uint32_t*>(arena + kind_counts_at);
  order.temp = gpkv::gpu::CubTempStorage{arena + order_temp_at, order_temp_bytes};
  GPKV_RETURN_IF_ERROR(LaunchMixedOrder(batch, order, ws.stream()));
  batch.op_index = order.positions;
  batch.kind_counts = order.kind_counts;
  WriteTotals totals;
  const Status status = RunWrite(ws, LaunchMixed, batch, sink, pieces.List(arena), &totals);
  live_keys_ += totals.inserted;
  live_keys_ -= totals.erased;
  dead_slots_ += totals.erased;
  GPKV_RETURN_IF_ERROR(status);
  GPKV_RETURN_IF_ERROR(staged.Out(arena, ws.stream(), /*values_out=*/true, "results"));
  return ws.Wait("a mixed batch");
}

// ---------------------------------------------------------------- reads

Status GpuBackend::Impl::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                             cudaStream_t caller) {
  if (count == 0) return Status::OK();
  if (keys == nullptr || values == nullptr) {
    return Status::InvalidArgument("slab hash: Get without keys or values");
  }
  // Pinned or registered host arrays, none pageable (whose copies the host
  // stages, and which the pipeline measured slower than one copy each way).
  auto pinned_host = [&](const void* array) {
    return array == nullptr ||
           (!gpkv::gpu::IsDeviceMemory(array, device_) && !gpkv::gpu::IsPageable(array));
  };
  const bool pipelined =
      count > kHostChunkOps && pinned_host(keys) && pinned_host(values) && pinned_host(found);
  // A small get uses mapped host arrays in place only when no other get of
  // the table is in flight: one caller's gets of 4096 from registered memory
  // took 18.5 us in place against 29.6 copied, but eight callers' together
  // ran at 0.83x the copies' rate (H200).
  const bool alone = gets_in_flight_.fetch_add(1) == 0;
  const Status status =
      WithWorkspace<std::shared_lock<std::shared_mutex>>(caller, [&](Workspace& ws) -> Status {
        if (pipelined) return GetPipelined(ws, keys, values, found, count, caller);
        return GetInTurn(ws, keys, values, found, count, kMaxChunkOps, alone);
      });
  gets_in_flight_.fetch_sub(1);
  return status;
}

Status GpuBackend::Impl::GetInTurn(Workspace& ws, const uint8_t* keys, uint8_t* values,
                                   uint8_t* found, size_t count, size_t chunk_ops, bool in_place) {
  for (size_t done = 0; done < count; done += chunk_ops) {
    GPKV_RETURN_IF_ERROR(GetChunk(ws, keys + done * options_.key_size,
                                  values + done * options_.value_size,
                                  found == nullptr ? nullptr : found + done,
                                  std::min<size_t>(count - done, chunk_ops), in_place));
  }
  return ws.Wait("a get batch");
}

Status GpuBackend::Impl::GetChunk(Workspace& ws, const uint8_t* keys, uint8_t* values,
                                  uint8_t* found, size_t count, bool in_place) {
  gpkv::gpu::ArenaPlan plan;
  const StagedBatch staged(nullptr, keys, values, found, count, options_, device_, in_place, plan);
  if (plan.bytes() != 0) {
    // The previous chunk's copies out of the arena must be done.
    GPKV_RETURN_IF_ERROR(ws.Wait("a get chunk"));
    GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  }
  uint8_t* arena = ws.arena();
  const BatchArrays batch = staged.On(arena);
  GPKV_RETURN_IF_ERROR(staged.In(arena, ws.stream(), /*values_in=*/false));
  GPKV_RETURN_IF_ERROR(LaunchGet(View(0), batch, ws.stream()));
  GPKV_RETURN_IF_ERROR(staged.Out(arena, ws.stream(), /*values_out=*/true, "found flags"));
  return Status::OK();
}

Status GpuBackend::Impl::GetPipelined(Workspace& ws, const uint8_t* keys, uint8_t* values,
                                      uint8_t* found, size_t count, cudaStream_t caller) {
  const size_t chunks = (count + kHostChunkOps - 1) / kHostChunkOps;
  // A chunk is copied out after the next one is copied in, so the pipeline
  // needs two lanes at least; a workspace that cannot be had (device memory
  // full) makes it shorter, and without a second lane the chunks run in turn
  // on ws.
  std::vector<Lease> leases;  // handed back after the wait below
  leases.reserve(kHostLanes);
  std::vector<Workspace*> lanes = {&ws};
  while (lanes.size() < std::min(chunks, kHostLanes)) {
    auto lane = AcquireWorkspace();
    if (!lane.ok()) break;
    leases.emplace_back(this, *lane);
    if (!(*lane)->OrderAfter(caller).ok()) break;
    lanes.push_back(*lane);
  }
  if (lanes.size() < 2) {
    return GetInTurn(ws, keys, values, found, count, kHostChunkOps, /*in_place=*/false);
  }
  // Each lane's chunk in flight, as its arena holds it (kept for the copy
  // out, so that the arrays are classified once a chunk).
  std::vector<std::optional<StagedBatch>> in_flight(lanes.size());
  auto copy_out = [&](size_t c) {
    Workspace& lane = *lanes[c % lanes.size()];
    return in_flight[c % lanes.size()]->Out(lane.arena(), lane.stream(), /*values_out=*/true,
                                            "found flags");
  };
  auto run = [&]() -> Status {
    for (size_t c = 0; c < chunks; ++c) {
      Workspace& lane = *lanes[c % lanes.size()];
      const size_t begin = c * kHostChunkOps;
      gpkv::gpu::ArenaPlan plan;
      std::optional<StagedBatch>& staged = in_flight[c % lanes.size()];
      staged.emplace(nullptr, keys + begin * options_.key_size,
                     values + begin * options_.value_size,
                     found == nullptr ? nullptr : found + begin,
                     std::min<size_t>(kHostChunkOps, count - begin), options_, device_,
                     /*in_place=*/false, plan);
      // The lane's previous chunk must be copied out before its arena is
      // used again.
      GPKV_RETURN_IF_ERROR(lane.Wait("a get chunk"));
      GPKV_RETURN_IF_ERROR(lane.Reserve(plan.bytes()));
      GPKV_RETURN_IF_ERROR(staged->In(lane.arena(), lane.stream(), /*values_in=*/false));
      GPKV_RETURN_IF_ERROR(LaunchGet(View(0), staged->On(lane.arena()), lane.stream()));
      // The chunk before is copied out once this one is queued, so that the
      // copy engines take this chunk's keys in while that chunk's answers
      // go out.
      if (c > 0) GPKV_RETURN_IF_ERROR(copy_out(c - 1));
    }
    return copy_out(chunks - 1);
  };
  Status status = run();
  // Nothing of the batch is left in flight, also after an error.
  for (Workspace* lane : lanes) {
    const Status waited = lane->Wait("a get batch");
    if (status.ok()) status = waited;
  }
  return status;
}

}  // namespace gpkv::slab_hash::gpu
