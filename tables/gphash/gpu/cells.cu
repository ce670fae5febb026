// GpuBackend::Impl's batches on value-cell tables (values over 8 bytes,
// tables/gphash/layout.h): a value lives in a cell of the table's value
// chunks and the slot's value word holds the cell's pool offset. The batch
// kernels (kernels.cu) move value words only (word_size() is 8
// here); this file wraps them with the cells.
//
// Put:   take free cells from the heap (gphash::ValueHeap, shared with the CPU backend),
//        write the values into them and make them visible before any slot
//        can reference them (values in device memory: a kernel through the
//        pool mapping ending in __threadfence_system(); in host memory, or in
//        staged mode: host threads, with pool.Persist; tables/gphash/gpu/cell_copy.h); read
//        the keys' words (pre-read); put the cells' offsets as the values;
//        read the words again (post-read). The operation whose cell its key
//        now holds won: the word the pre-read found for that key, if any, is
//        retired; the cells of the other operations (earlier puts of a key in
//        the batch, which the kernels skip) were never referenced and go
//        back to the heap at once.
// Erase: pre-read, erase; the word of each key erased is retired.
// Get:   read the words, then copy the cell of each word found into the
//        output (device output: a kernel through the mapping; host output or
//        staged mode: host threads).
//
// cells_mutex_ makes pre-read, write and post-read one unit among write
// batches, so the words read are the ones the write replaced. Gets run beside
// them: a get is announced in epoch_ for its whole call, and a retired cell
// returns to the heap only once every get that was running when it was
// retired has ended (util/epoch.h), so no get copies a cell being refilled.
//
// Crash consistency comes from the order of the stores, not from this
// bookkeeping: a cell is written and visible before the store that publishes
// its offset, and which cells are free is volatile (recomputed from the slots
// at open: LoadCellHeap). A batch that fails part-way leaves its cells out of
// the heap until the table is opened again.
//
// Cost: a put runs two get batches beside its put batch, an erase one; the
// kernels could instead report the words they replace (not built).
#include <algorithm>
#include <cstring>
#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/pointer_kind.h"
#include "tables/gphash/gpu/backend_impl.h"
#include "tables/gphash/gpu/cell_copy.h"
#include "tables/gphash/gpu/kernel_common.cuh"
#include "tables/gphash/reader.h"
#include "tables/gphash/slot_scan.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::ArenaPlan;
using gpkv::gpu::IsDeviceMemory;

namespace {

// Bytes of 8-byte word `w` of a value of `value_size` bytes (the last word
// of a value that is not a multiple of 8 is partial; the cell pads it with
// zeros).
__device__ __forceinline__ uint32_t BytesOfWord(uint32_t value_size, uint32_t w) {
  return min(8u, value_size - 8 * w);
}

// One thread per (operation, cell word): cell word w of cells[op] = word w of
// the value, zero padded; then ordered before the thread's later stores and
// the kernels after this one (__threadfence_system()).
__global__ void FillCellsKernel(uint8_t* pool, const uint64_t* cells, const uint8_t* values,
                                uint32_t value_size, uint32_t cell_words, uint64_t count) {
  const uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count * cell_words) return;
  const uint64_t op = i / cell_words;
  const uint32_t w = static_cast<uint32_t>(i % cell_words);
  const uint8_t* value = values + op * value_size + 8 * w;
  uint64_t word = 0;
  for (uint32_t b = 0; b < BytesOfWord(value_size, w); ++b) word |= uint64_t{value[b]} << (8 * b);
  warp::StoreWord(pool + cells[op] + 8 * w, word);
  __threadfence_system();
}

