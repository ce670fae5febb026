// The bytes of a logged hash table that the backends and the image's worker
// must agree on: the tests that compare pools read them here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "tables/gphash/logged/layout.h"
#include "tables/log/slots.h"
#include "test_util.h"

namespace gpkv::testutil {

// The bytes of the one table of the pool at `path` (closed): its root, its
// log (both halves) and its active checkpoint's image.
inline std::vector<uint8_t> LoggedTableBytes(const std::string& path) {
  namespace logged = gphash::logged;
  auto a = ReadBytes<format::Superblock>(path, format::kSuperblockOffset[0]);
  auto b = ReadBytes<format::Superblock>(path, format::kSuperblockOffset[1]);
  const format::Superblock& current = a.generation > b.generation ? a : b;
  auto entry =
      ReadBytes<format::CatalogEntry>(path, current.catalog_offset + sizeof(format::CatalogHeader));
  auto root = ReadBytes<logged::LoggedRoot>(path, entry.root_offset);
  const logged::Checkpoint& checkpoint = root.checkpoints[log::ActiveIndex(root.active_checkpoint)];
  std::vector<uint8_t> bytes;
  auto append = [&](uint64_t offset, uint64_t length) {
    for (uint64_t at = 0; at < length; ++at) bytes.push_back(ReadBytes<uint8_t>(path, offset + at));
  };
  append(entry.root_offset, logged::kLoggedRootSize);
  append(root.log_offset, logged::LogExtentBytes(root.log_capacity));
  append(checkpoint.image_offset,
         logged::ImageBytes(checkpoint.image_entries, root.key_size, root.value_size));
  return bytes;
}

}  // namespace gpkv::testutil
