// Link calibration for the GPU benchmark: random 8-byte reads, CAS and stores by GPU
// threads over a registered host mapping of a tmpfs file (what direct mode
// touches) and over device memory (HBM), by the size of the region touched.
// These are the ceilings the table's direct and mirror modes are measured
// against (docs/ARCHITECTURE.md, "GPU backend: mapping modes").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpkv/status.h"

namespace gpkv::bench::gpu {

struct LinkResult {
  uint64_t region_bytes = 0;
  double host_reads_per_s = 0;
  double host_cas_per_s = 0;
  double host_stores_per_s = 0;  // plain 8-byte stores (what mirror mode sends)
  double hbm_reads_per_s = 0;
  double hbm_cas_per_s = 0;
};

// Maps a file of max(region sizes) bytes under `dir`, registers it with CUDA
// and measures each region size (a multiple of 8 bytes); removes the file.
Status CalibrateLink(const std::string& dir, const std::vector<uint64_t>& region_sizes,
                     std::vector<LinkResult>* results);

}  // namespace gpkv::bench::gpu
