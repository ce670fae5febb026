// The registry of table families: (kind, durability) -> family. The engine,
// recovery and the tools find a family here and nowhere else; this is the one
// place that names the families.
//
// Thread safety: the registry is immutable; call from any thread.
#pragma once

#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "tables/family.h"

namespace gpkv::tables {

// The family that serves (kind, durability), or null when none is built.
const TableFamily* FindFamily(TableKind kind, Durability durability);

// Every registered family, in registration order.
const std::vector<const TableFamily*>& Families();

// The family of a catalog entry. Unsupported (naming `where`) when its kind
// and durability are valid but no family of this build serves them;
// Corruption when kind or durability is not a valid value.
Result<const TableFamily*> FamilyOf(const std::string& where, const format::CatalogEntry& entry);

// "hash", "ordered" / "persistent", "volatile".
const char* KindName(TableKind kind);
const char* DurabilityName(Durability durability);

}  // namespace gpkv::tables
