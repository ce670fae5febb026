// The GPU suites' way to their tables (see api_table.h).
#include "bench/gpu/api_table.h"

#include <cstdio>
#include <utility>

namespace gpkv::bench::gpu {
namespace {

constexpr const char* kTableName = "bench";

// The property "gphash.<name>" of `stats`, or NotFound naming it.
Status Read(const TableStats& stats, const char* name, double* value) {
  const std::string full = std::string("gphash.") + name;
  const auto found = stats.Property(full);
  if (!found.has_value()) {
    return Status::NotFound("table stats of family '" + stats.family + "' have no " + full);
  }
  *value = *found;
  return Status::OK();
}

}  // namespace

Result<HashCounters> HashCountersOf(Table& table) {
  auto stats = table.Stats();
  if (!stats.ok()) return stats.status();
  HashCounters counters;
  counters.keys = stats->keys;
  // A logged hash table or an ordered table keeps no GPHash index in the
  // pool: its keys only.
  if (stats->family != "gphash" || stats->mode == "logged") return counters;
  const struct {
    const char* name;
    uint64_t* count;
  } counts[] = {{"slots", &counters.slots},
                {"resizes", &counters.resizes},
                {"index-bytes", &counters.index_bytes},
                {"cache-buckets", &counters.cache_buckets},
                {"cache-table-buckets", &counters.cache_table_buckets},
                {"cache-reloads", &counters.cache_reloads},
                {"cache-buckets-loaded", &counters.cache_buckets_loaded},
                {"cache-get-reads", &counters.cache_get_reads},
                {"cache-get-pool-reads", &counters.cache_get_pool_reads}};
  for (const auto& count : counts) {
    double value = 0;
    GPKV_RETURN_IF_ERROR(Read(*stats, count.name, &value));
    *count.count = static_cast<uint64_t>(value);
  }
  double levels = 0;
  GPKV_RETURN_IF_ERROR(Read(*stats, "levels", &levels));
  counters.levels = static_cast<uint32_t>(levels);
  GPKV_RETURN_IF_ERROR(Read(*stats, "load-factor", &counters.load_factor));
  return counters;
}

Result<std::unique_ptr<BenchDb>> BenchDb::Create(const std::string& path, uint64_t pool_bytes,
                                                 const Options& options,
                                                 const TableOptions& table_options) {
  std::remove(path.c_str());
  std::unique_ptr<BenchDb> bench(new BenchDb(path, pool_bytes));
  Options create = options;
  create.create_if_missing = true;
  create.error_if_exists = true;
  create.pool_size = pool_bytes;
  auto db = DB::Open(path, create);
  if (!db.ok()) return db.status();
  bench->db_ = std::move(*db);
  auto table = bench->db_->CreateTable(kTableName, table_options);
  if (!table.ok()) return table.status();
  bench->table_ = *table;
  return bench;
}

BenchDb::~BenchDb() {
  Status closed = Close();
  if (!closed.ok()) std::fprintf(stderr, "gpkv-bench: %s\n", closed.ToString().c_str());
  std::remove(path_.c_str());
}

Status BenchDb::Close() {
  table_ = nullptr;
  if (db_ == nullptr) return Status::OK();
  Status closed = db_->Close();
  db_.reset();
  return closed;
}

Status BenchDb::Open(const Options& options) {
  if (db_ != nullptr) return Status::InvalidArgument(path_ + ": the pool is open already");
  Options reopen = options;
  reopen.create_if_missing = false;
  reopen.error_if_exists = false;
  auto db = DB::Open(path_, reopen);
  if (!db.ok()) return db.status();
  db_ = std::move(*db);
  auto table = db_->OpenTable(kTableName);
  if (!table.ok()) return table.status();
  table_ = *table;
  return Status::OK();
}

}  // namespace gpkv::bench::gpu
