// logged::ImageWriter: how a checkpoint's image of the index is made, in two
// steps so that the second runs behind the batches. Scan takes the index's
// pairs as they stand (on the writer's thread, the writer mutex held: the
// image must hold exactly the batches logged so far) and reserves the
// image's extent; Write sorts the pairs and writes and persists the image
// (on the core's worker thread, while the index takes the next batches).
// The host version scans through gpkv::Table::Scan and sorts on the CPU; the
// CUDA backend's device version (gpu/device_image_writer.h: the scan into
// device memory and a CUB sort on the GPU) implements the same two steps and
// writes the same bytes.
//
// Who may call: logged::Core and tests.
// Thread safety: one checkpoint at a time: Scan, then Write (on any one
// thread), then the next Scan.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "gpkv/status.h"
#include "gpkv/table.h"
#include "pm/pool.h"

namespace gpkv::gphash::logged {

// Where a checkpoint's image goes: its extent (0: no pairs, no image) and
// its pairs.
struct ImagePlace {
  uint64_t offset = 0;
  uint64_t entries = 0;
};

class ImageWriter {
 public:
  virtual ~ImageWriter() = default;
  // Takes the index's pairs and reserves the extent of the image of the
  // checkpoint of generation `generation` (root.h ReserveImage). PoolFull
  // when the pool cannot hold it; nothing is then reserved.
  virtual Result<ImagePlace> Scan(Table& index, uint64_t generation) = 0;
  // Writes and persists the image of the pairs Scan took into the extent it
  // reserved (nothing when it reserved none). Touches neither the index nor
  // any other pool bytes.
  virtual Status Write() = 0;
};

// The host version: the pairs copied out of the index, sorted in key order
// on `threads` CPU threads (key_order.h), the image's checksum summed on as
// many.
std::unique_ptr<ImageWriter> MakeHostImageWriter(pm::Pool& pool, uint64_t table_id,
                                                 uint32_t key_size, uint32_t value_size,
                                                 int threads);

// Makes the image writer of a table (its id, key and value sizes, CPU
// threads), once the core has read them from its root.
using ImageWriterFactory = std::function<std::unique_ptr<ImageWriter>(
    uint64_t table_id, uint32_t key_size, uint32_t value_size, int threads)>;

// The whole image at once: Scan, then Write on this thread.
Result<ImagePlace> WriteIndexImage(ImageWriter& writer, Table& index, uint64_t generation);

}  // namespace gpkv::gphash::logged
