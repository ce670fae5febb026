// `gpkv load POOL TABLE --count N [--seed S] [--sequential]` loads generated
// pairs; `gpkv load POOL TABLE --file F [--create]` loads "KEY VALUE" lines
// (F = - for stdin; the format `gpkv dump` prints), with --create into a
// table it creates from the dump's header when the pool has none of that
// name. Puts go in batches; the rate is printed at the end.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpkv/db.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/dump_format.h"
#include "tools/number_text.h"
#include "tools/progress.h"
#include "tools/table_args.h"
#include "tools/table_json.h"

namespace gpkv::tools {
namespace {

struct LoadArgs {
  TableArgs table;
  uint64_t count = 0;
  uint64_t seed = 1;
  bool sequential = false;
  uint64_t start = 0;
  std::string file;
  bool create = false;
  uint64_t batch = 4096;
  bool json = false;
};

// SplitMix64: a small, well-mixed generator; the same seed gives the same
// pairs on every machine.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  void Fill(uint8_t* bytes, size_t size) {
    for (size_t i = 0; i < size; i += 8) {
      uint64_t word = Next();
      for (size_t j = 0; j < 8 && i + j < size; ++j) bytes[i + j] = (word >> (8 * j)) & 0xff;
    }
  }

 private:
  uint64_t state_;
};

// Collects pairs into batches and puts each full batch.
class BatchLoader {
 public:
  BatchLoader(Table* table, uint32_t key_size, uint32_t value_size, uint64_t batch,
              Progress* progress)
      : table_(table),
        key_size_(key_size),
        value_size_(value_size),
        batch_(batch),
        progress_(progress) {
    keys_.reserve(batch * key_size);
    values_.reserve(batch * value_size);
  }

  // Space for one more pair; the caller fills key_size + value_size bytes.
  void Append(uint8_t** key, uint8_t** value) {
    keys_.resize(keys_.size() + key_size_);
    values_.resize(values_.size() + value_size_);
    *key = keys_.data() + keys_.size() - key_size_;
    *value = values_.data() + values_.size() - value_size_;
  }
  // Puts the pending batch if it is full (or `force` and not empty).
  Status Flush(bool force) {
    size_t pending = keys_.size() / key_size_;
    if (pending == 0 || (!force && pending < batch_)) return Status::OK();
    GPKV_RETURN_IF_ERROR(table_->Put(keys_, values_));
    loaded_ += pending;
    keys_.clear();
    values_.clear();
    progress_->Update(loaded_);
    return Status::OK();
  }
  uint64_t loaded() const { return loaded_; }

 private:
  Table* const table_;
  const uint32_t key_size_;
  const uint32_t value_size_;
  const uint64_t batch_;
  Progress* const progress_;
  std::vector<uint8_t> keys_;
  std::vector<uint8_t> values_;
  uint64_t loaded_ = 0;
};

Status LoadGenerated(const LoadArgs& args, uint32_t key_size, uint32_t value_size,
                     BatchLoader* loader) {
  SplitMix64 random(args.seed);
  for (uint64_t i = 0; i < args.count; ++i) {
    uint8_t* key;
    uint8_t* value;
    loader->Append(&key, &value);
    if (args.sequential) {
      uint64_t number = args.start + i;
      for (uint32_t j = 0; j < key_size; ++j) key[j] = j < 8 ? (number >> (8 * j)) & 0xff : 0;
    } else {
      random.Fill(key, key_size);
    }
    random.Fill(value, value_size);
    GPKV_RETURN_IF_ERROR(loader->Flush(false));
  }
  return loader->Flush(true);
}

