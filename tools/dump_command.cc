// `gpkv dump POOL TABLE [--hex] [--json]`: a header line naming the table's
// kind, sizes and options (tools/dump_format.h), then every live pair of the table,
// one "KEY VALUE" line each (in key order for an ordered table, in no
// particular order for a hash table): the format `gpkv load --file` reads
// back.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gpkv/db.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/dump_format.h"
#include "tools/number_text.h"
#include "tools/table_args.h"
#include "tools/table_json.h"

namespace gpkv::tools {
namespace {

struct DumpArgs {
  TableArgs table;
  bool json = false;
};

int RunDump(const DumpArgs& args) {
  int exit_code = kExitOk;
  OpenedTable opened;
  if (!OpenTableOrFail("dump", args.table, &opened, &exit_code)) return exit_code;
  const uint32_t key_size = opened.key_size;
  const uint32_t value_size = opened.value_size;
  const bool hex = args.table.hex;
  uint64_t pairs = 0;
  bool write_failed = false;
  if (args.json) {
    std::fputs("[", stdout);
  } else {
    std::printf("%s\n", DumpHeaderLine(opened.table->options()).c_str());
  }
  Status status = opened.table->Scan([&](const uint8_t* key, const uint8_t* value) {
    if (args.json) {
      nlohmann::ordered_json pair = {{"key", NumberJson(key, key_size, hex)},
                                     {"value", NumberJson(value, value_size, hex)}};
      std::fputs(pairs == 0 ? "\n  " : ",\n  ", stdout);
      std::fputs(pair.dump().c_str(), stdout);
    } else {
      std::string line = FormatNumber(key, key_size, hex);
      line += ' ';
      line += FormatNumber(value, value_size, hex);
      line += '\n';
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
    ++pairs;
    write_failed = std::ferror(stdout) != 0;
    return !write_failed;
  });
  if (args.json) std::fputs(pairs == 0 ? "]\n" : "\n]\n", stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) write_failed = true;
  if (!status.ok()) return Fail("dump", status);
  if (write_failed) {
    PrintError("dump", std::string("writing stdout: ") + std::strerror(errno));
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void RegisterDumpCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DumpArgs>();
  CLI::App* cmd = app.add_subcommand("dump", "print every pair of a table");
  cmd->footer(
      "A header line, then one 'KEY VALUE' line per pair, in key order for an ordered\n"
      "table (in no particular order for a hash table); gpkv load --file reads them\n"
      "back. The header names the dump format and every option of the table:\n"
      "  # gpkv-dump format=1 kind=hash durability=persistent key_size=8 value_size=8\n"
      "    expected_keys=1048576 levels=2 hash_locations=2 slots=8 top_buckets=0\n"
      "(one line; the family's options named after their tables create flags), so that\n"
      "load refuses a dump of other key or value sizes and load --create makes the\n"
      "table again. Numbers of up to 8 bytes print in decimal, larger ones (or all,\n"
      "with --hex) as 0x and every hexadecimal digit. A volatile table is empty when\n"
      "a command opens it, so its dump prints the header only. --json prints the pairs\n"
      "alone.\n"
      "Example: gpkv dump pool.gpkv users > users.txt");
  AddTableArgs(cmd, &args->table, /*can_write=*/false);
  cmd->add_flag("--json", args->json, "print a JSON array of {\"key\", \"value\"}");
  cmd->callback([args, exit_code]() { *exit_code = RunDump(*args); });
}

}  // namespace gpkv::tools