// One thread per (operation, cell word): word w of the value of a found
// operation from its cell, zeros for the others. A word past max_cell (no
// cell of a verified table is) reads as zeros rather than outside the
// mapping.
__global__ void GatherCellsKernel(const uint8_t* pool, uint64_t max_cell, const uint64_t* words,
                                  const uint8_t* found, uint8_t* values, uint32_t value_size,
                                  uint32_t cell_words, uint64_t count) {
  const uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count * cell_words) return;
  const uint64_t op = i / cell_words;
  const uint32_t w = static_cast<uint32_t>(i % cell_words);
  uint64_t word = 0;
  if (found[op] != 0 && words[op] <= max_cell) word = warp::LoadWord(pool + words[op] + 8 * w);
  uint8_t* value = values + op * value_size + 8 * w;
  for (uint32_t b = 0; b < BytesOfWord(value_size, w); ++b) {
    value[b] = static_cast<uint8_t>(word >> (8 * b));
  }
}

Status CopyOut(void* target, const void* source, size_t bytes, cudaStream_t stream,
               const std::string& what) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(target, source, bytes, cudaMemcpyDefault, stream),
                            "cudaMemcpyAsync of " + what);
  return Status::OK();
}

// Where a round keeps host copies of value words and flags: `count` words
// and `count` flags per copy, in the workspace's pinned host scratch.
struct HostWords {
  uint64_t* words;
  uint8_t* flags;
};

Status ReserveHostWords(Workspace& ws, size_t count, int copies, HostWords* out) {
  const size_t words_bytes = count * sizeof(uint64_t);
  GPKV_RETURN_IF_ERROR(ws.ReserveHost(copies * (words_bytes + count)));
  for (int c = 0; c < copies; ++c) {
    uint8_t* at = ws.host_arena() + c * (words_bytes + count);
    out[c] = {reinterpret_cast<uint64_t*>(at), at + words_bytes};
  }
  return Status::OK();
}

// Enqueues the copy of device words and flags to `out` (no wait).
Status FetchWords(Workspace& ws, const uint8_t* device_words, const uint8_t* device_flags,
                  size_t count, const HostWords& out) {
  GPKV_RETURN_IF_ERROR(CopyOut(out.words, device_words, count * sizeof(uint64_t), ws.stream(),
                               "value words to the host"));
  return CopyOut(out.flags, device_flags, count, ws.stream(), "flags to the host");
}

}  // namespace

Status GpuBackend::Impl::LoadCellHeap() {
  auto view = gphash::ReadGphash(pool_, table_name_, snapshot_.root_offset);
  if (!view.ok()) return view.status();
  // After open-time recovery every VALID slot is a live key: the scan marks
  // the cells they reference and checks that each is a cell of a chunk.
  gphash::SlotScanResult scan = gphash::VerifyGphashSlots(pool_, *view, 0, nullptr);
  if (scan.HasCorruption()) {
    std::string first = Where();
    for (const recovery::Finding& finding : scan.findings) {
      if (finding.severity != recovery::Finding::Severity::kCorruption) continue;
      first = finding.message;
      break;
    }
    return Status::Corruption(first + " (" + std::to_string(scan.corrupt) +
                              " slot(s) cannot be trusted; `gpkv repair` drops them)");
  }
  heap_ = std::make_unique<ValueHeap>(pool_, pool_.At<gphash::GphashRoot>(snapshot_.root_offset),
                                      table_name_);
  heap_->Load(view->chunks, std::move(scan.cells_used));
  return Status::OK();
}

void GpuBackend::Impl::ReclaimCells() {
  const uint64_t bound = epoch_.SafeBound();
  std::vector<uint64_t> reusable;
  size_t kept = 0;
  for (const RetiredCell& retired : retired_cells_) {
    if (retired.epoch < bound) {
      reusable.push_back(retired.cell);
    } else {
      retired_cells_[kept++] = retired;
    }
  }
  retired_cells_.resize(kept);
  if (!reusable.empty()) heap_->Give(reusable.data(), reusable.size());
}

void GpuBackend::Impl::RetireCells(const std::vector<uint64_t>& cells) {
  const uint64_t epoch = epoch_.Current();
  for (uint64_t cell : cells) retired_cells_.push_back({cell, epoch});
  epoch_.Advance();
}

// ---------------------------------------------------------------- writes

