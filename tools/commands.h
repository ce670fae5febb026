// The commands of the gpkv tool. Each Register function adds one command (or
// a command with its own subcommands) to the CLI11 app; the command's
// callback runs it and stores its exit code in *exit_code (see cli_common.h).
#pragma once

namespace CLI {
class App;
}

namespace gpkv::tools {

void RegisterCreateCommand(CLI::App& app, int* exit_code);   // create_command.cc
void RegisterGrowCommand(CLI::App& app, int* exit_code);     // grow_command.cc
void RegisterInfoCommand(CLI::App& app, int* exit_code);     // info_command.cc
void RegisterTablesCommand(CLI::App& app, int* exit_code);   // tables_command.cc
void RegisterPutCommand(CLI::App& app, int* exit_code);      // kv_commands.cc
void RegisterGetCommand(CLI::App& app, int* exit_code);      // kv_commands.cc
void RegisterDelCommand(CLI::App& app, int* exit_code);      // kv_commands.cc
void RegisterLoadCommand(CLI::App& app, int* exit_code);     // load_command.cc
void RegisterDumpCommand(CLI::App& app, int* exit_code);     // dump_command.cc
void RegisterRangeCommand(CLI::App& app, int* exit_code);    // ordered_commands.cc
void RegisterCountCommand(CLI::App& app, int* exit_code);    // ordered_commands.cc
void RegisterCompactCommand(CLI::App& app, int* exit_code);  // ordered_commands.cc
void RegisterVerifyCommand(CLI::App& app, int* exit_code);   // verify_command.cc
void RegisterRepairCommand(CLI::App& app, int* exit_code);   // verify_command.cc

}  // namespace gpkv::tools
