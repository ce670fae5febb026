#include "recovery/catalog.h"

#include <cstring>
#include <set>

#include "format/checksum.h"
#include "pm/extent_allocator.h"
#include "tables/registry.h"

namespace gpkv::recovery {

using format::CatalogEntry;
using format::CatalogHeader;

Status CheckCatalogEntry(const pm::Pool& pool, const CatalogEntry& entry, const std::string& where,
                         uint64_t offset) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption(pool.Where(where, offset) + ": " + why);
  };
  size_t name_length = strnlen(entry.name, sizeof(entry.name));
  if (name_length == 0 || name_length > format::kMaxTableNameLength) {
    return bad("table name is empty or not terminated");
  }
  std::string table = "table '" + std::string(entry.name, name_length) + "'";
  auto family = tables::FamilyOf(pool.Where(where, offset) + ": " + table, entry);
  if (!family.ok() && family.status().IsCorruption()) return family.status();
  if (!format::IsValidKeySize(entry.key_size)) {
    return bad(table + " key size " + std::to_string(entry.key_size) + " is not 8, 16 or 32");
  }
  if (!format::IsValidValueSize(entry.value_size)) {
    return bad(table + " value size " + std::to_string(entry.value_size) + " is outside 1..128");
  }
  for (uint8_t byte : entry.reserved0) {
    if (byte != 0) return bad(table + " reserved bytes are not zero");
  }
  if (entry.durability == static_cast<uint8_t>(Durability::kPersistent)) {
    if (entry.root_offset % format::kExtentAlignment != 0) {
      return bad(table + " root offset is not 4 KiB aligned");
    }
    GPKV_RETURN_IF_ERROR(pool.CheckRange(entry.root_offset, format::kPageSize, table + " root"));
  }
  // A family this build lacks (Unsupported) keeps its entry: its parameters
  // are its own, and its table stays untouched.
  if (family.ok()) {
    TableOptions options;
    options.key_size = entry.key_size;
    options.value_size = entry.value_size;
    GPKV_RETURN_IF_ERROR((*family)->DecodeParams(
        pool.Where(where, offset + offsetof(CatalogEntry, params)) + ": " + table + " parameters",
        entry.params, &options));
  }
  return Status::OK();
}

Result<std::vector<CatalogEntry>> ReadCatalog(const pm::Pool& pool, bool require_allocated) {
  format::Superblock superblock = pool.superblock();
  std::vector<CatalogEntry> entries;
  if (superblock.catalog_offset == 0) return entries;
  GPKV_RETURN_IF_ERROR(
      pool.CheckRange(superblock.catalog_offset, superblock.catalog_size, "catalog"));
  if (require_allocated &&
      !pool.allocator().IsAllocated(superblock.catalog_offset, superblock.catalog_size)) {
    return Status::Corruption(pool.Where("catalog", superblock.catalog_offset) +
                              ": the catalog extent is not allocated in the extent table (a "
                              "damaged superblock or extent table); run gpkv repair");
  }
  if (superblock.catalog_size < sizeof(CatalogHeader)) {
    return Status::Corruption(pool.Where("catalog", superblock.catalog_offset) + ": catalog size " +
                              std::to_string(superblock.catalog_size) + " is too small");
  }
  const uint8_t* bytes = pool.At<uint8_t>(superblock.catalog_offset);
  CatalogHeader header;
  std::memcpy(&header, bytes, sizeof(header));
  if (header.magic != format::kCatalogMagic) {
    return Status::Corruption(pool.Where("catalog", superblock.catalog_offset) + ": bad magic");
  }
  uint64_t capacity = (superblock.catalog_size - sizeof(CatalogHeader)) / sizeof(CatalogEntry);
  if (header.entry_count > capacity) {
    return Status::Corruption(pool.Where("catalog", superblock.catalog_offset + 8) +
                              ": entry count " + std::to_string(header.entry_count) +
                              " exceeds the extent's capacity of " + std::to_string(capacity));
  }
  uint64_t checksum =
      format::Checksum64(bytes, offsetof(CatalogHeader, checksum)) ^
      format::Checksum64(bytes + sizeof(CatalogHeader), header.entry_count * sizeof(CatalogEntry));
  if (checksum != header.checksum) {
    return Status::Corruption(pool.Where("catalog", superblock.catalog_offset + 56) +
                              ": checksum mismatch");
  }
  std::set<std::string> names;
  std::set<uint64_t> ids;
  entries.resize(header.entry_count);
  for (uint64_t i = 0; i < header.entry_count; ++i) {
    uint64_t offset = superblock.catalog_offset + sizeof(CatalogHeader) + i * sizeof(CatalogEntry);
    std::memcpy(&entries[i], pool.At<uint8_t>(offset), sizeof(CatalogEntry));
    std::string where = "catalog entry " + std::to_string(i);
    GPKV_RETURN_IF_ERROR(CheckCatalogEntry(pool, entries[i], where, offset));
    if (!names.insert(entries[i].name).second || !ids.insert(entries[i].table_id).second) {
      return Status::Corruption(pool.Where(where, offset) + ": table '" + entries[i].name +
                                "' appears twice");
    }
    if (entries[i].table_id == 0 || entries[i].table_id >= superblock.next_table_id) {
      return Status::Corruption(pool.Where(where, offset + 64) + ": table id " +
                                std::to_string(entries[i].table_id) + " is not below next id " +
                                std::to_string(superblock.next_table_id));
    }
  }
  return entries;
}

Status PublishCatalog(pm::Pool& pool, const std::vector<CatalogEntry>& entries,
                      uint64_t next_table_id) {
  format::Superblock previous = pool.superblock();
  uint64_t size = format::AlignUp(sizeof(CatalogHeader) + entries.size() * sizeof(CatalogEntry),
                                  format::kPageSize);
  auto offset = pool.allocator().Allocate(size, format::kExtentKindCatalog, 0);
  if (!offset.ok()) return offset.status();
  uint8_t* bytes = pool.At<uint8_t>(*offset);
  CatalogHeader header{};
  header.magic = format::kCatalogMagic;
  header.entry_count = entries.size();
  if (!entries.empty()) {
    std::memcpy(bytes + sizeof(header), entries.data(), entries.size() * sizeof(CatalogEntry));
  }
  std::memcpy(bytes, &header, sizeof(header));
  header.checksum =
      format::Checksum64(bytes, offsetof(CatalogHeader, checksum)) ^
      format::Checksum64(bytes + sizeof(header), entries.size() * sizeof(CatalogEntry));
  std::memcpy(bytes, &header, sizeof(header));
  pool.Persist(bytes, sizeof(header) + entries.size() * sizeof(CatalogEntry));

  format::Superblock next = previous;
  next.catalog_offset = *offset;
  next.catalog_size = size;
  next.next_table_id = next_table_id;
  GPKV_RETURN_IF_ERROR(pool.WriteSuperblock(next));
  // The previous catalog's extent may be free already (a stale superblock
  // under repair) and the new catalog may then sit at its offset.
  if (previous.catalog_offset != 0 && previous.catalog_offset != *offset &&
      pool.allocator().IsAllocated(previous.catalog_offset, previous.catalog_size)) {
    GPKV_RETURN_IF_ERROR(pool.allocator().Free(previous.catalog_offset));
  }
  return pool.Sync();
}

}  // namespace gpkv::recovery
