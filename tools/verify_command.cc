// `gpkv verify POOL [--json]`: read-only check of the whole pool; exit 2 when
// it finds corruption.
// `gpkv repair POOL [--json]`: recovery, then repair of what verify reports;
// prints what it changed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "recovery/verify.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/pool_format.h"
#include "tools/progress.h"
#include "tools/report_output.h"

namespace gpkv::tools {
namespace {

struct CheckArgs {
  std::string path;
  bool json = false;
};

void PrintJson(const recovery::Report& report) {
  std::printf("%s\n", ReportJson(report)
                          .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                          .c_str());
}

int RunVerify(const CheckArgs& args) {
  // Verify cannot check a format it does not know; that is not damage.
  if (uint32_t format_version = ForeignPoolFormat(args.path)) {
    PrintError("verify", ForeignPoolFormatText(args.path, format_version));
    return kExitUnsupported;
  }
  Progress progress("verify", 0);
  Result<recovery::Report> report =
      recovery::VerifyPool(args.path, [&progress](uint64_t done, uint64_t total) {
        progress.set_total(total);
        progress.Update(done);
      });
  progress.Finish();
  if (!report.ok()) return Fail("verify", report.status());
  bool corrupt = report->HasCorruption();
  if (args.json) {
    PrintJson(*report);
  } else {
    PrintFindingsText(*report);
    std::printf("%s: %s (%s)\n", args.path.c_str(), corrupt ? "CORRUPT" : "ok",
                FindingCounts(*report).c_str());
  }
  if (corrupt) {
    std::fflush(stdout);
    std::fprintf(stderr, "gpkv: verify: %s: corruption found (gpkv repair may salvage it)\n",
                 args.path.c_str());
    return kExitCorruption;
  }
  return kExitOk;
}

int RunRepair(const CheckArgs& args) {
  Progress progress("repair", 0);
  Result<recovery::Report> report =
      recovery::RepairPool(args.path, [&progress](uint64_t done, uint64_t total) {
        progress.set_total(total);
        progress.Update(done);
      });
  progress.Finish();
  if (!report.ok()) return FailOpen("repair", args.path, report.status());
  if (args.json) {
    PrintJson(*report);
    return kExitOk;
  }
  PrintFindingsText(*report);
  const recovery::Report& r = *report;
  std::printf("slots cleared       %llu\n", static_cast<unsigned long long>(r.slots_cleared));
  std::printf("duplicates removed  %llu\n", static_cast<unsigned long long>(r.duplicates_removed));
  std::printf("cells reclaimed     %llu\n", static_cast<unsigned long long>(r.cells_reclaimed));
  std::printf("extents freed       %llu\n", static_cast<unsigned long long>(r.extents_freed));
  std::printf("tables dropped      %llu\n", static_cast<unsigned long long>(r.tables_dropped));
  bool changed = r.slots_cleared || r.duplicates_removed || r.cells_reclaimed || r.extents_freed ||
                 r.tables_dropped || !r.findings.empty();
  std::printf("%s: %s\n", args.path.c_str(), changed ? "repaired" : "nothing to repair");
  return kExitOk;
}

}  // namespace

void RegisterVerifyCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("verify", "check a whole pool, read-only");
  cmd->footer(
      "Checks the header, both superblocks, the extents, the catalog and every slot of\n"
      "every table, and never writes. Prints the findings; exits 2 when there is\n"
      "corruption, 0 otherwise (leftovers of a crash, which open-time recovery\n"
      "clears, are not corruption), 5 when a gpkv of another format version wrote\n"
      "the pool (\"written by a newer gpkv\": this build cannot check it).");
  cmd->add_option("pool", args->path, "pool file")->required();
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([args, exit_code]() { *exit_code = RunVerify(*args); });
}

void RegisterRepairCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("repair", "recover a pool and repair what verify reports");
  cmd->footer(
      "Runs open-time recovery, then rewrites a bad superblock from the good one, drops\n"
      "catalog entries and slots that cannot be trusted and frees unreachable extents.\n"
      "Prints what it changed. Dropped data is gone: copy the pool first.");
  cmd->add_option("pool", args->path, "pool file")->required();
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([args, exit_code]() { *exit_code = RunRepair(*args); });
}

}  // namespace gpkv::tools
