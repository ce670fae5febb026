// The host half of value-cell batches on the GPU backend (cells.cu):
// copying values into and out of their cells in the pool mapping, for
// batches whose values are in host memory (and for every batch in staged
// mode, where the GPU cannot map the pool). Plain C++ (no CUDA headers),
// parallel with OpenMP: one host thread copies ~3 GB/s, the link's DMA of a
// pageable buffer not much more.
//
// Who may call: tables/gphash/gpu/cells.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pm/pool.h"

namespace gpkv::gphash::gpu {

// Writes value i (value_size bytes of `values`) into the cell at pool offset
// cells[i], zero padded to cell_size, each cell made durable with
// pool.Persist (as cpu::CpuBackend writes a cell). REQUIRES: the cells are free
// (no slot references them).
void WriteCells(pm::Pool& pool, const uint64_t* cells, const uint8_t* values, size_t count,
                uint32_t value_size, uint32_t cell_size);

// Copies the cell at pool offset words[i] into value i of `values` where
// found[i] is set (zeros elsewhere, and for a word that is no offset of a
// whole cell in the pool).
void ReadCells(const pm::Pool& pool, const uint64_t* words, const uint8_t* found, uint8_t* values,
               size_t count, uint32_t value_size, uint32_t cell_size);

}  // namespace gpkv::gphash::gpu