// Reads "KEY VALUE" lines; blank lines and lines starting with # are skipped,
// but a dump header (tools/dump_format.h) is checked against the table. A
// bad line stops the load (batches before it stay loaded) with
// InvalidArgument naming the file and line; a header of other sizes, before
// any pair of its dump is loaded.
// `lines_read`: lines of `in` the caller read before (the dump header that
// --create read), for the line numbers in messages.
Status LoadLines(std::istream& in, const std::string& name, const LoadArgs& args, uint32_t key_size,
                 uint32_t value_size, uint64_t lines_read, BatchLoader* loader) {
  std::string line;
  uint64_t line_number = lines_read;
  while (std::getline(in, line)) {
    ++line_number;
    std::istringstream fields(line);
    std::string key_text;
    std::string value_text;
    std::string extra;
    auto where = [&]() { return name + ":" + std::to_string(line_number) + ": "; };
    if (IsDumpHeader(line)) {
      GPKV_RETURN_IF_ERROR(loader->Flush(true));  // the pairs before it are another dump's
      GPKV_RETURN_IF_ERROR(CheckDumpHeader(line, where(), args.table.table, key_size, value_size));
      continue;
    }
    if (!(fields >> key_text) || key_text[0] == '#') continue;
    if (!(fields >> value_text)) return Status::InvalidArgument(where() + "expected KEY VALUE");
    if (fields >> extra) return Status::InvalidArgument(where() + "more than KEY VALUE");
    uint8_t* key;
    uint8_t* value;
    loader->Append(&key, &value);
    std::string error = ParseNumber(key_text, key_size, args.table.hex, key);
    if (error.empty()) error = ParseNumber(value_text, value_size, args.table.hex, value);
    if (!error.empty()) return Status::InvalidArgument(where() + error);
    GPKV_RETURN_IF_ERROR(loader->Flush(false));
  }
  if (in.bad()) return Status::IOError(name + ": read failed");
  return loader->Flush(true);
}

// The exit code of a dump header that cannot be used: Unsupported is a dump
// of a newer format or of a family this build lacks.
int HeaderExitCode(const Status& status) {
  return status.IsUnsupported() ? kExitUnsupported : ExitCodeFor(status);
}

// --create: the dump header on the first line of `in` (read here) and the
// options of the table it describes.
Status ReadCreateHeader(std::istream& in, const std::string& name, std::string* header,
                        TableOptions* options) {
  const std::string where = name + ":1: ";
  if (!std::getline(in, *header) || !IsDumpHeader(*header)) {
    return Status::InvalidArgument(where +
                                   "--create needs a dump header ('# gpkv-dump ...', as gpkv "
                                   "dump writes it) on the first line");
  }
  return OptionsFromDumpHeader(*header, where, options);
}

// Opens args.table; with --create, when the pool has no table of that name,
// creates it with `options` (*created says so), and otherwise checks the
// dump `header` against it. On failure prints the error and returns its exit
// code in *exit_code.
bool OpenOrCreateTable(const LoadArgs& args, const std::string& name, const std::string& header,
                       const TableOptions& options, OpenedTable* opened, bool* created,
                       int* exit_code) {
  if (!args.create) return OpenTableOrFail("load", args.table, opened, exit_code);
  Result<std::unique_ptr<DB>> db = OpenPool(args.table.pool);
  if (!db.ok()) {
    *exit_code = FailOpen("load", args.table.pool.path, db.status());
    return false;
  }
  opened->db = std::move(*db);
  Result<Table*> table = opened->db->OpenTable(args.table.table);
  *created = table.status().IsNotFound();
  if (*created) table = opened->db->CreateTable(args.table.table, options);
  if (!table.ok()) {
    *exit_code = Fail("load", table.status());
    return false;
  }
  opened->table = *table;
  opened->key_size = opened->table->options().key_size;
  opened->value_size = opened->table->options().value_size;
  if (*created) return true;
  Status checked = CheckDumpHeader(header, name + ":1: ", args.table.table, opened->key_size,
                                   opened->value_size);
  if (checked.ok()) return true;
  PrintError("load", checked.ToString());
  *exit_code = HeaderExitCode(checked);
  return false;
}

