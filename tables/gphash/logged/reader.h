// Bounds-checked reading of a logged hash table's bytes: the one place that
// decides whether a root, its active checkpoint, its image and its log can be
// trusted. Shared by open, verify, repair and the extent sweep, so all of
// them accept and reject the same bytes.
//
// Who may call: tables/gphash/ and tests.
// Thread safety: plain functions over a const pool; a LoggedView is a value.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "gpkv/status.h"
#include "pm/pool.h"
#include "tables/gphash/logged/layout.h"
#include "tables/log/log.h"
#include "tables/root_reader.h"

namespace gpkv::gphash::logged {

// Whether the root at root_offset (inside the heap) starts with the logged
// mode's magic word (or the one-half format's, which ReadLoggedRoot
// refuses): which mode's functions a table's root goes to.
bool IsLoggedRoot(const pm::Pool& pool, uint64_t root_offset);

// A validated copy of a root and its active checkpoint. The root, the log and
// the image lie inside the heap, 4 KiB aligned, and do not overlap.
struct LoggedView : tables::RootIdentity {
  uint32_t log2_batch = 0;
  uint32_t log_batches = 0;
  uint64_t log_offset = 0;
  uint64_t log_capacity = 0;
  uint64_t expected_keys = 0;
  uint64_t active_word = 0;
  Checkpoint checkpoint{};  // copy of the active checkpoint
  log::Place log_place;     // two halves, the root's two log words
  // The published records (log::FindSegments of the checkpoint's half and
  // epoch): the checkpoint's half, then the other half's records of the
  // next epoch when a checkpoint was in flight.
  log::Segments log_segments;

  uint64_t batch_entries() const { return uint64_t{1} << log2_batch; }
  // "table 'users' image"
  std::string ImageRegion() const { return TableRegion() + " image"; }
  // "table 'users' log"
  std::string LogRegion() const { return TableRegion() + " log"; }
};

// Reads and validates the root at root_offset (magic, checksum, sizes, log
// extent) and its active checkpoint (checksum, generation, log half, image
// range), each range allocated in the extent table unless
// !require_allocated. Corruption names the table and the offset; a root of
// the one-half log format (kOneHalfRootMagic) is Unsupported, naming it.
Result<LoggedView> ReadLoggedRoot(const pm::Pool& pool, const std::string& table_name,
                                  uint64_t root_offset, bool require_allocated);

// Checks the active checkpoint's image: its header (magic, checksum, fields
// agreeing with the checkpoint), its data checksum (summed on `threads`
// threads) and its keys ascending and unique. Corruption names the image and
// the offset. OK when the checkpoint has no image.
Status CheckImage(const pm::Pool& pool, const LoggedView& view, int threads = 1);

// The image's arrays in the pool (null when the checkpoint has no image).
struct ImageArrays {
  const uint8_t* keys = nullptr;
  const uint8_t* values = nullptr;
  uint64_t entries = 0;
};
ImageArrays ImageOf(const pm::Pool& pool, const LoggedView& view);

}  // namespace gpkv::gphash::logged