Status GpuBackend::Impl::CellWriteRounds(size_t count, cudaStream_t order_after,
                                         const CellRound& round) {
  GPKV_RETURN_IF_ERROR(CheckWritable());
  if (count == 0) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.device), "cudaSetDevice");
  std::lock_guard<std::mutex> cells_lock(cells_mutex_);
  ReclaimCells();
  auto workspace = AcquireWorkspace(nullptr);
  if (!workspace.ok()) return workspace.status();
  Lease lease{this, *workspace, nullptr};
  for (size_t done = 0; done < count; done += kCellChunkOps) {
    GPKV_RETURN_IF_ERROR(round(**workspace, done, std::min(count - done, kCellChunkOps),
                               done == 0 ? order_after : nullptr));
  }
  return Status::OK();
}

Status GpuBackend::Impl::CellPut(const uint8_t* keys, const uint8_t* values, size_t count,
                                 cudaStream_t order_after) {
  return CellWriteRounds(count, order_after,
                         [&](Workspace& ws, size_t done, size_t round, cudaStream_t after) {
                           return CellPutRound(ws, keys + done * key_size(),
                                               values + done * value_size(), round, after);
                         });
}

Status GpuBackend::Impl::CellPutRound(Workspace& ws, const uint8_t* keys, const uint8_t* values,
                                      size_t count, cudaStream_t order_after) {
  if (order_after != nullptr) GPKV_RETURN_IF_ERROR(ws.OrderAfter(order_after));
  ArenaPlan plan;
  const size_t keys_at = plan.Take(count * key_size());
  const size_t cells_at = plan.Take(count * sizeof(uint64_t));
  const size_t old_words_at = plan.Take(count * sizeof(uint64_t));
  const size_t old_found_at = plan.Take(count);
  const size_t new_words_at = plan.Take(count * sizeof(uint64_t));
  const size_t new_found_at = plan.Take(count);
  GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  uint8_t* arena = ws.arena();
  const uint8_t* device_keys = arena + keys_at;
  auto* device_cells = reinterpret_cast<uint64_t*>(arena + cells_at);

  std::vector<uint64_t> cells;
  cells.reserve(count);
  Status taken = heap_->Take(count, &cells);
  if (!taken.ok()) {
    heap_->Give(cells.data(), cells.size());
    return taken;
  }
  GPKV_RETURN_IF_ERROR(CopyOut(arena + keys_at, keys, count * key_size(), ws.stream(),
                               "the batch keys to the device"));
  GPKV_RETURN_IF_ERROR(CopyOut(device_cells, cells.data(), count * sizeof(uint64_t), ws.stream(),
                               "the value cells to the device"));
  GPKV_RETURN_IF_ERROR(ws.Wait("staging a value-cell put"));

  GPKV_RETURN_IF_ERROR(Get(device_keys, arena + old_words_at, arena + old_found_at, count, nullptr,
                           /*wait=*/true));
  GPKV_RETURN_IF_ERROR(FillCells(ws, cells.data(), device_cells, values, count));
  GPKV_RETURN_IF_ERROR(Put(device_keys, arena + cells_at, count, nullptr, /*wait=*/true));
  GPKV_RETURN_IF_ERROR(Get(device_keys, arena + new_words_at, arena + new_found_at, count, nullptr,
                           /*wait=*/true));

  HostWords host[2];
  GPKV_RETURN_IF_ERROR(ReserveHostWords(ws, count, 2, host));
  const HostWords& before = host[0];
  const HostWords& after = host[1];
  GPKV_RETURN_IF_ERROR(FetchWords(ws, arena + old_words_at, arena + old_found_at, count, before));
  GPKV_RETURN_IF_ERROR(FetchWords(ws, arena + new_words_at, arena + new_found_at, count, after));
  GPKV_RETURN_IF_ERROR(ws.Wait("copying value words to the host"));
  std::vector<uint64_t> unused, replaced;
  for (size_t i = 0; i < count; ++i) {
    const bool won = after.flags[i] != 0 && after.words[i] == cells[i];
    if (!won) {
      unused.push_back(cells[i]);
    } else if (before.flags[i] != 0) {
      replaced.push_back(before.words[i]);
    }
  }
  heap_->Give(unused.data(), unused.size());
  RetireCells(replaced);
  return Status::OK();
}

