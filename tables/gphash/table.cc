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
  // The BktCache's counters, "gphash.cache-<name>".
  const struct {
    const char* name;
    uint64_t BktCacheStats::*counter;
  } kCacheCounters[] = {{"cache-buckets", &BktCacheStats::capacity_buckets},
                        {"cache-table-buckets", &BktCacheStats::table_buckets},
                        {"cache-reloads", &BktCacheStats::reloads},
                        {"cache-buckets-loaded", &BktCacheStats::buckets_loaded},
                        {"cache-get-reads", &BktCacheStats::get_cache_reads},
                        {"cache-get-pool-reads", &BktCacheStats::get_pool_reads}};
  for (const auto& counter : kCacheCounters) {
    out.Add(counter.name, static_cast<double>(stats.cache.*counter.counter));
  }
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
