// `gpkv tables POOL [--json]`             lists the tables of a pool;
// `gpkv tables create POOL NAME [...]`    creates one;
// `gpkv tables drop POOL NAME`            drops one and frees its space.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/family_flags.h"
#include "tools/table_json.h"

namespace gpkv::tools {
namespace {

struct ListArgs {
  PoolArgs pool;
  bool json = false;
};

struct CreateTableArgs {
  PoolArgs pool;
  std::string name;
  std::string kind = "hash";
  std::string durability = "persistent";
  uint32_t key_size = 8;
  uint32_t value_size = 8;
  uint64_t expected_keys = uint64_t{1} << 20;
  FamilyFlags family_flags;  // each family's own
};

// The powers of two from `first` to `last` (the key sizes a table may have).
std::vector<int> PowersOfTwo(uint32_t first, uint32_t last) {
  std::vector<int> values;
  for (uint32_t value = first; value <= last; value *= 2) values.push_back(static_cast<int>(value));
  return values;
}

struct DropTableArgs {
  PoolArgs pool;
  std::string name;
};

int RunList(const ListArgs& args) {
  Result<std::unique_ptr<DB>> db = OpenPool(args.pool);
  if (!db.ok()) return FailOpen("tables", args.pool.path, db.status());
  Result<std::vector<TableInfo>> tables = (*db)->ListTables();
  if (!tables.ok()) return Fail("tables", tables.status());
  if (args.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const TableInfo& info : *tables) out.push_back(TableInfoJson(info));
    std::printf("%s\n",
                out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  if (tables->empty()) return kExitOk;
  size_t name_width = 4;
  for (const TableInfo& info : *tables) name_width = std::max(name_width, info.name.size());
  std::printf("%-*s  %-7s  %-10s  %3s  %5s  %-8s  %s\n", static_cast<int>(name_width), "NAME",
              "KIND", "DURABILITY", "KEY", "VALUE", "GEOMETRY", "EXPECTED_KEYS");
  for (const TableInfo& info : *tables) {
    const TableOptions& options = info.options;
    const tables::TableFamily* family = tables::FindFamily(options.kind, options.durability);
    const std::string geometry = family != nullptr ? family->cli().Geometry(options) : "-";
    std::printf("%-*s  %-7s  %-10s  %3u  %5u  %-8s  %llu\n", static_cast<int>(name_width),
                info.name.c_str(), KindName(options.kind), DurabilityName(options.durability),
                options.key_size, options.value_size, geometry.c_str(),
                static_cast<unsigned long long>(options.expected_keys));
  }
  return kExitOk;
}

int RunCreateTable(const CreateTableArgs& args) {
  TableOptions options;
  options.kind = args.kind == "ordered" ? TableKind::kOrdered : TableKind::kHash;
  options.durability =
      args.durability == "volatile" ? Durability::kVolatile : Durability::kPersistent;
  options.key_size = args.key_size;
  options.value_size = args.value_size;
  options.expected_keys = args.expected_keys;
  if (std::string error = args.family_flags.Apply(&options); !error.empty()) {
    PrintError("tables create", error);
    std::fprintf(stderr, "gpkv: see 'gpkv tables create --help'\n");
    return kExitUsage;
  }
  Result<std::unique_ptr<DB>> db = OpenPool(args.pool);
  if (!db.ok()) return FailOpen("tables create", args.pool.path, db.status());
  Result<Table*> table = (*db)->CreateTable(args.name, options);
  if (!table.ok()) return Fail("tables create", table.status());
  return CloseAfterWrite("tables create", **db, kExitOk);
}

int RunDropTable(const DropTableArgs& args) {
  Result<std::unique_ptr<DB>> db = OpenPool(args.pool);
  if (!db.ok()) return FailOpen("tables drop", args.pool.path, db.status());
  Status status = (*db)->DropTable(args.name);
  if (!status.ok()) return Fail("tables drop", status);
  return CloseAfterWrite("tables drop", **db, kExitOk);
}

void RegisterCreate(CLI::App* tables, int* exit_code) {
  auto args = std::make_shared<CreateTableArgs>();
  CLI::App* cmd = tables->add_subcommand("create", "create a table");
  cmd->footer(
      "Keys are 8, 16 or 32 bytes, values 1 to 128 bytes, fixed per table.\n"
      "A volatile table (--durability volatile: kept in GPU memory or RAM) is\n"
      "declared in the pool's catalog only: it is empty whenever the pool is opened, so\n"
      "its pairs last as long as one process (one gpkv command) holds it.\n"
      "Each family's flags are listed under it; a flag of another family is a usage error.\n"
      "Example: gpkv tables create pool.gpkv users --value-size 16 --expected-keys 10M");
  AddPoolArgs(cmd, &args->pool, /*can_write=*/true);
  cmd->add_option("name", args->name, "table name (1 to 63 bytes)")->required();
  cmd->add_option("--kind", args->kind, "hash | ordered")
      ->check(CLI::IsMember({"hash", "ordered"}))
      ->capture_default_str();
  cmd->add_option("--durability", args->durability,
                  "persistent (in the pool) | volatile (contents live in memory, empty after "
                  "reopen)")
      ->check(CLI::IsMember({"persistent", "volatile"}))
      ->capture_default_str();
  cmd->add_option("--key-size", args->key_size, "key bytes: 8, 16 or 32")
      ->check(CLI::IsMember(PowersOfTwo(format::kMinKeySize, format::kMaxKeySize)))
      ->capture_default_str();
  cmd->add_option("--value-size", args->value_size, "value bytes: 1 to 128")
      ->check(CLI::Range(static_cast<int>(format::kMinValueSize),
                         static_cast<int>(format::kMaxValueSize)))
      ->capture_default_str();
  cmd->add_option("--expected-keys", args->expected_keys,
                  "keys the table should hold before its first resize (K, M, G suffixes)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  args->family_flags.AddTo(cmd);
  cmd->callback([args, exit_code]() { *exit_code = RunCreateTable(*args); });
}

void RegisterDrop(CLI::App* tables, int* exit_code) {
  auto args = std::make_shared<DropTableArgs>();
  CLI::App* cmd = tables->add_subcommand("drop", "drop a table and free its pool space");
  AddPoolArgs(cmd, &args->pool, /*can_write=*/true);
  cmd->add_option("name", args->name, "table name")->required();
  cmd->callback([args, exit_code]() { *exit_code = RunDropTable(*args); });
}

}  // namespace

void RegisterTablesCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ListArgs>();
  CLI::App* tables = app.add_subcommand("tables", "list the tables of a pool; create or drop one");
  tables->footer(
      "gpkv tables POOL [--json]          list the tables\n"
      "gpkv tables create POOL NAME ...   create one (gpkv tables create --help)\n"
      "gpkv tables drop POOL NAME         drop one");
  tables->require_subcommand(0, 1);
  // Not required here: `gpkv tables create POOL NAME` gives the pool to create.
  tables->add_option("pool", args->pool.path, "pool file (to list its tables)");
  args->pool.read_only = true;  // listing: read-only unless --write
  CLI::Option* write = tables->add_flag(
      "--write", args->pool.write, "open the pool writable to list, running open-time recovery");
  tables->add_flag("--read-only", args->pool.read_only, "open the pool read-only (the default)")
      ->excludes(write);
  tables->add_flag("--json", args->json, "print JSON");
  RegisterCreate(tables, exit_code);
  RegisterDrop(tables, exit_code);
  tables->callback([tables, args, exit_code]() {
    if (!tables->get_subcommands().empty()) return;  // create / drop ran
    if (args->pool.path.empty()) {
      PrintError("tables", "a pool is required (gpkv tables POOL; see gpkv tables --help)");
      *exit_code = kExitUsage;
      return;
    }
    args->pool.backend = "cpu";  // listing reads the catalog only
    *exit_code = RunList(*args);
  });
}

}  // namespace gpkv::tools
