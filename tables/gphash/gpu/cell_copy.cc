#include "tables/gphash/gpu/cell_copy.h"

#include <cstring>

namespace gpkv::gphash::gpu {
namespace {

// Below this many cells a batch is copied by the calling thread alone.
constexpr size_t kParallelCells = 4096;

}  // namespace

void WriteCells(pm::Pool& pool, const uint64_t* cells, const uint8_t* values, size_t count,
                uint32_t value_size, uint32_t cell_size) {
  uint8_t* const base = pool.base();
#pragma omp parallel for schedule(static) if (count >= kParallelCells)
  for (size_t i = 0; i < count; ++i) {
    uint8_t* cell = base + cells[i];
    std::memcpy(cell, values + i * value_size, value_size);
    std::memset(cell + value_size, 0, cell_size - value_size);
    pool.Persist(cell, cell_size);
  }
}

void ReadCells(const pm::Pool& pool, const uint64_t* words, const uint8_t* found, uint8_t* values,
               size_t count, uint32_t value_size, uint32_t cell_size) {
  const uint8_t* const base = pool.base();
  const uint64_t max_cell = pool.size() - cell_size;
#pragma omp parallel for schedule(static) if (count >= kParallelCells)
  for (size_t i = 0; i < count; ++i) {
    uint8_t* value = values + i * value_size;
    if (found[i] != 0 && words[i] <= max_cell) {
      std::memcpy(value, base + words[i], value_size);
    } else {
      std::memset(value, 0, value_size);
    }
  }
}

}  // namespace gpkv::gphash::gpu
