// tables::FamilyTable: what every family's front (tables/<family>/table.h,
// the gpkv::Table a family's Open returns) holds alike: the table's name and
// options, given once at open and answered by name() and options(). A front
// derives from it and implements the batches over its core or backend.
//
// Who may derive: the families' fronts (tables/<family>/table.h).
// Thread safety: name and options never change after construction.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "gpkv/batch.h"
#include "gpkv/options.h"
#include "gpkv/table.h"

namespace gpkv::tables {

class FamilyTable : public Table {
 public:
  const std::string& name() const final { return name_; }
  const TableOptions& options() const final { return options_; }

 protected:
  FamilyTable(std::string name, const TableOptions& options)
      : name_(std::move(name)), options_(options) {}

  // The number of keys (or queries) in a batch of keys of key_size bytes.
  size_t CountOf(ConstBytes keys) const { return keys.size() / options_.key_size; }

 private:
  const std::string name_;
  const TableOptions options_;
};

}  // namespace gpkv::tables
