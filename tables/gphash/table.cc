#include "tables/gphash/table.h"

#include "tables/gphash/layout.h"
#include "tables/stats_builder.h"

namespace gpkv::gphash {

TableStats PublicStats(const Stats& stats) {
  tables::StatsBuilder out(kFamilyName, TableKind::kHash, Durability::kPersistent, stats.keys,
                           gphash::kGphashRootSize + stats.index_bytes + stats.value_bytes);
  out.Add("slots", static_cast<double>(stats.slots));
  out.Add("load-factor", stats.load_factor);
  out.Add("levels", stats.levels);
  out.Add("top-buckets", static_cast<double>(stats.top_buckets));
  out.Add("resizes", static_cast<double>(stats.resizes));
  out.Add("index-bytes", static_cast<double>(stats.index_bytes));
  out.Add("value-bytes", static_cast<double>(stats.value_bytes));
  out.Add("resizing", stats.resizing ? 1 : 0);
  out.Add("cache-buckets", static_cast<double>(stats.cache_buckets));
  out.Add("cache-table-buckets", static_cast<double>(stats.cache_table_buckets));
  out.Add("cache-reloads", static_cast<double>(stats.cache_reloads));
  out.Add("cache-buckets-loaded", static_cast<double>(stats.cache_buckets_loaded));
  out.Add("cache-get-reads", static_cast<double>(stats.cache_get_reads));
  out.Add("cache-get-pool-reads", static_cast<double>(stats.cache_get_pool_reads));
  return out.Take();
}

GphashTable::GphashTable(std::string name, TableOptions options, std::unique_ptr<Backend> backend)
    : HashFamilyTable(std::move(name), options, std::move(backend)) {}

Result<TableStats> GphashTable::Stats() {
  TableStats stats = PublicStats(backend().Stats());
  stats.mode = backend().mode();
  return stats;
}

Status GphashTable::Scan(const ScanVisitor& visit) { return backend().Scan(visit); }

}  // namespace gpkv::gphash
