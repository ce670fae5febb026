#include "tables/registry.h"

#include <cstddef>

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

namespace {

// The names of an enum's values, in one table per enum.
template <typename Enum>
struct EnumName {
  Enum value;
  const char* name;
};
constexpr EnumName<TableKind> kKindNames[] = {{TableKind::kHash, "hash"},
                                              {TableKind::kOrdered, "ordered"}};
constexpr EnumName<Durability> kDurabilityNames[] = {{Durability::kPersistent, "persistent"},
                                                     {Durability::kVolatile, "volatile"}};

// The name of `value`, or nullptr when it is none of the table's.
template <typename Enum, size_t N>
const char* NameIn(const EnumName<Enum> (&names)[N], Enum value) {
  for (const EnumName<Enum>& name : names) {
    if (name.value == value) return name.name;
  }
  return nullptr;
}

}  // namespace

const char* KindName(TableKind kind) {
  const char* name = NameIn(kKindNames, kind);
  return name != nullptr ? name : "unknown";
}

const char* DurabilityName(Durability durability) {
  const char* name = NameIn(kDurabilityNames, durability);
  return name != nullptr ? name : "unknown";
}

Result<const TableFamily*> FamilyOf(const std::string& where, const format::CatalogEntry& entry) {
  const auto kind = static_cast<TableKind>(entry.kind);
  const auto durability = static_cast<Durability>(entry.durability);
  if (NameIn(kKindNames, kind) == nullptr) {
    return Status::Corruption(where + ": kind " + std::to_string(entry.kind) +
                              " is not a table kind");
  }
  if (NameIn(kDurabilityNames, durability) == nullptr) {
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
