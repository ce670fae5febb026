// GpuBackend: waiting batches with arrays in host memory, as a pipeline of
// chunks over a workspace's lanes (host_staging.h). Chunk c runs on lane
// c % lanes: its keys (and values) are copied in, its kernels run, its
// answers are copied out, all on the lane's stream; the host stages chunk
// c+1 meanwhile. A write batch's chunks run their duplicate pass side by side
// but their put / erase kernels one after another (each waits for the
// previous chunk's kernels_done event), so the batch applies in order: the
// last put of a key wins, the first erase of a key reports it, as in one
// chunk.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gpu/cuda_check.h"
#include "tables/gphash/gpu/backend_impl.h"
#include "util/copy_pool.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::ArenaPlan;

namespace {

constexpr size_t kNoChunk = std::numeric_limits<size_t>::max();

bool Aligned8(const void* address) { return (reinterpret_cast<uintptr_t>(address) & 7) == 0; }

// The chunking of one batch.
struct Chunking {
  size_t chunk = 0;   // operations per chunk (the last may hold fewer)
  size_t chunks = 0;  // chunks
  size_t lanes = 0;   // lanes used
  size_t Begin(size_t c) const { return c * chunk; }
  size_t Size(size_t c, size_t count) const { return std::min(chunk, count - c * chunk); }
};

Chunking ChunkingFor(size_t count, const GpuTableOptions& options) {
  Chunking chunking;
  const size_t per_chunk =
      std::clamp<size_t>(static_cast<size_t>(options.host_chunk_ops), 1, kMaxChunkOps);
  chunking.chunk = std::min(count, per_chunk);
  chunking.chunks = (count + chunking.chunk - 1) / chunking.chunk;
  chunking.lanes = std::min<size_t>(chunking.chunks, std::max<uint32_t>(options.host_lanes, 1));
  return chunking;
}

Status CopyAsync(void* target, const void* source, size_t bytes, cudaStream_t stream,
                 const char* what) {
  if (bytes == 0) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(target, source, bytes, cudaMemcpyDefault, stream),
                            std::string("cudaMemcpyAsync of ") + what);
  return Status::OK();
}

// The lanes of a batch, grown to the plan's sizes.
Status ReserveLanes(Workspace& ws, const Chunking& chunking, size_t device_bytes,
                    size_t host_in_bytes, size_t host_out_bytes, std::vector<StagingLane*>* lanes) {
  lanes->clear();
  for (size_t l = 0; l < chunking.lanes; ++l) {
    auto lane = ws.Lane(l);
    if (!lane.ok()) return lane.status();
    GPKV_RETURN_IF_ERROR((*lane)->Reserve(device_bytes, host_in_bytes, host_out_bytes));
    lanes->push_back(*lane);
  }
  return ws.ForkLanes(chunking.lanes);
}

}  // namespace

bool GpuBackend::Impl::PipelinesHost(const void* a, size_t a_bytes, const void* b, size_t b_bytes,
                                     const void* c, size_t c_bytes, BatchKinds* kinds) const {
  if (options_.host_lanes == 0) return false;
  const void* arrays[3] = {a, b, c};
  const size_t bytes[3] = {a_bytes, b_bytes, c_bytes};
  bool any_host = false;
  for (int i = 0; i < 3; ++i) {
    const bool absent = arrays[i] == nullptr || bytes[i] == 0;
    kinds->in_place[i] = absent;
    kinds->kinds[i] =
        absent ? MemoryKind::kDevice
               : ClassifyMemory(arrays[i], bytes[i], options_.device, &kinds->in_place[i]);
    any_host |= kinds->kinds[i] != MemoryKind::kDevice;
  }
  return any_host;
}

