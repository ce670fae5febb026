// `gpkv put POOL TABLE KEY VALUE [KEY VALUE]...`
// `gpkv get POOL TABLE KEY...`
// `gpkv del POOL TABLE KEY...`
// One batch per command; numbers as tools/number_text.h describes them.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
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

constexpr const char* kNumbersHelp =
    "Keys and values are unsigned numbers stored little-endian in the table's key\n"
    "and value sizes: decimal (42) or hexadecimal (0x2a), zero-extended. A volatile\n"
    "table is empty when a command opens it: what put writes there is gone when put\n"
    "exits.";

struct PutArgs {
  TableArgs table;
  std::vector<std::string> pairs;
};

struct KeysArgs {
  TableArgs table;
  std::vector<std::string> keys;
  bool force = false;  // del: a missing key is not a failure
  bool json = false;   // get: print JSON
};

int RunPut(const PutArgs& args) {
  if (args.pairs.size() % 2 != 0) {
    PrintError("put", "expected KEY VALUE pairs, got an odd number of arguments");
    return kExitUsage;
  }
  int exit_code = kExitOk;
  OpenedTable opened;
  if (!OpenTableOrFail("put", args.table, &opened, &exit_code)) return exit_code;
  std::vector<std::string> keys;
  std::vector<std::string> values;
  for (size_t i = 0; i < args.pairs.size(); i += 2) {
    keys.push_back(args.pairs[i]);
    values.push_back(args.pairs[i + 1]);
  }
  std::vector<uint8_t> key_bytes;
  std::vector<uint8_t> value_bytes;
  if (!ParseNumbers("put", "key", keys, opened.key_size, args.table.hex, &key_bytes) ||
      !ParseNumbers("put", "value", values, opened.value_size, args.table.hex, &value_bytes)) {
    return kExitUsage;
  }
  Status status = opened.table->Put(key_bytes, value_bytes);
  if (!status.ok()) return Fail("put", status);
  return CloseAfterWrite("put", *opened.db, kExitOk);
}

int RunGet(const KeysArgs& args) {
  int exit_code = kExitOk;
  OpenedTable opened;
  if (!OpenTableOrFail("get", args.table, &opened, &exit_code)) return exit_code;
  std::vector<uint8_t> key_bytes;
  if (!ParseNumbers("get", "key", args.keys, opened.key_size, args.table.hex, &key_bytes)) {
    return kExitUsage;
  }
  size_t count = args.keys.size();
  std::vector<uint8_t> values(count * opened.value_size);
  std::vector<uint8_t> found(count);
  Status status = opened.table->Get(key_bytes, values, found);
  if (!status.ok()) return Fail("get", status);
  bool all_found = true;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* key = key_bytes.data() + i * opened.key_size;
    const uint8_t* value = values.data() + i * opened.value_size;
    all_found = all_found && found[i];
    if (args.json) {
      nlohmann::ordered_json entry = {{"key", NumberJson(key, opened.key_size, args.table.hex)},
                                      {"found", found[i] != 0}};
      if (found[i]) entry["value"] = NumberJson(value, opened.value_size, args.table.hex);
      out.push_back(std::move(entry));
    } else if (found[i]) {
      std::printf("%s %s\n", FormatNumber(key, opened.key_size, args.table.hex).c_str(),
                  FormatNumber(value, opened.value_size, args.table.hex).c_str());
    } else {
      std::printf("%s (not found)\n", FormatNumber(key, opened.key_size, args.table.hex).c_str());
    }
  }
  if (args.json) PrintJson(out);
  return all_found ? kExitOk : kExitNotFound;
}

int RunDel(const KeysArgs& args) {
  int exit_code = kExitOk;
  OpenedTable opened;
  if (!OpenTableOrFail("del", args.table, &opened, &exit_code)) return exit_code;
  std::vector<uint8_t> key_bytes;
  if (!ParseNumbers("del", "key", args.keys, opened.key_size, args.table.hex, &key_bytes)) {
    return kExitUsage;
  }
  std::vector<uint8_t> erased(args.keys.size());
  Status status = opened.table->Erase(key_bytes, erased);
  if (!status.ok()) return Fail("del", status);
  if (args.force) return CloseAfterWrite("del", *opened.db, kExitOk);
  bool all_erased = true;
  for (size_t i = 0; i < args.keys.size(); ++i) {
    if (erased[i]) continue;
    all_erased = false;
    std::string key =
        FormatNumber(key_bytes.data() + i * opened.key_size, opened.key_size, args.table.hex);
    std::printf("%s (not found)\n", key.c_str());
  }
  return CloseAfterWrite("del", *opened.db, all_erased ? kExitOk : kExitNotFound);
}

}  // namespace

void RegisterPutCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PutArgs>();
  CLI::App* cmd = app.add_subcommand("put", "insert or replace pairs");
  cmd->footer(std::string("All pairs go in one batch, durable when put exits 0; of duplicate\n"
                          "keys the last wins.\n") +
              kNumbersHelp + "\nExample: gpkv put pool.gpkv users 1 100 2 200");
  AddTableArgs(cmd, &args->table, /*can_write=*/true);
  cmd->add_option("pairs", args->pairs, "KEY VALUE [KEY VALUE]...")->required();
  cmd->callback([args, exit_code]() { *exit_code = RunPut(*args); });
}

void RegisterGetCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<KeysArgs>();
  CLI::App* cmd = app.add_subcommand("get", "look up keys");
  cmd->footer(std::string("Prints 'KEY VALUE' or 'KEY (not found)' per key on stdout. Exits 0\n"
                          "when every key was found, 4 (not found) when some was not.\n") +
              kNumbersHelp + "\nExample: gpkv get pool.gpkv users 1 2 0xff");
  AddTableArgs(cmd, &args->table, /*can_write=*/false);
  cmd->add_option("keys", args->keys, "KEY...")->required();
  cmd->add_flag("--json", args->json,
                "print a JSON array of {\"key\", \"found\", \"value\"} (no value when not "
                "found; numbers as dump --json prints them)");
  cmd->callback([args, exit_code]() { *exit_code = RunGet(*args); });
}

void RegisterDelCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<KeysArgs>();
  CLI::App* cmd = app.add_subcommand("del", "erase keys");
  cmd->footer(std::string("All keys go in one batch, durable when del exits 0. Prints\n"
                          "'KEY (not found)' for each key that was absent and then exits 4 (not\n"
                          "found), unless -f.\n") +
              kNumbersHelp + "\nExample: gpkv del pool.gpkv users 1 2");
  AddTableArgs(cmd, &args->table, /*can_write=*/true);
  cmd->add_option("keys", args->keys, "KEY...")->required();
  cmd->add_flag("-f,--force", args->force, "absent keys are not an error (as rm -f)");
  cmd->callback([args, exit_code]() { *exit_code = RunDel(*args); });
}

}  // namespace gpkv::tools
