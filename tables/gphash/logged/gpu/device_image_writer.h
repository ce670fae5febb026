// The CUDA backend's checkpoint image writer (logged::ImageWriter): the
// index's pairs are gathered into device memory in one pass
// (tables::DeviceIndexScan), sorted there by a CUB radix sort in the
// image's key order, checksummed there, and copied into the image's extent
// in the pool in bulk; only the image's header and tail are written from the
// host. The bytes are those of the host version (MakeHostImageWriter).
//
// The writer falls back to the host version for a checkpoint whose pairs and
// sort do not fit device memory (its scan then copies the pairs to the host
// and sorts them on the CPU), and for an index without a device scan.
//
// Who may call: tables/gphash/ (the family's open on CUDA). Built with the
// CUDA backend only; no CUDA headers here.
// Thread safety: as ImageWriter (Scan, then Write on any one thread).
#pragma once

#include <cstdint>
#include <memory>

#include "pm/pool.h"
#include "tables/gphash/logged/image_writer.h"

namespace gpkv::gphash::logged::gpu {

// A device image writer for the table `table_id` of key_size / value_size
// in `pool`; `threads` CPU threads for its host fallback. It works on the
// index's device, with a stream of its own. REQUIRES: the writer is
// destroyed before the pool.
std::unique_ptr<ImageWriter> MakeDeviceImageWriter(pm::Pool& pool, uint64_t table_id,
                                                   uint32_t key_size, uint32_t value_size,
                                                   int threads);

}  // namespace gpkv::gphash::logged::gpu
