#include "tables/gphash/cli.h"

#include <string>
#include <vector>

#include "tables/gphash/layout.h"
#include "tables/gphash/logged/layout.h"
#include "tables/gphash/logged/root.h"

namespace gpkv::gphash {
namespace {

std::string GeometryText(const HashGeometry& hash) {
  return std::to_string(hash.levels) + "L-" + std::to_string(hash.hash_locations) + "H-" +
         std::to_string(hash.slots_per_bucket) + "S";
}

// "logged b=65536,M=4"
std::string LogText(const TableOptions& options) {
  return "logged b=" + std::to_string(options.hash_log.batch_entries) +
         ",M=" + std::to_string(options.hash_log.log_batches);
}

class GphashCli final : public tables::FamilyCli {
 public:
  GphashCli()
      : FamilyCli(
            "gphash.slots, .load-factor, .levels, .top-buckets, .resizes,\n"
            ".index-bytes, .value-bytes, .resizing; logged mode: gphash.batch-entries,\n"
            ".log-batches, .log-bytes, .log-capacity, .checkpoints,\n"
            ".checkpoint-pending, .image-entries, .applied-seq") {}

  const std::vector<tables::CliFlag>& Flags() const override {
    using Flag = tables::CliFlag;
    static const std::vector<Flag> flags = {
        {"--levels", "levels of buckets, 1 to 4", Flag::Value::kInteger, Flag::Check::kRange,
         gphash::kMinGeometryLevels, gphash::kMaxGeometryLevels,
         [](const TableOptions& options) -> uint64_t { return options.hash.levels; },
         [](uint64_t value, TableOptions* options) {
           options->hash.levels = static_cast<uint8_t>(value);
         }},
        {"--hash-locations", "candidate buckets per key per level, 1 to 4", Flag::Value::kInteger,
         Flag::Check::kRange, gphash::kMinHashLocations, gphash::kMaxHashLocations,
         [](const TableOptions& options) -> uint64_t { return options.hash.hash_locations; },
         [](uint64_t value, TableOptions* options) {
           options->hash.hash_locations = static_cast<uint8_t>(value);
         }},
        {"--slots", "slots per bucket: 4, 8 or 16", Flag::Value::kInteger, Flag::Check::kPowerOfTwo,
         gphash::kMinSlotsPerBucket, gphash::kMaxSlotsPerBucket,
         [](const TableOptions& options) -> uint64_t { return options.hash.slots_per_bucket; },
         [](uint64_t value, TableOptions* options) {
           options->hash.slots_per_bucket = static_cast<uint8_t>(value);
         }},
        {"--top-buckets", "top-level buckets at create, a power of two; 0 = from --expected-keys",
         Flag::Value::kInteger, Flag::Check::kNone, 0, 0,
         [](const TableOptions& options) { return options.hash.initial_top_buckets; },
         [](uint64_t value, TableOptions* options) { options->hash.initial_top_buckets = value; }},
        {"--log-batches",
         "hash: 0 = writes in place (default), M >= 1 = logged (each write batch a log record, "
         "the index in memory, an image written behind the batches when a log half of M "
         "batches of b is used); "
         "ordered: the log holds up to M batches of b before they are merged into the levels "
         "(1 to 1024, default 1)",
         Flag::Value::kInteger, Flag::Check::kRange, 0, logged::kMaxLogBatches,
         [](const TableOptions& options) -> uint64_t { return options.hash_log.log_batches; },
         [](uint64_t value, TableOptions* options) {
           options->hash_log.log_batches = static_cast<uint32_t>(value);
         },
         &logged::IsLogged},
        {"--batch-entries",
         "entries of a batch as the log counts them (b), a power of two 2^4..2^24 (K, M "
         "suffixes); ordered: also the capacity of level 0",
         Flag::Value::kSize, Flag::Check::kNone, 0, 0,
         [](const TableOptions& options) { return options.hash_log.batch_entries; },
         [](uint64_t value, TableOptions* options) { options->hash_log.batch_entries = value; },
         &logged::IsLogged},
    };
    return flags;
  }

  std::string Geometry(const TableOptions& options) const override {
    if (logged::IsLogged(options)) return LogText(options);
    return GeometryText(options.hash);
  }

  std::vector<tables::InfoLine> InfoLines(const TableOptions& options) const override {
    if (logged::IsLogged(options)) {
      return {{"log", std::to_string(options.hash_log.log_batches) + " batches of " +
                          std::to_string(options.hash_log.batch_entries) +
                          " entries (each write batch a log record; the index in memory), "
                          "expected keys " +
                          std::to_string(options.expected_keys)}};
    }
    return {{"geometry", GeometryText(options.hash) + ", expected keys " +
                             std::to_string(options.expected_keys)}};
  }

  std::vector<tables::JsonField> JsonFields(const TableOptions& options) const override {
    if (logged::IsLogged(options)) {
      return {{"log", "batch_entries", options.hash_log.batch_entries},
              {"log", "log_batches", options.hash_log.log_batches}};
    }
    return {{"geometry", "levels", options.hash.levels},
            {"geometry", "hash_locations", options.hash.hash_locations},
            {"geometry", "slots_per_bucket", options.hash.slots_per_bucket}};
  }
};

}  // namespace

const tables::FamilyCli& Cli() { return tables::Instance<GphashCli>(); }

}  // namespace gpkv::gphash