Status GpuBackend::Impl::FillCells(Workspace& ws, const uint64_t* cells,
                                   const uint64_t* device_cells, const uint8_t* values,
                                   size_t count) {
  const uint32_t value_bytes = value_size();
  const uint32_t cell_bytes = snapshot_.cell_size;
  const bool device_values = IsDeviceMemory(values, options_.device);
  if (device_values && !staged_) {
    // Device values: a kernel stores them through the pool mapping.
    const uint32_t cell_words = cell_bytes / 8;
    FillCellsKernel<<<BlocksFor(count * cell_words), kBlockThreads, 0, ws.stream()>>>(
        registration_->device_base(), device_cells, values, value_bytes, cell_words, count);
    GPKV_RETURN_IF_ERROR(CheckLaunch("FillCellsKernel"));
    return ws.Wait("writing value cells");
  }
  // Host values (or a pool the GPU cannot map): the host writes the cells,
  // one copy instead of one over the link and another into the pool.
  std::vector<uint8_t> host_values;
  if (device_values) {
    host_values.resize(count * value_bytes);
    GPKV_RETURN_IF_ERROR(CopyOut(host_values.data(), values, host_values.size(), ws.stream(),
                                 "the batch values to the host"));
    GPKV_RETURN_IF_ERROR(ws.Wait("copying the batch values to the host"));
    values = host_values.data();
  }
  WriteCells(pool_, cells, values, count, value_bytes, cell_bytes);
  return Status::OK();
}

Status GpuBackend::Impl::CellErase(const uint8_t* keys, uint8_t* erased, size_t count,
                                   cudaStream_t order_after) {
  return CellWriteRounds(
      count, order_after, [&](Workspace& ws, size_t done, size_t round, cudaStream_t after) {
        return CellEraseRound(ws, keys + done * key_size(),
                              erased == nullptr ? nullptr : erased + done, round, after);
      });
}

Status GpuBackend::Impl::CellEraseRound(Workspace& ws, const uint8_t* keys, uint8_t* erased,
                                        size_t count, cudaStream_t order_after) {
  if (order_after != nullptr) GPKV_RETURN_IF_ERROR(ws.OrderAfter(order_after));
  ArenaPlan plan;
  const size_t keys_at = plan.Take(count * key_size());
  const size_t old_words_at = plan.Take(count * sizeof(uint64_t));
  const size_t old_found_at = plan.Take(count);
  const size_t erased_at = plan.Take(count);
  GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  uint8_t* arena = ws.arena();
  const uint8_t* device_keys = arena + keys_at;
  GPKV_RETURN_IF_ERROR(CopyOut(arena + keys_at, keys, count * key_size(), ws.stream(),
                               "the batch keys to the device"));
  GPKV_RETURN_IF_ERROR(ws.Wait("staging a value-cell erase"));

  GPKV_RETURN_IF_ERROR(Get(device_keys, arena + old_words_at, arena + old_found_at, count, nullptr,
                           /*wait=*/true));
  GPKV_RETURN_IF_ERROR(Erase(device_keys, arena + erased_at, count, nullptr, /*wait=*/true));

  HostWords host[2];
  GPKV_RETURN_IF_ERROR(ReserveHostWords(ws, count, 2, host));
  const HostWords& before = host[0];
  const uint8_t* erased_flags = host[1].flags;
  GPKV_RETURN_IF_ERROR(FetchWords(ws, arena + old_words_at, arena + old_found_at, count, before));
  GPKV_RETURN_IF_ERROR(CopyOut(host[1].flags, arena + erased_at, count, ws.stream(),
                               "the erased flags to the host"));
  if (erased != nullptr) {
    GPKV_RETURN_IF_ERROR(
        CopyOut(erased, arena + erased_at, count, ws.stream(), "the erased flags"));
  }
  GPKV_RETURN_IF_ERROR(ws.Wait("copying the erased flags"));
  std::vector<uint64_t> replaced;
  for (size_t i = 0; i < count; ++i) {
    if (erased_flags[i] != 0 && before.flags[i] != 0) replaced.push_back(before.words[i]);
  }
  RetireCells(replaced);
  return Status::OK();
}

