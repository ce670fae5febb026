// The gpkv tool: `gpkv <command> [options] POOL ...`. Creates, inspects,
// loads, dumps, verifies and repairs pools. `gpkv --version` prints the
// release and the pool format this build opens.
//
// Exit codes (every command): 0 ok, 1 usage, 2 corruption found, 3 other
// error (a pool busy with another process included), 4 not found, 5 a pool
// of a format version this build does not read. Errors go to stderr as
// "gpkv: <command>: <message>"; data goes to stdout; progress appears on
// stderr only when it is a terminal.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "format/pool_layout.h"
#include "gpkv/version.h"
#include "tables/registry.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace {

constexpr const char* kDescription =
    "gpkv: key-value tables in a persistent-memory pool file, run on the GPU or the CPU.\n"
    "Exit codes: 0 ok, 1 usage, 2 corruption found (repair --dry-run: repair would change\n"
    "the pool), 3 other error (including: the pool is\n"
    "busy, another process writes it or reads it while this command would write),\n"
    "4 not found (the pool file, table or key named does not exist), 5 unsupported (a gpkv\n"
    "of another format version wrote the pool: \"written by a newer gpkv\").\n"
    "--json (where the output is data) prints one JSON document on stdout; errors go to\n"
    "stderr as 'gpkv: <command>: <message>', with --json too.";

// What `gpkv --version` prints: the release, the pool format version this
// build opens (docs/FORMAT.md) and the table families it serves.
std::string VersionText() {
  std::string text = "gpkv " GPKV_VERSION_STRING "\npool format version " +
                     std::to_string(gpkv::format::kFormatVersion) +
                     " (the only one this build opens; it refuses others without writing them)"
                     "\ntable families:";
  const char* separator = " ";
  for (const gpkv::tables::TableFamily* family : gpkv::tables::Families()) {
    text += separator + std::string(family->name()) + " (" +
            gpkv::tables::DurabilityName(family->durability()) + " " +
            gpkv::tables::KindName(family->kind()) + ")";
    separator = ", ";
  }
  return text;
}

bool IsCommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->check_name(name)) return true;
  }
  return false;
}

// Help and version requests exit 0 with their text on stdout; every other
// parse error is a usage error.
int HandleParseError(const CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    return app.exit(error);
  }
  // Name the command that was being parsed ("gpkv: tables create: ...") in
  // the message and in the hint.
  std::string command;
  for (const CLI::App* parsed = &app; !parsed->get_subcommands().empty();) {
    parsed = parsed->get_subcommands().front();
    command += (command.empty() ? "" : " ") + parsed->get_name();
  }
  const std::string prefix = command.empty() ? "gpkv: " : "gpkv: " + command + ": ";
  const std::string help = command.empty() ? "gpkv" : "gpkv " + command;
  std::fprintf(stderr, "%s%s\ngpkv: see '%s --help'\n", prefix.c_str(), error.what(), help.c_str());
  return gpkv::tools::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(kDescription, "gpkv");
  app.require_subcommand(1);
  app.set_version_flag("--version", VersionText(),
                       "print the version and the pool format it opens");
  int exit_code = gpkv::tools::kExitOk;
  gpkv::tools::RegisterCreateCommand(app, &exit_code);
  gpkv::tools::RegisterGrowCommand(app, &exit_code);
  gpkv::tools::RegisterInfoCommand(app, &exit_code);
  gpkv::tools::RegisterTablesCommand(app, &exit_code);
  gpkv::tools::RegisterPutCommand(app, &exit_code);
  gpkv::tools::RegisterGetCommand(app, &exit_code);
  gpkv::tools::RegisterDelCommand(app, &exit_code);
  gpkv::tools::RegisterLoadCommand(app, &exit_code);
  gpkv::tools::RegisterDumpCommand(app, &exit_code);
  gpkv::tools::RegisterRangeCommand(app, &exit_code);
  gpkv::tools::RegisterCountCommand(app, &exit_code);
  gpkv::tools::RegisterCompactCommand(app, &exit_code);
  gpkv::tools::RegisterVerifyCommand(app, &exit_code);
  gpkv::tools::RegisterRepairCommand(app, &exit_code);
  // After the commands, which would otherwise inherit it.
  app.footer(
      "Commands take options and then the pool: gpkv <command> [options] POOL ...\n"
      "Keys and values on the command line are unsigned numbers stored little-endian in\n"
      "the table's key and value sizes: decimal (42) or hexadecimal (0x2a).");

  if (argc <= 1) {
    std::fputs(app.help().c_str(), stderr);
    return gpkv::tools::kExitUsage;
  }
  if (argv[1][0] != '-' && !IsCommand(app, argv[1])) {
    std::fprintf(stderr, "gpkv: '%s' is not a gpkv command\ngpkv: see 'gpkv --help'\n", argv[1]);
    return gpkv::tools::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return HandleParseError(app, error);
  }
  return exit_code;
}
