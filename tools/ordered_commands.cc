// The commands of ordered tables:
//   `gpkv range POOL TABLE LO HI`   the live pairs with LO <= key <= HI, in key order
//                                   (the first N of them with --limit N)
//   `gpkv count POOL TABLE LO HI`   how many live keys lie in [LO, HI]
//   `gpkv compact POOL TABLE`       rewrite the table without stale or erased entries
// Numbers as tools/number_text.h describes them. A hash table answers each
// with an error (exit 3): it has no key order.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/number_text.h"
#include "tools/table_args.h"
#include "tools/table_json.h"

namespace gpkv::tools {
namespace {

constexpr const char* kBoundsHelp =
    "LO and HI are keys (inclusive), unsigned numbers in the table's key size:\n"
    "decimal (42) or hexadecimal (0x2a). Keys are ordered as unsigned integers\n"
    "(of a 16- or 32-byte key the last 8 bytes are the most significant).";

struct BoundsArgs {
  TableArgs table;
  std::string lo;
  std::string hi;
  bool json = false;
  uint64_t limit = 0;  // range --limit: 0 for every pair
};

// Opens the table and parses LO and HI; false (with *exit_code) on failure.
bool OpenWithBounds(const std::string& command, const BoundsArgs& args, OpenedTable* opened,
                    std::vector<uint8_t>* lo, std::vector<uint8_t>* hi, int* exit_code) {
  if (!OpenTableOrFail(command, args.table, opened, exit_code)) return false;
  if (!ParseNumbers(command, "key", {args.lo}, opened->key_size, args.table.hex, lo) ||
      !ParseNumbers(command, "key", {args.hi}, opened->key_size, args.table.hex, hi)) {
    *exit_code = kExitUsage;
    return false;
  }
  return true;
}

int RunRange(const BoundsArgs& args) {
  int exit_code = kExitOk;
  OpenedTable opened;
  std::vector<uint8_t> lo, hi;
  if (!OpenWithBounds("range", args, &opened, &lo, &hi, &exit_code)) return exit_code;
  Table::RangeResults results;
  BatchOptions options;
  if (args.limit != 0) options.range_limit = args.limit;
  Status status = opened.table->Range(lo, hi, &results, options);
  if (!status.ok()) return Fail("range", status);
  const uint64_t pairs = results.offsets.back();
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (uint64_t i = 0; i < pairs; ++i) {
    const uint8_t* key = &results.keys[i * opened.key_size];
    const uint8_t* value = &results.values[i * opened.value_size];
    if (args.json) {
      out.push_back({{"key", NumberJson(key, opened.key_size, args.table.hex)},
                     {"value", NumberJson(value, opened.value_size, args.table.hex)}});
    } else {
      std::printf("%s %s\n", FormatNumber(key, opened.key_size, args.table.hex).c_str(),
                  FormatNumber(value, opened.value_size, args.table.hex).c_str());
    }
  }
  if (args.json) PrintJson(out);
  return kExitOk;
}

int RunCount(const BoundsArgs& args) {
  int exit_code = kExitOk;
  OpenedTable opened;
  std::vector<uint8_t> lo, hi;
  if (!OpenWithBounds("count", args, &opened, &lo, &hi, &exit_code)) return exit_code;
  std::vector<uint64_t> counts(1);
  Status status = opened.table->Count(lo, hi, counts);
  if (!status.ok()) return Fail("count", status);
  if (args.json) {
    PrintJson({{"count", counts[0]}});
  } else {
    std::printf("%llu\n", static_cast<unsigned long long>(counts[0]));
  }
  return kExitOk;
}

int RunCompact(const TableArgs& args) {
  int exit_code = kExitOk;
  OpenedTable opened;
  if (!OpenTableOrFail("compact", args, &opened, &exit_code)) return exit_code;
  Status status = opened.table->Compact();
  if (!status.ok()) return Fail("compact", status);
  return CloseAfterWrite("compact", *opened.db, kExitOk);
}

void AddBounds(CLI::App* cmd, BoundsArgs* args, const char* json_help) {
  AddTableArgs(cmd, &args->table, /*can_write=*/false);
  cmd->add_option("lo", args->lo, "lowest key (inclusive)")->required();
  cmd->add_option("hi", args->hi, "highest key (inclusive)")->required();
  cmd->add_flag("--json", args->json, json_help);
}

}  // namespace

void RegisterRangeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BoundsArgs>();
  CLI::App* cmd = app.add_subcommand("range", "print the pairs of an ordered table in a key range");
  cmd->footer(std::string("One 'KEY VALUE' line per live pair with LO <= KEY <= HI, in key\n"
                          "order (none when LO > HI); with --limit N only the first N of them.\n") +
              kBoundsHelp +
              "\nExamples: gpkv range pool.gpkv events 1000 1999\n"
              "          gpkv range --limit 10 pool.gpkv events 1000 0xffffffffffffffff");
  AddBounds(cmd, args.get(),
            "print a JSON array of {\"key\", \"value\"} (numbers as dump --json prints them)");
  cmd->add_option("--limit", args->limit,
                  "print at most N pairs: those of the N smallest keys in the range (0: all)")
      ->option_text("N")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([args, exit_code]() { *exit_code = RunRange(*args); });
}

void RegisterCountCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BoundsArgs>();
  CLI::App* cmd = app.add_subcommand("count", "count the keys of an ordered table in a key range");
  cmd->footer(std::string("Prints how many live keys lie in [LO, HI].\n") + kBoundsHelp +
              "\nExample: gpkv count pool.gpkv events 0 0xffffffff");
  AddBounds(cmd, args.get(), "print {\"count\": N}");
  cmd->callback([args, exit_code]() { *exit_code = RunCount(*args); });
}

void RegisterCompactCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TableArgs>();
  CLI::App* cmd =
      app.add_subcommand("compact", "rewrite an ordered table without stale or erased entries");
  cmd->footer(
      "Merges the write buffer and every level into one run without tombstones or\n"
      "replaced versions (gpkv info shows lsm.dead-entries before and after). Durable\n"
      "and atomic: a crash leaves the table as before or as after.\n"
      "Example: gpkv compact pool.gpkv events");
  AddTableArgs(cmd, args.get(), /*can_write=*/true);
  cmd->callback([args, exit_code]() { *exit_code = RunCompact(*args); });
}

}  // namespace gpkv::tools
