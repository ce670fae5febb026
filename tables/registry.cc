#include "tables/registry.h"

#include "tables/btree/family.h"
#include "tables/gphash/family.h"
#include "tables/lsm/family.h"
#include "tables/slab_hash/family.h"

namespace gpkv::tables {

const std::vector<const TableFamily*>& Families() {
  // One line per family.
  static const std::vector<const TableFamily*> families = {
      &gphash::Family(),
      &slab_hash::Family(),
      &lsm::Family(),
      &btree::Family(),
  };
  return families;
}

const TableFamily* FindFamily(TableKind kind, Durability durability) {
  for (const TableFamily* family : Families()) {
    if (family->kind() == kind && family->durability() == durability) return family;
  }
  return nullptr;
}

const char* KindName(TableKind kind) {
  switch (kind) {
    case TableKind::kHash:
      return "hash";
    case TableKind::kOrdered:
      return "ordered";
  }
  return "unknown";
}

const char* DurabilityName(Durability durability) {
  switch (durability) {
    case Durability::kPersistent:
      return "persistent";
    case Durability::kVolatile:
      return "volatile";
  }
  return "unknown";
}

Result<const TableFamily*> FamilyOf(const std::string& where, const format::CatalogEntry& entry) {
  const auto kind = static_cast<TableKind>(entry.kind);
  const auto durability = static_cast<Durability>(entry.durability);
  if (kind != TableKind::kHash && kind != TableKind::kOrdered) {
    return Status::Corruption(where + ": kind " + std::to_string(entry.kind) +
                              " is not a table kind");
  }
  if (durability != Durability::kPersistent && durability != Durability::kVolatile) {
    return Status::Corruption(where + ": durability " + std::to_string(entry.durability) +
                              " is not valid");
  }
  const TableFamily* family = FindFamily(kind, durability);
  if (family == nullptr) {
    return Status::Unsupported(where + ": " + DurabilityName(durability) + " " + KindName(kind) +
                               " tables are not built into this gpkv yet");
  }
  return family;
}

}  // namespace gpkv::tables