Status GpuBackend::Impl::PipelinedGet(Workspace& ws, const uint8_t* keys, uint8_t* values,
                                      uint8_t* found, size_t count, const BatchKinds& kinds) {
  const size_t key_bytes = key_size(), value_bytes = word_size();
  const MemoryKind keys_kind = kinds.kinds[0];
  const MemoryKind values_kind = kinds.kinds[1];
  const MemoryKind found_kind = kinds.kinds[2];
  const Chunking chunking = ChunkingFor(count, options_);
  const size_t chunk = chunking.chunk;
  bool sorted;
  {
    std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
    const bool warm_cache = bkt_cache_active_ && bkt_cache_->reloads() != 0;
    sorted = !view_.mirrored && (chunk >= options_.sorted_get_min_ops || !warm_cache);
  }
  // Arena of a lane: the chunk's keys, then its values and found flags side
  // by side (one copy out when both are staged).
  ArenaPlan plan;
  const size_t keys_at = plan.Take(chunk * key_bytes);
  const size_t out_at = plan.Take(chunk * (value_bytes + 1));
  SortPlan sort;
  if (sorted) GPKV_RETURN_IF_ERROR(PlanSort(plan, chunk, /*with_leaders=*/true, &sort));
  const bool stage_in = keys_kind == MemoryKind::kPageable;
  const bool stage_out =
      values_kind == MemoryKind::kPageable || found_kind == MemoryKind::kPageable;
  // A small batch of pageable arrays: the kernel reads its keys from and
  // writes its answers to the pinned staging itself.
  const bool zero_copy = chunking.chunks == 1 && count <= options_.host_zero_copy_ops &&
                         keys_kind == MemoryKind::kPageable &&
                         values_kind == MemoryKind::kPageable &&
                         (found == nullptr || found_kind == MemoryKind::kPageable);
  // A small batch of pinned or registered arrays: the kernel reads the keys
  // and writes the answers in place, over the link (no DMA copy in or out).
  const bool in_place = chunking.chunks == 1 && count <= options_.host_zero_copy_ops &&
                        keys_kind == MemoryKind::kPinned && values_kind == MemoryKind::kPinned &&
                        (found == nullptr || found_kind == MemoryKind::kPinned) && Aligned8(keys) &&
                        Aligned8(values) && kinds.in_place[0] && kinds.in_place[1] &&
                        kinds.in_place[2];
  std::vector<StagingLane*> lanes;
  GPKV_RETURN_IF_ERROR(ReserveLanes(ws, chunking, plan.bytes(), stage_in ? chunk * key_bytes : 0,
                                    stage_out ? chunk * (value_bytes + 1) : 0, &lanes));

  // The staging copies of the batch's chunks come one kernel time apart:
  // the copy pool's workers poll for them until the batch ends.
  std::optional<util::CopyPool::Session> copying;
  if ((stage_in || stage_out) && !zero_copy) copying.emplace(util::CopyPool::Shared());
  std::vector<size_t> held(chunking.lanes, kNoChunk);  // the chunk each lane runs
  // Waits for lane l's chunk and copies its staged answers out.
  auto finish = [&](size_t l) -> Status {
    const size_t c = held[l];
    if (c == kNoChunk) return Status::OK();
    held[l] = kNoChunk;
    GPKV_RETURN_IF_ERROR(lanes[l]->WaitDone("get chunk"));
    const size_t begin = chunking.Begin(c), n = chunking.Size(c, count);
    if (values_kind == MemoryKind::kPageable) {
      CopyHost(values + begin * value_bytes, lanes[l]->host_out(), n * value_bytes);
    }
    if (found_kind == MemoryKind::kPageable) {
      CopyHost(found + begin, lanes[l]->host_out() + n * value_bytes, n);
    }
    return Status::OK();
  };

  std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
  for (size_t c = 0; c < chunking.chunks; ++c) {
    const size_t l = c % chunking.lanes;
    StagingLane& lane = *lanes[l];
    // The lane's staging is reused: its previous chunk must be out.
    if (stage_in || stage_out) GPKV_RETURN_IF_ERROR(finish(l));
    const size_t begin = chunking.Begin(c), n = chunking.Size(c, count);
    const cudaStream_t stream = lane.stream();
    uint8_t* arena = lane.arena();
    const uint8_t* chunk_keys = keys + begin * key_bytes;
    if (zero_copy || in_place) {
      const uint8_t* in = chunk_keys;
      uint8_t* answers = values;
      uint8_t* flags = found;
      if (zero_copy) {
        CopyHost(lane.host_in(), chunk_keys, n * key_bytes);
        in = lane.host_in();
        answers = lane.host_out();
        flags = found == nullptr ? nullptr : answers + n * value_bytes;
      }
      if (sorted) {
        GPKV_RETURN_IF_ERROR(
            LaunchGetSorted(view_, in, answers, flags, n, SortScratchAt(arena, sort), stream));
      } else {
        // One chunk: lane 0, the workspace's stream, where its graphs run.
        GPKV_RETURN_IF_ERROR(LaunchGetGraph(ws.get_graphs(), view_, in, answers, flags, n, stream));
      }
      GPKV_RETURN_IF_ERROR(lane.RecordDone());
      held[l] = c;
      continue;
    }
    const uint8_t* device_keys = chunk_keys;
    if (keys_kind != MemoryKind::kDevice || !Aligned8(chunk_keys)) {
      const uint8_t* source = chunk_keys;
      if (stage_in) {
        CopyHost(lane.host_in(), chunk_keys, n * key_bytes);
        source = lane.host_in();
      }
      GPKV_RETURN_IF_ERROR(CopyAsync(arena + keys_at, source, n * key_bytes, stream, "get keys"));
      device_keys = arena + keys_at;
    }
    uint8_t* device_values =
        values_kind == MemoryKind::kDevice ? values + begin * value_bytes : arena + out_at;
    uint8_t* device_found = found == nullptr                    ? nullptr
                            : found_kind == MemoryKind::kDevice ? found + begin
                                                                : arena + out_at + n * value_bytes;
    if (sorted) {
      GPKV_RETURN_IF_ERROR(LaunchGetSorted(view_, device_keys, device_values, device_found, n,
                                           SortScratchAt(arena, sort), stream));
    } else {
      GPKV_RETURN_IF_ERROR(LaunchGet(view_, device_keys, device_values, device_found, n, stream));
    }
    if (values_kind == MemoryKind::kPinned) {
      GPKV_RETURN_IF_ERROR(CopyAsync(values + begin * value_bytes, device_values, n * value_bytes,
                                     stream, "get values"));
    }
    if (found_kind == MemoryKind::kPinned) {
      GPKV_RETURN_IF_ERROR(CopyAsync(found + begin, device_found, n, stream, "found flags"));
    }
    const bool values_staged = values_kind == MemoryKind::kPageable;
    const bool found_staged = found_kind == MemoryKind::kPageable;
    if (values_staged && (found_staged || found == nullptr)) {
      const size_t bytes = n * value_bytes + (found_staged ? n : 0);
      GPKV_RETURN_IF_ERROR(CopyAsync(lane.host_out(), arena + out_at, bytes, stream, "answers"));
    } else {
      if (values_staged) {
        GPKV_RETURN_IF_ERROR(
            CopyAsync(lane.host_out(), device_values, n * value_bytes, stream, "get values"));
      }
      if (found_staged) {
        GPKV_RETURN_IF_ERROR(
            CopyAsync(lane.host_out() + n * value_bytes, device_found, n, stream, "found flags"));
      }
    }
    GPKV_RETURN_IF_ERROR(lane.RecordDone());
    held[l] = c;
  }
  for (size_t c = chunking.chunks > chunking.lanes ? chunking.chunks - chunking.lanes : 0;
       c < chunking.chunks; ++c) {
    GPKV_RETURN_IF_ERROR(finish(c % chunking.lanes));
  }
  return Status::OK();
}

