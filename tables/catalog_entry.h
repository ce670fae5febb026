// What the families share in reading and writing their catalog entries: the
// end of every DecodeParams (the decoded options must pass the family's
// CheckOptions, the reserved bytes must be zero) and the fields of a salvaged
// entry that come from the table's root (TableFamily::Salvage).
//
// Who may call: the families (tables/<family>/family.cc), tests.
// Thread safety: pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "format/pool_layout.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "tables/family.h"
#include "tables/root_reader.h"

namespace gpkv::tables {

// Corruption, message starting with `where`, when `valid` (the family's
// CheckOptions of the decoded options) is not OK or one of the `count`
// reserved parameter bytes is not zero; OK otherwise.
Status CheckDecodedParams(const std::string& where, const Status& valid, const uint8_t* reserved,
                          size_t count);
template <size_t N>
Status CheckDecodedParams(const std::string& where, const Status& valid,
                          const uint8_t (&reserved)[N]) {
  return CheckDecodedParams(where, valid, reserved, N);
}

// A catalog entry of `family` for the table whose validated root is `root`,
// and in *options the kind and sizes it was created with: the caller adds
// its family's options and encodes them into entry.params.
format::CatalogEntry SalvagedEntry(const TableFamily& family, const RootIdentity& root,
                                   TableOptions* options);

}  // namespace gpkv::tables
