#include "tables/btree/family.h"

#include <cstring>
#include <string>

#include "tables/btree/cli.h"
#include "tables/btree/table.h"
#include "tables/table_options.h"

namespace gpkv::btree {
namespace {

bool IsDefaultGeometry(const HashGeometry& geometry) {
  const HashGeometry defaults;
  return geometry.levels == defaults.levels && geometry.hash_locations == defaults.hash_locations &&
         geometry.slots_per_bucket == defaults.slots_per_bucket &&
         geometry.initial_top_buckets == defaults.initial_top_buckets;
}

bool IsDefaultOrdered(const OrderedOptions& ordered) {
  const OrderedOptions defaults;
  return ordered.batch_entries == defaults.batch_entries &&
         ordered.log_batches == defaults.log_batches &&
         ordered.max_dead_percent == defaults.max_dead_percent;
}

std::string TableRegion(const format::CatalogEntry& entry) {
  return std::string("table '") + entry.name + "'";
}

class BtreeFamily final : public tables::TableFamily {
 public:
  BtreeFamily() : TableFamily(kFamilyName, TableKind::kOrdered, Durability::kVolatile, Cli()) {}

  Status CheckOptions(const std::string& where, const TableOptions& options) const override {
    GPKV_RETURN_IF_ERROR(tables::CheckTableSizes(where, options));
    if (options.expected_keys > kMaxExpectedKeys) {
      return Status::InvalidArgument(where + ": expected keys " +
                                     std::to_string(options.expected_keys) +
                                     " is more than a table may hold (2^40)");
    }
    if (!IsDefaultGeometry(options.hash)) {
      return Status::InvalidArgument(
          where +
          ": a hash geometry applies to persistent hash tables; leave it at its default "
          "for a volatile ordered table");
    }
    if (!IsDefaultOrdered(options.ordered)) {
      return Status::InvalidArgument(
          where +
          ": batch entries, log batches and max dead percent apply to persistent ordered tables "
          "(the LSM); a volatile ordered table (B-tree) has no write buffer or log: leave them at "
          "their defaults");
    }
    return Status::OK();
  }

  // The block is all zeros: a volatile table has no parameters of its own.
  void EncodeParams(const TableOptions&,
                    uint8_t (&params)[format::kCatalogParamsSize]) const override {
    std::memset(params, 0, sizeof(params));
  }

  Status DecodeParams(const std::string& where, const uint8_t (&params)[format::kCatalogParamsSize],
                      TableOptions* options) const override {
    for (uint8_t byte : params) {
      if (byte != 0) {
        return Status::Corruption(where +
                                  ": reserved parameter bytes of a volatile table are not zero");
      }
    }
    options->hash = HashGeometry{};
    options->ordered = OrderedOptions{};
    if (options->expected_keys > kMaxExpectedKeys) {
      return Status::Corruption(where + ": expected keys " +
                                std::to_string(options->expected_keys) + " is more than 2^40");
    }
    return Status::OK();
  }

  Result<uint64_t> Create(pm::Pool&, uint64_t, const TableOptions&) const override {
    return uint64_t{0};  // nothing in the pool
  }

  Result<std::unique_ptr<Table>> Open(const tables::OpenContext& context,
                                      const format::CatalogEntry& entry,
                                      const TableOptions& options) const override {
    const std::string where = context.pool->path() + ": " + TableRegion(entry);
    return OpenEmptyTable(where, entry.name, options, context.backend, context.cpu_threads);
  }

  Status Drop(pm::Pool&, const format::CatalogEntry&) const override {
    return Status::OK();  // nothing in the pool; the open table's memory goes with it
  }

  Result<std::vector<tables::TableExtent>> Extents(const pm::Pool&, const format::CatalogEntry&,
                                                   bool) const override {
    return std::vector<tables::TableExtent>{};
  }

  Status Verify(const pm::Pool& pool, const format::CatalogEntry& entry, recovery::Report& report,
                const recovery::ProgressFn&) const override {
    report.findings.push_back(recovery::Finding{
        recovery::Finding::Severity::kInfo, TableRegion(entry), 0,
        pool.path() + ": " + TableRegion(entry) +
            ": volatile: nothing in the pool (contents live in memory, empty after reopen)"});
    recovery::TableReport table;
    table.name = entry.name;
    table.table_id = entry.table_id;
    report.tables.push_back(table);
    return Status::OK();
  }

  Status Repair(pm::Pool&, const format::CatalogEntry&, recovery::Report&,
                const recovery::ProgressFn&) const override {
    return Status::OK();  // nothing in the pool to repair
  }

  Result<format::CatalogEntry> Salvage(const pm::Pool& pool, const format::ExtentEntry& root_extent,
                                       const std::string& name) const override {
    return Status::Unsupported(pool.Where("extent", root_extent.offset) + ": '" + name +
                               "': volatile tables have no root to salvage");
  }
};

}  // namespace

const tables::TableFamily& Family() {
  static const BtreeFamily family;
  return family;
}

}  // namespace gpkv::btree
