#include "tables/volatile_family.h"

#include <cstring>

#include "tables/table_options.h"

namespace gpkv::tables {
namespace {

bool IsDefaultGeometry(const HashGeometry& geometry) {
  const HashGeometry defaults;
  return geometry.levels == defaults.levels && geometry.hash_locations == defaults.hash_locations &&
         geometry.slots_per_bucket == defaults.slots_per_bucket &&
         geometry.initial_top_buckets == defaults.initial_top_buckets;
}

std::string TableRegion(const format::CatalogEntry& entry) {
  return std::string("table '") + entry.name + "'";
}

}  // namespace

Status VolatileFamily::CheckOptions(const std::string& where, const TableOptions& options) const {
  GPKV_RETURN_IF_ERROR(CheckTableSizes(where, options));
  GPKV_RETURN_IF_ERROR(CheckNoHashLog(where, options));
  if (options.expected_keys > kMaxVolatileExpectedKeys) {
    return Status::InvalidArgument(where + ": expected keys " +
                                   std::to_string(options.expected_keys) +
                                   " is more than a table may hold (2^40)");
  }
  if (!IsDefaultGeometry(options.hash)) {
    return Status::InvalidArgument(where + ": " + geometry_advice_);
  }
  return Status::OK();
}

void VolatileFamily::EncodeParams(const TableOptions&,
                                  uint8_t (&params)[format::kCatalogParamsSize]) const {
  std::memset(params, 0, sizeof(params));
}

Status VolatileFamily::DecodeParams(const std::string& where,
                                    const uint8_t (&params)[format::kCatalogParamsSize],
                                    TableOptions* options) const {
  for (uint8_t byte : params) {
    if (byte != 0) {
      return Status::Corruption(where +
                                ": reserved parameter bytes of a volatile table are not zero");
    }
  }
  options->hash = HashGeometry{};
  options->ordered = OrderedOptions{};
  if (options->expected_keys > kMaxVolatileExpectedKeys) {
    return Status::Corruption(where + ": expected keys " + std::to_string(options->expected_keys) +
                              " is more than 2^40");
  }
  return Status::OK();
}

Result<uint64_t> VolatileFamily::Create(pm::Pool&, uint64_t, const TableOptions&) const {
  return uint64_t{0};  // nothing in the pool
}

Result<std::unique_ptr<Table>> VolatileFamily::Open(const OpenContext& context,
                                                    const format::CatalogEntry& entry,
                                                    const TableOptions& options) const {
  const std::string where = context.pool->path() + ": " + TableRegion(entry);
  return open_empty_(where, entry.name, options, context.backend, context.cpu_threads,
                     context.cuda_device);
}

Status VolatileFamily::Drop(pm::Pool&, const format::CatalogEntry&) const {
  return Status::OK();  // nothing in the pool; the open table's memory goes with it
}

Result<std::vector<TableExtent>> VolatileFamily::Extents(const pm::Pool&,
                                                         const format::CatalogEntry&, bool) const {
  return std::vector<TableExtent>{};
}

Status VolatileFamily::Verify(const pm::Pool& pool, const format::CatalogEntry& entry,
                              recovery::Report& report, const recovery::ProgressFn&) const {
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

Status VolatileFamily::Repair(pm::Pool&, const format::CatalogEntry&, recovery::Report&,
                              const recovery::ProgressFn&) const {
  return Status::OK();  // nothing in the pool to repair
}

Result<format::CatalogEntry> VolatileFamily::Salvage(const pm::Pool& pool,
                                                     const format::ExtentEntry& root_extent,
                                                     const std::string& name) const {
  return Status::Unsupported(pool.Where("extent", root_extent.offset) + ": '" + name +
                             "': volatile tables have no root to salvage");
}

}  // namespace gpkv::tables
