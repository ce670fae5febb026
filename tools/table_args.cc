#include "tools/table_args.h"

#include <CLI/CLI.hpp>

#include "tools/number_text.h"

namespace gpkv::tools {

void AddTableArgs(CLI::App* cmd, TableArgs* args, bool can_write) {
  AddPoolArgs(cmd, &args->pool, can_write);
  cmd->add_option("table", args->table, "table name")->required();
  cmd->add_flag("--hex", args->hex,
                "read numbers without a 0x prefix as hexadecimal, and print hexadecimal");
}

bool OpenTableOrFail(const std::string& command, const TableArgs& args, OpenedTable* opened,
                     int* exit_code) {
  Result<std::unique_ptr<DB>> db = OpenPool(args.pool);
  if (!db.ok()) {
    *exit_code = FailOpen(command, args.pool.path, db.status());
    return false;
  }
  opened->db = std::move(*db);
  Result<Table*> table = opened->db->OpenTable(args.table);
  if (!table.ok()) {
    *exit_code = Fail(command, table.status());
    return false;
  }
  opened->table = *table;
  opened->key_size = opened->table->options().key_size;
  opened->value_size = opened->table->options().value_size;
  return true;
}

bool ParseNumbers(const std::string& command, const char* what,
                  const std::vector<std::string>& texts, size_t size, bool hex,
                  std::vector<uint8_t>* bytes) {
  size_t start = bytes->size();
  bytes->resize(start + texts.size() * size);
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string error = ParseNumber(texts[i], size, hex, bytes->data() + start + i * size);
    if (!error.empty()) {
      PrintError(command, std::string(what) + " " + error);
      return false;
    }
  }
  return true;
}

}  // namespace gpkv::tools
