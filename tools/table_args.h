// Arguments shared by the commands that work on one table's pairs (put, get,
// del, load, dump): the pool, the table and how numbers are written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "tools/cli_common.h"

namespace CLI {
class App;
}

namespace gpkv::tools {

struct TableArgs {
  PoolArgs pool;
  std::string table;
  bool hex = false;  // read unprefixed numbers as hex, print hex
};

// Adds POOL TABLE (positional, required), the pool options and --hex.
void AddTableArgs(CLI::App* cmd, TableArgs* args, bool can_write);

// An open pool and one of its tables.
struct OpenedTable {
  std::unique_ptr<DB> db;
  Table* table = nullptr;
  uint32_t key_size = 0;
  uint32_t value_size = 0;
};

// Opens args.pool and args.table; on failure prints the error (naming
// `command`) and returns its exit code in *exit_code.
bool OpenTableOrFail(const std::string& command, const TableArgs& args, OpenedTable* opened,
                     int* exit_code);

// Parses each of texts as a number of `size` bytes, appending to *bytes. On a
// bad number prints the error (naming `command` and `what`: "key", "value")
// and returns false.
bool ParseNumbers(const std::string& command, const char* what,
                  const std::vector<std::string>& texts, size_t size, bool hex,
                  std::vector<uint8_t>* bytes);

}  // namespace gpkv::tools
