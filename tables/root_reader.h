// What the root readers of the persistent families share: the fields every
// table root carries (RootIdentity) and the first checks of a root, before
// any family's own fields are read (RootReader): the root lies in the heap,
// 4 KiB aligned; its magic word, its checksum and its key size are valid.
// A family's reader (tables/<family>/reader.*) derives from RootReader and
// goes on with its own fields, so every family rejects a foreign or torn
// root with the same words.
//
// Who may call: the families' readers (tables/<family>/reader.*), tests.
// Thread safety: a RootReader reads one root on one thread; a RootIdentity
// is a value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "format/checksum.h"
#include "format/pool_layout.h"
#include "gpkv/status.h"
#include "pm/pool.h"

namespace gpkv::tables {

// "0x3a000"
std::string Hex(uint64_t value);

// The fields of a validated root that every family's view holds.
struct RootIdentity {
  std::string table_name;
  uint64_t root_offset = 0;
  uint64_t table_id = 0;
  uint32_t key_size = 0;
  uint32_t value_size = 0;

  // "table 'users'"
  std::string TableRegion() const { return "table '" + table_name + "'"; }
};

class RootReader {
 public:
  RootReader(const pm::Pool& pool, const std::string& table_name, uint64_t root_offset,
             bool require_allocated)
      : pool_(pool),
        table_(table_name),
        root_offset_(root_offset),
        require_allocated_(require_allocated) {}

 protected:
  // Corruption naming the pool, the table's root and the offset `field`
  // bytes into it.
  Status Bad(uint64_t field, const std::string& why) const;

  // Copies the root (its first sizeof(Root) of `root_bytes` bytes) to *root
  // once the root lies in the heap, 4 KiB aligned.
  template <typename Root>
  Status CopyRoot(uint64_t root_bytes, Root* root) const {
    GPKV_RETURN_IF_ERROR(pool_.CheckRange(root_offset_, root_bytes, "table '" + table_ + "' root"));
    if (root_offset_ % format::kExtentAlignment != 0) return Bad(0, "root is not 4 KiB aligned");
    std::memcpy(root, pool_.At<uint8_t>(root_offset_), sizeof(Root));
    return Status::OK();
  }

  // The checks a root's fixed part starts with: its magic word is `magic`
  // (else it is "not `a_kind` root"), its checksum covers the bytes before
  // the checksum field, its key size (at byte 16) is one of the format's.
  template <typename Root>
  Status CheckMagicChecksumAndKeySize(const Root& root, uint64_t magic, const char* a_kind) const {
    if (root.magic != magic) {
      return Bad(0, "bad magic " + Hex(root.magic) + " (not " + a_kind + " root)");
    }
    const uint64_t checksum = format::Checksum64(&root, offsetof(Root, checksum));
    if (checksum != root.checksum) {
      return Bad(offsetof(Root, checksum), "checksum mismatch (stored " + Hex(root.checksum) +
                                               ", computed " + Hex(checksum) + ")");
    }
    if (!format::IsValidKeySize(root.key_size)) {
      return Bad(16, "key size " + std::to_string(root.key_size) + " is not 8, 16 or 32");
    }
    return Status::OK();
  }

  // The identity fields of a view, from the root.
  template <typename Root>
  void FillIdentity(const Root& root, RootIdentity* view) const {
    view->table_name = table_;
    view->root_offset = root_offset_;
    view->table_id = root.table_id;
    view->key_size = root.key_size;
    view->value_size = root.value_size;
  }

  const pm::Pool& pool_;
  const std::string table_;
  const uint64_t root_offset_;
  const bool require_allocated_;
};

}  // namespace gpkv::tables
