#include "tables/lsm/cli.h"

#include <string>
#include <vector>

#include "tables/lsm/layout.h"

namespace gpkv::lsm {
namespace {

class LsmCli final : public tables::FamilyCli {
 public:
  LsmCli()
      : FamilyCli(
            "lsm.batch-entries, .log-batches, .levels, .runs, .entries,\n"
            ".buffer-entries, .tombstones, .dead-entries, .fill, .compactions, .run-bytes,\n"
            ".log-bytes, .log-capacity, .log-halves, .checkpoint-pending, .applied-seq,\n"
            ".level-<i>-entries") {}

  const std::vector<tables::CliFlag>& Flags() const override {
    using Flag = tables::CliFlag;
    static const std::vector<Flag> flags = {
        {"--batch-entries",
         "entries of the write buffer and of level 0 (b), a power of two 2^4..2^24 (K, M "
         "suffixes)",
         Flag::Value::kSize, Flag::Check::kNone, 0, 0,
         [](const TableOptions& options) { return options.ordered.batch_entries; },
         [](uint64_t value, TableOptions* options) { options->ordered.batch_entries = value; }},
        {"--log-batches",
         "the durable log holds up to this many batches of b entries before they are merged "
         "into the levels (M, 1 to 1024): fewer level rewrites for a log of M * b entries in "
         "the pool and more to replay after a crash",
         Flag::Value::kInteger, Flag::Check::kRange, 1, kMaxLogBatches,
         [](const TableOptions& options) -> uint64_t { return options.ordered.log_batches; },
         [](uint64_t value, TableOptions* options) {
           options->ordered.log_batches = static_cast<uint32_t>(value);
         }},
        {"--max-dead-percent", "compact on its own past this share of dead entries, 1 to 100",
         Flag::Value::kInteger, Flag::Check::kRange, 1, 100,
         [](const TableOptions& options) -> uint64_t { return options.ordered.max_dead_percent; },
         [](uint64_t value, TableOptions* options) {
           options->ordered.max_dead_percent = static_cast<uint8_t>(value);
         }},
    };
    return flags;
  }

  std::string Geometry(const TableOptions& options) const override {
    std::string geometry = "b=" + std::to_string(options.ordered.batch_entries);
    if (options.ordered.log_batches != 1) {
      geometry += ",M=" + std::to_string(options.ordered.log_batches);
    }
    return geometry;
  }
};

}  // namespace

const tables::FamilyCli& Cli() { return tables::Instance<LsmCli>(); }

}  // namespace gpkv::lsm
