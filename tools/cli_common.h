// Helpers shared by the commands of the gpkv tool: exit codes, error
// printing, opening a pool from command-line options, and names of table
// kinds. Used only by tools/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpkv/db.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "tables/registry.h"

namespace CLI {
class App;
}

namespace gpkv::tools {

// Exit codes of every gpkv command (the README's table of exit codes; the
// help of `gpkv` lists them too).
constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;        // the command line is wrong
constexpr int kExitCorruption = 2;   // the pool is corrupt (verify: corruption found)
constexpr int kExitError = 3;        // anything else (busy, needs recovery, I/O, pool full, ...)
constexpr int kExitNotFound = 4;     // the pool file, table or key named does not exist
constexpr int kExitUnsupported = 5;  // the pool is of a format version this build does not read

// The exit code for a failed Status: 2 for corruption, 1 for an argument the
// library refused, 4 for not found, 3 otherwise (Busy included: another
// process holds the pool).
int ExitCodeFor(const Status& status);

// Prints "gpkv: <command>: <message>" to stderr.
void PrintError(const std::string& command, const std::string& message);

// status.ToString(), and for NeedsRecovery what to run about it.
std::string ErrorText(const Status& status);

// Prints the error of `status` (ErrorText) and returns its exit code.
// REQUIRES: !status.ok().
int Fail(const std::string& command, const Status& status);

// Fail for an open of the pool file at `path`, telling a pool of a format
// version this build does not read (exit 5, "written by a newer gpkv ...")
// from the other errors.
// REQUIRES: !status.ok().
int FailOpen(const std::string& command, const std::string& path, const Status& status);

// How a command opens its pool.
struct PoolArgs {
  std::string path;
  bool read_only = false;
  bool write = false;            // --write: overrides read_only
  std::string backend = "auto";  // auto | cpu | cuda
  int cuda_device = 0;           // Options::cuda_device
  int threads = 0;               // CPU worker threads; 0 = all
};

// Adds POOL (positional, required) and the options of opening a pool to cmd.
// `can_write`: whether the command writes. A command that does not opens the
// pool read-only unless --write is given (then open-time recovery runs).
void AddPoolArgs(CLI::App* cmd, PoolArgs* args, bool can_write);

// Closes a DB a command wrote to (DB::Close: a pending checkpoint, the final
// sync): `exit_code` when that is OK, else the close error's (printed).
int CloseAfterWrite(const std::string& command, DB& db, int exit_code);

// Opens an existing pool (never creates one).
Result<std::unique_ptr<DB>> OpenPool(const PoolArgs& args);

// "hash" / "ordered", "persistent" / "volatile" (the registry's names).
using tables::DurabilityName;
using tables::KindName;

// "1.50 GiB" style, for people.
std::string HumanBytes(uint64_t bytes);

}  // namespace gpkv::tools