Status GpuBackend::Impl::PipelinedWrite(Workspace& ws, const uint8_t* keys, const uint8_t* values,
                                        uint8_t* erased, size_t count, const BatchKinds& kinds) {
  const bool is_put = values != nullptr;
  const size_t key_bytes = key_size(), value_bytes = word_size();
  const MemoryKind keys_kind = kinds.kinds[0];
  const MemoryKind values_kind = is_put ? kinds.kinds[1] : MemoryKind::kDevice;
  const MemoryKind erased_kind = is_put ? MemoryKind::kDevice : kinds.kinds[1];
  const Chunking chunking = ChunkingFor(count, options_);
  const size_t chunk = chunking.chunk;
  // Arena of a lane: keys and values first (the pinned input staging has the
  // same layout: one copy in when both are staged), then the kernels' arrays.
  ArenaPlan plan;
  const size_t keys_at = plan.Take(chunk * key_bytes);
  const size_t values_at = is_put ? plan.Take(chunk * value_bytes) : 0;
  const size_t inputs_end = plan.bytes();
  const size_t erased_at = is_put ? 0 : plan.Take(chunk);
  const size_t keep_at = plan.Take(chunk);
  const size_t failed_at = plan.Take(chunk * sizeof(uint32_t));
  const bool small = chunk <= kSmallDedupeOps;
  SortPlan sort;
  if (!small) GPKV_RETURN_IF_ERROR(PlanSort(plan, chunk, /*with_leaders=*/false, &sort));
  const bool keys_staged = keys_kind == MemoryKind::kPageable;
  const bool values_staged = values_kind == MemoryKind::kPageable;
  const bool erased_staged = erased_kind == MemoryKind::kPageable;
  // A small batch of pageable arrays: the kernels read the keys and values
  // from, and write the erased flags to, the pinned staging itself.
  const bool zero_copy = chunking.chunks == 1 && count <= options_.host_zero_copy_ops &&
                         keys_staged && (!is_put || values_staged) &&
                         (erased == nullptr || erased_staged);
  // A small batch of pinned or registered arrays: the kernels use them in
  // place, over the link.
  const bool in_place =
      chunking.chunks == 1 && count <= options_.host_zero_copy_ops &&
      keys_kind == MemoryKind::kPinned && Aligned8(keys) && kinds.in_place[0] &&
      (!is_put || (values_kind == MemoryKind::kPinned && Aligned8(values) && kinds.in_place[1])) &&
      (erased == nullptr || (erased_kind == MemoryKind::kPinned && kinds.in_place[1]));
  // Write batches of the table run one at a time. A one-chunk batch takes
  // the lock only for its kernels: its copy in and duplicate pass (which read
  // no slot) overlap the batch before it. A larger one takes it now.
  const bool lock_late = chunking.chunks == 1;
  // A small one-chunk batch: its duplicate pass zeroes the counters and its
  // write kernel hands them to the host, no memset before and no copy after.
  const bool counters_by_kernels = small && chunking.chunks == 1;
  std::unique_lock<std::mutex> write_lock(write_mutex_, std::defer_lock);
  if (!lock_late) write_lock.lock();
  std::vector<StagingLane*> lanes;
  GPKV_RETURN_IF_ERROR(ws.ReserveChunkCounters(chunking.chunks));
  // The small duplicate pass zeroes its chunk's counters itself.
  if (!small) {
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(ws.device_chunk_counters(), 0,
                                              chunking.chunks * sizeof(BatchCounters), ws.stream()),
                              Where() + ": cudaMemsetAsync of the chunk counters");
  }
  std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
  if (!lock_late) GPKV_RETURN_IF_ERROR(BeginWrite(ws));
  GPKV_RETURN_IF_ERROR(ReserveLanes(ws, chunking, plan.bytes(),
                                    keys_staged || values_staged ? inputs_end : 0,
                                    erased_staged ? chunk : 0, &lanes));

  std::optional<util::CopyPool::Session> copying;  // as in PipelinedGet
  if ((keys_staged || values_staged || erased_staged) && !zero_copy) {
    copying.emplace(util::CopyPool::Shared());
  }
  std::vector<size_t> held(chunking.lanes, kNoChunk);
  // Waits for lane l's chunk (unless `done`: its stream was waited for) and
  // copies its staged answers out.
  auto finish = [&](size_t l, bool done = false) -> Status {
    const size_t c = held[l];
    if (c == kNoChunk) return Status::OK();
    held[l] = kNoChunk;
    if (!done) GPKV_RETURN_IF_ERROR(lanes[l]->WaitDone(is_put ? "put chunk" : "erase chunk"));
    if (erased_staged) {
      CopyHost(erased + chunking.Begin(c), lanes[l]->host_out(), chunking.Size(c, count));
    }
    return Status::OK();
  };

  for (size_t c = 0; c < chunking.chunks; ++c) {
    const size_t l = c % chunking.lanes;
    StagingLane& lane = *lanes[l];
    if (keys_staged || values_staged || erased_staged) GPKV_RETURN_IF_ERROR(finish(l));
    const size_t begin = chunking.Begin(c), n = chunking.Size(c, count);
    const cudaStream_t stream = lane.stream();
    uint8_t* arena = lane.arena();
    const uint8_t* chunk_keys = keys + begin * key_bytes;
    const uint8_t* chunk_values = is_put ? values + begin * value_bytes : nullptr;
    if (keys_staged) CopyHost(lane.host_in() + keys_at, chunk_keys, n * key_bytes);
    if (values_staged) CopyHost(lane.host_in() + values_at, chunk_values, n * value_bytes);
    if (zero_copy) {
      // The kernels read the staging in place.
    } else if (keys_staged && values_staged) {
      GPKV_RETURN_IF_ERROR(CopyAsync(arena, lane.host_in(), values_at + n * value_bytes, stream,
                                     "put keys and values"));
    } else {
      if (keys_staged) {
        GPKV_RETURN_IF_ERROR(
            CopyAsync(arena + keys_at, lane.host_in() + keys_at, n * key_bytes, stream, "keys"));
      }
      if (values_staged) {
        GPKV_RETURN_IF_ERROR(CopyAsync(arena + values_at, lane.host_in() + values_at,
                                       n * value_bytes, stream, "put values"));
      }
    }
    uint8_t* const inputs = zero_copy ? lane.host_in() : arena;
    const uint8_t* device_keys = chunk_keys;
    if (keys_staged) {
      device_keys = inputs + keys_at;
    } else if ((keys_kind == MemoryKind::kPinned && !in_place) || !Aligned8(chunk_keys)) {
      GPKV_RETURN_IF_ERROR(CopyAsync(arena + keys_at, chunk_keys, n * key_bytes, stream, "keys"));
      device_keys = arena + keys_at;
    }
    const uint8_t* device_values = chunk_values;
    if (values_staged) {
      device_values = inputs + values_at;
    } else if (values_kind == MemoryKind::kPinned && !in_place) {
      GPKV_RETURN_IF_ERROR(
          CopyAsync(arena + values_at, chunk_values, n * value_bytes, stream, "put values"));
      device_values = arena + values_at;
    }
    // Duplicates within the chunk; the chunks before it ran before it.
    uint8_t* keep = arena + keep_at;
    const uint32_t* op_index = nullptr;
    BatchCounters* counters = ws.device_chunk_counters() + c;
    if (small) {
      GPKV_RETURN_IF_ERROR(
          LaunchMarkSurvivorsSmall(device_keys, n, key_size(), !is_put, keep, counters, stream));
    } else {
      DedupeScratch scratch = SortScratchAt(arena, sort);
      GPKV_RETURN_IF_ERROR(
          LaunchMarkSurvivors(view_, device_keys, n, scratch, !is_put, keep, stream));
      op_index = scratch.indices_out;
    }
    if (lock_late) {
      // Lock order: write_mutex_ before view_mutex_. The duplicate pass
      // depends on the keys and the hash seed only, not on the levels a
      // resize may change meanwhile. Lane 0 runs on the workspace's stream.
      view_lock.unlock();
      write_lock.lock();
      view_lock.lock();
      GPKV_RETURN_IF_ERROR(BeginWrite(ws));
    }
    if (c > 0) {
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaStreamWaitEvent(stream, lanes[(c - 1) % chunking.lanes]->kernels_done(), 0),
          Where() + ": cudaStreamWaitEvent on the previous chunk");
    }
    uint8_t* device_erased = nullptr;
    const CountersToHost to_host =
        counters_by_kernels ? ws.chunk_counters_to_host() : CountersToHost();
    if (is_put) {
      GPKV_RETURN_IF_ERROR(LaunchPut(view_, device_keys, device_values, keep, op_index, n,
                                     reinterpret_cast<uint32_t*>(arena + failed_at), counters,
                                     stream, to_host));
    } else {
      device_erased = erased == nullptr                                ? nullptr
                      : erased_kind == MemoryKind::kDevice || in_place ? erased + begin
                      : zero_copy                                      ? lane.host_out()
                                                                       : arena + erased_at;
      GPKV_RETURN_IF_ERROR(LaunchErase(view_, device_keys, keep, op_index, device_erased, n,
                                       counters, stream, to_host));
    }
    if (chunking.chunks > 1) {
      GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(lane.kernels_done(), stream),
                                Where() + ": cudaEventRecord after a chunk's kernels");
    }
    if (erased_kind == MemoryKind::kPinned && !in_place) {
      GPKV_RETURN_IF_ERROR(CopyAsync(erased + begin, device_erased, n, stream, "erased flags"));
    } else if (erased_staged && !zero_copy) {
      GPKV_RETURN_IF_ERROR(CopyAsync(lane.host_out(), device_erased, n, stream, "erased flags"));
    }
    // Lane 0's last chunk is waited for with the workspace's stream (finish
    // with done): no event for it. Every other chunk's may be waited on.
    if (l != 0 || c + chunking.lanes < chunking.chunks) {
      GPKV_RETURN_IF_ERROR(lane.RecordDone());
    }
    held[l] = c;
  }
  // The batch ends on the workspace's stream after its last chunk's kernels
  // (which ran after all the others).
  if (chunking.chunks > 1) {
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaStreamWaitEvent(ws.stream(),
                            lanes[(chunking.chunks - 1) % chunking.lanes]->kernels_done(), 0),
        Where() + ": cudaStreamWaitEvent on the last chunk");
  }
  GPKV_RETURN_IF_ERROR(EndWrite(ws));
  if (!counters_by_kernels) {
    GPKV_RETURN_IF_ERROR(CopyAsync(ws.host_chunk_counters(), ws.device_chunk_counters(),
                                   chunking.chunks * sizeof(BatchCounters), ws.stream(),
                                   "the chunk counters"));
  }
  GPKV_RETURN_IF_ERROR(ws.Wait(is_put ? "pipelined put batch" : "pipelined erase batch"));
  // Lane 0 runs on the workspace's stream, which ws.Wait waited for.
  for (size_t l = 0; l < chunking.lanes; ++l) GPKV_RETURN_IF_ERROR(finish(l, l == 0));
  uint64_t inserted = 0, erased_keys = 0, failed = 0;
  for (size_t c = 0; c < chunking.chunks; ++c) {
    inserted += ws.host_chunk_counters()[c].inserted;
    erased_keys += ws.host_chunk_counters()[c].erased;
    failed += ws.host_chunk_counters()[c].failed;
  }
  live_keys_ += inserted;
  live_keys_ -= erased_keys;
  view_lock.unlock();
  if (failed == 0) return Status::OK();
  // Some put found no room: its key is absent now, and so are exactly the
  // keys all of whose puts failed (a put of a present key updates it). The
  // whole batch again through the unchunked path, which kicks and resizes,
  // places them with their last values; the other keys get the values they
  // already hold.
  for (size_t done = 0; done < count; done += kMaxChunkOps) {
    const size_t n = std::min(count - done, kMaxChunkOps);
    GPKV_RETURN_IF_ERROR(PutChunk(ws, keys + done * key_bytes, values + done * value_bytes, n,
                                  /*wait=*/true));
  }
  return Status::OK();
}

}  // namespace gpkv::gphash::gpu
