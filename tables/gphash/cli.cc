#include "tables/gphash/cli.h"

#include <string>
#include <vector>

#include "tables/gphash/layout.h"

namespace gpkv::gphash {
namespace {

std::string GeometryText(const HashGeometry& hash) {
  return std::to_string(hash.levels) + "L-" + std::to_string(hash.hash_locations) + "H-" +
         std::to_string(hash.slots_per_bucket) + "S";
}

class GphashCli final : public tables::FamilyCli {
 public:
  GphashCli()
      : FamilyCli(
            "gphash.slots, .load-factor, .levels, .top-buckets, .resizes,\n"
            ".index-bytes, .value-bytes, .resizing") {}

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
    };
    return flags;
  }

  std::string Geometry(const TableOptions& options) const override {
    return GeometryText(options.hash);
  }

  std::vector<tables::InfoLine> InfoLines(const TableOptions& options) const override {
    return {{"geometry", GeometryText(options.hash) + ", expected keys " +
                             std::to_string(options.expected_keys)}};
  }

  std::vector<tables::JsonField> JsonFields(const TableOptions& options) const override {
    return {{"geometry", "levels", options.hash.levels},
            {"geometry", "hash_locations", options.hash.hash_locations},
            {"geometry", "slots_per_bucket", options.hash.slots_per_bucket}};
  }
};

}  // namespace

const tables::FamilyCli& Cli() { return tables::Instance<GphashCli>(); }

}  // namespace gpkv::gphash
