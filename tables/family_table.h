// tables::FamilyTable: what every family's front (tables/<family>/table.h,
// the gpkv::Table a family's Open returns) holds alike: the table's name and
// options, given once at open and answered by name() and options(). A front
// derives from it and implements the batches over its core or backend.
// OpenFront builds a front over a backend just made, naming the table in the
// error when making it failed.
//
// Who may derive: the families' fronts (tables/<family>/table.h).
// Thread safety: name and options never change after construction.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpkv/batch.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "tables/write_batch.h"

namespace gpkv::tables {

// `status` with `where` and ": " in front of its message when it is an error.
inline Status Prefixed(const std::string& where, const Status& status) {
  if (status.ok()) return status;
  return Status(status.code(), where + ": " + status.message());
}

class FamilyTable : public Table {
 public:
  const std::string& name() const final { return name_; }
  const TableOptions& options() const final { return options_; }

 protected:
  FamilyTable(std::string name, const TableOptions& options)
      : name_(std::move(name)), options_(options) {}

  // The number of keys (or queries) in a batch of keys of key_size bytes.
  size_t CountOf(ConstBytes keys) const { return keys.size() / options_.key_size; }

  // Table::Write's part that every family shares: the batch resolved into
  // its puts and its erases (tables::ResolveWrite), `apply(batch,
  // probe_found)` run on it (probe_found: batch.probes bytes for the family
  // to fill, 1 where a probe key was live before the batch), then `erased`,
  // when asked for, filled from them.
  template <typename Apply>
  Status ResolveAndWrite(ConstBytes keys, ConstBytes values, ConstBytes ops, MutableBytes erased,
                         Apply&& apply) {
    auto batch =
        ResolveWrite("table '" + name_ + "'", keys.bytes(), values.bytes(), ops.bytes(),
                     CountOf(keys), options_.key_size, options_.value_size, !erased.empty());
    if (!batch.ok()) return batch.status();
    std::vector<uint8_t> probe_found(batch->probes);
    GPKV_RETURN_IF_ERROR(apply(*batch, probe_found.data()));
    if (!erased.empty()) batch->FillErased(probe_found.data(), erased.bytes());
    return Status::OK();
  }

 private:
  const std::string name_;
  const TableOptions options_;
};

// A table of front type Front, Front(where, name, options, backend), over
// the backend `backend` a family just made for it; when making it failed,
// its error with `where` in front.
template <typename Front, typename MadeBackend>
Result<std::unique_ptr<Table>> OpenFront(const std::string& where, const std::string& name,
                                         const TableOptions& options,
                                         Result<std::unique_ptr<MadeBackend>> backend) {
  if (!backend.ok()) return Prefixed(where, backend.status());
  return std::unique_ptr<Table>(std::make_unique<Front>(where, name, options, std::move(*backend)));
}

}  // namespace gpkv::tables
