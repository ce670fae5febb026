#include "tables/gphash/table.h"

#include "tables/gphash/layout.h"

namespace gpkv::gphash {

TableStats PublicStats(const Stats& stats) {
  TableStats out;
  out.kind = TableKind::kHash;
  out.durability = Durability::kPersistent;
  out.family = kFamilyName;
  out.keys = stats.keys;
  out.bytes = gphash::kGphashRootSize + stats.index_bytes + stats.value_bytes;
  auto add = [&](const char* name, double value) {
    out.properties.push_back({std::string(kFamilyName) + "." + name, value});
  };
  add("slots", static_cast<double>(stats.slots));
  add("load-factor", stats.load_factor);
  add("levels", stats.levels);
  add("top-buckets", static_cast<double>(stats.top_buckets));
  add("resizes", static_cast<double>(stats.resizes));
  add("index-bytes", static_cast<double>(stats.index_bytes));
  add("value-bytes", static_cast<double>(stats.value_bytes));
  add("resizing", stats.resizing ? 1 : 0);
  return out;
}

GphashTable::GphashTable(std::string name, TableOptions options, std::unique_ptr<Backend> backend)
    : name_(std::move(name)), options_(options), backend_(std::move(backend)) {}

Status GphashTable::Put(ConstBytes keys, ConstBytes values, const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  return backend_->Put(keys.bytes(), values.bytes(), count, options.stream);
}

Status GphashTable::Get(ConstBytes keys, MutableBytes values, MutableBytes found,
                        const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  uint8_t* found_bytes = found.empty() ? nullptr : found.bytes();
  return backend_->Get(keys.bytes(), values.bytes(), found_bytes, count, options.stream);
}

Status GphashTable::Erase(ConstBytes keys, MutableBytes erased, const BatchOptions& options) {
  const size_t count = keys.size() / options_.key_size;
  uint8_t* erased_bytes = erased.empty() ? nullptr : erased.bytes();
  return backend_->Erase(keys.bytes(), erased_bytes, count, options.stream);
}

Result<TableStats> GphashTable::Stats() { return PublicStats(backend_->Stats()); }

Status GphashTable::Scan(const ScanVisitor& visit) { return backend_->Scan(visit); }

}  // namespace gpkv::gphash
