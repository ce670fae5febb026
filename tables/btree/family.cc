#include "tables/btree/family.h"

#include <string>

#include "tables/btree/cli.h"
#include "tables/btree/table.h"
#include "tables/volatile_family.h"

namespace gpkv::btree {
namespace {

bool IsDefaultOrdered(const OrderedOptions& ordered) {
  const OrderedOptions defaults;
  return ordered.batch_entries == defaults.batch_entries &&
         ordered.log_batches == defaults.log_batches &&
         ordered.max_dead_percent == defaults.max_dead_percent;
}

class BtreeFamily final : public tables::VolatileFamily {
 public:
  BtreeFamily()
      : VolatileFamily(kFamilyName, TableKind::kOrdered, Cli(),
                       "a hash geometry applies to persistent hash tables; leave it at its "
                       "default for a volatile ordered table",
                       &OpenEmptyTable) {}

  // What every volatile table is checked for, and no write buffer or log.
  Status CheckOptions(const std::string& where, const TableOptions& options) const override {
    GPKV_RETURN_IF_ERROR(VolatileFamily::CheckOptions(where, options));
    if (!IsDefaultOrdered(options.ordered)) {
      return Status::InvalidArgument(
          where +
          ": batch entries, log batches and max dead percent apply to persistent ordered tables "
          "(the LSM); a volatile ordered table (B-tree) has no write buffer or log: leave them at "
          "their defaults");
    }
    return Status::OK();
  }
};

}  // namespace

const tables::TableFamily& Family() { return tables::Instance<BtreeFamily>(); }

}  // namespace gpkv::btree