// ---------------------------------------------------------------- reads

Status GpuBackend::Impl::CellGet(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                                 cudaStream_t order_after) {
  if (count == 0) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.device), "cudaSetDevice");
  // No cell this call reads is reused before it returns.
  EpochGuard epoch_guard(epoch_);
  auto workspace = AcquireWorkspace(nullptr);
  if (!workspace.ok()) return workspace.status();
  Lease lease{this, *workspace, nullptr};
  for (size_t done = 0; done < count; done += kCellChunkOps) {
    const size_t round = std::min(count - done, kCellChunkOps);
    GPKV_RETURN_IF_ERROR(CellGetRound(
        **workspace, keys + done * key_size(), values + done * value_size(),
        found == nullptr ? nullptr : found + done, round, done == 0 ? order_after : nullptr));
  }
  return Status::OK();
}

Status GpuBackend::Impl::CellGetRound(Workspace& ws, const uint8_t* keys, uint8_t* values,
                                      uint8_t* found, size_t count, cudaStream_t order_after) {
  if (order_after != nullptr) GPKV_RETURN_IF_ERROR(ws.OrderAfter(order_after));
  const uint32_t value_bytes = value_size();
  const bool device_values = IsDeviceMemory(values, options_.device);
  ArenaPlan plan;
  const size_t keys_at = plan.Take(count * key_size());
  const size_t words_at = plan.Take(count * sizeof(uint64_t));
  const size_t found_at = plan.Take(count);
  GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  uint8_t* arena = ws.arena();
  const auto* device_words = reinterpret_cast<const uint64_t*>(arena + words_at);
  GPKV_RETURN_IF_ERROR(CopyOut(arena + keys_at, keys, count * key_size(), ws.stream(),
                               "the batch keys to the device"));
  GPKV_RETURN_IF_ERROR(ws.Wait("staging a value-cell get"));
  GPKV_RETURN_IF_ERROR(
      Get(arena + keys_at, arena + words_at, arena + found_at, count, nullptr, /*wait=*/true));

  if (device_values && !staged_) {
    // Device output: a kernel copies the cells through the pool mapping.
    const uint32_t cell_words = snapshot_.cell_size / 8;
    GatherCellsKernel<<<BlocksFor(count * cell_words), kBlockThreads, 0, ws.stream()>>>(
        registration_->device_base(), pool_.size() - snapshot_.cell_size, device_words,
        arena + found_at, values, value_bytes, cell_words, count);
    GPKV_RETURN_IF_ERROR(CheckLaunch("GatherCellsKernel"));
  } else {
    // Host output (or a pool the GPU cannot map): the host copies the cells
    // of the words found, which is all that crosses the link.
    HostWords words;
    GPKV_RETURN_IF_ERROR(ReserveHostWords(ws, count, 1, &words));
    GPKV_RETURN_IF_ERROR(FetchWords(ws, arena + words_at, arena + found_at, count, words));
    GPKV_RETURN_IF_ERROR(ws.Wait("copying value words to the host"));
    std::vector<uint8_t> host_values;
    uint8_t* out = values;
    if (device_values) {
      host_values.resize(count * value_bytes);
      out = host_values.data();
    }
    ReadCells(pool_, words.words, words.flags, out, count, value_bytes, snapshot_.cell_size);
    if (device_values) {
      GPKV_RETURN_IF_ERROR(CopyOut(values, out, host_values.size(), ws.stream(), "the values"));
    }
  }
  if (found != nullptr) {
    GPKV_RETURN_IF_ERROR(CopyOut(found, arena + found_at, count, ws.stream(), "the found flags"));
  }
  return ws.Wait("value-cell get");
}

}  // namespace gpkv::gphash::gpu