int RunLoad(const LoadArgs& args) {
  if (args.file.empty() == (args.count == 0)) {
    PrintError("load", "give either --count N (generated pairs) or --file F");
    return kExitUsage;
  }
  std::ifstream file;
  if (!args.file.empty() && args.file != "-") {
    file.open(args.file);
    if (!file) {
      PrintError("load", "cannot open '" + args.file + "'");
      return kExitError;
    }
  }
  std::istream& in = args.file == "-" ? std::cin : file;
  const std::string name = args.file == "-" ? "<stdin>" : args.file;
  std::string header;
  TableOptions options;
  if (args.create) {
    Status read = ReadCreateHeader(in, name, &header, &options);
    if (!read.ok()) {
      PrintError("load", read.ToString());
      return HeaderExitCode(read);
    }
  }
  int exit_code = kExitOk;
  OpenedTable opened;
  bool created = false;
  if (!OpenOrCreateTable(args, name, header, options, &opened, &created, &exit_code)) {
    return exit_code;
  }

  Progress progress("load", args.count);
  BatchLoader loader(opened.table, opened.key_size, opened.value_size, args.batch, &progress);
  auto start = std::chrono::steady_clock::now();
  Status status;
  if (args.file.empty()) {
    status = LoadGenerated(args, opened.key_size, opened.value_size, &loader);
  } else {
    status =
        LoadLines(in, name, args, opened.key_size, opened.value_size, args.create ? 1 : 0, &loader);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.Finish();
  if (!status.ok()) {
    PrintError("load", status.ToString() + " (" + std::to_string(loader.loaded()) +
                           " pairs were loaded before)");
    return HeaderExitCode(status);
  }
  double rate = seconds > 0 ? static_cast<double>(loader.loaded()) / seconds : 0.0;
  if (args.json) {
    PrintJson({{"table", args.table.table},
               {"created", created},
               {"pairs", loader.loaded()},
               {"seconds", seconds},
               {"keys_per_second", rate}});
  } else {
    if (created) {
      std::printf("created table '%s' from the dump header\n", args.table.table.c_str());
    }
    std::printf("loaded %llu pairs into '%s' in %.3f s: %.0f keys/s\n",
                static_cast<unsigned long long>(loader.loaded()), args.table.table.c_str(), seconds,
                rate);
  }
  return CloseAfterWrite("load", *opened.db, kExitOk);
}

}  // namespace

void RegisterLoadCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<LoadArgs>();
  CLI::App* cmd = app.add_subcommand("load", "load generated pairs or pairs from a file");
  cmd->footer(
      "Puts go in durable batches. --count generates pairs from --seed; --file reads\n"
      "'KEY VALUE' lines (the format gpkv dump prints; blank and # lines skipped; a bad\n"
      "line stops the load, batches before it stay). A dump's header line names its\n"
      "key and value sizes: a dump of other sizes than the table's is a usage error\n"
      "(exit 1), one of a newer dump format exit 5; a file without the header loads\n"
      "too, each number checked against the table's sizes. With --create, a table the\n"
      "pool does not have is created from the header on the file's first line (kind,\n"
      "durability, sizes, expected keys and the family's options, as gpkv dump wrote\n"
      "them; an older header's missing options take the defaults); an existing table\n"
      "is checked against the header as without it. Progress shows on a terminal;\n"
      "the rate is printed at the end. A volatile table holds the pairs only while\n"
      "this command runs (it is empty at the next open): load is then a benchmark.\n"
      "Examples: gpkv load pool.gpkv users --count 1M\n"
      "          gpkv dump old.gpkv users | gpkv load new.gpkv users --file - --create");
  AddTableArgs(cmd, &args->table, /*can_write=*/true);
  CLI::Option* count =
      cmd->add_option("--count", args->count, "generate N pairs (K, M, G suffixes: 1024s)")
          ->transform(CLI::AsSizeValue(false));
  CLI::Option* file = cmd->add_option("--file", args->file, "read pairs from F (- for stdin)");
  count->excludes(file);
  cmd->add_flag("--create", args->create,
                "create the table from the dump header on the file's first line if the pool has "
                "none of that name")
      ->needs(file);
  cmd->add_option("--seed", args->seed, "seed of generated keys and values")->capture_default_str();
  cmd->add_flag("--sequential", args->sequential,
                "generated keys are --start, --start + 1, ... instead of random");
  cmd->add_option("--start", args->start, "first key of --sequential")->capture_default_str();
  cmd->add_option("--batch", args->batch, "pairs per Put batch")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--json", args->json,
                "print {\"table\", \"created\", \"pairs\", \"seconds\", \"keys_per_second\"} "
                "at the end");
  cmd->callback([args, exit_code]() { *exit_code = RunLoad(*args); });
}

}  // namespace gpkv::tools
