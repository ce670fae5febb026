// `gpkv verify POOL [--json]`: read-only check of the whole pool; exit 2 when
// it finds corruption.
// `gpkv repair POOL [--json] [--dry-run]`: recovery, then repair of what
// verify reports; prints what it changed (with --dry-run, what it would
// change, found by repairing a private copy of the pool).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "recovery/verify.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/pool_copy.h"
#include "tools/pool_format.h"
#include "tools/progress.h"
#include "tools/report_output.h"
#include "tools/table_json.h"

namespace gpkv::tools {
namespace {

struct CheckArgs {
  std::string path;
  bool json = false;
  bool dry_run = false;  // repair only
};

// `text` with every `from` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Verify and repair cannot check a format they do not know; that is not
// damage. Prints why and returns true for a pool of another format version.
bool RefuseForeignFormat(const std::string& command, const std::string& path, int* exit_code) {
  uint32_t format_version = ForeignPoolFormat(path);
  if (format_version == 0) return false;
  PrintError(command, ForeignPoolFormatText(path, format_version));
  *exit_code = kExitUnsupported;
  return true;
}

recovery::ProgressFn ProgressTo(Progress* progress) {
  return [progress](uint64_t done, uint64_t total) {
    progress->set_total(total);
    progress->Update(done);
  };
}

int RunVerify(const CheckArgs& args) {
  int exit_code = kExitOk;
  if (RefuseForeignFormat("verify", args.path, &exit_code)) return exit_code;
  Progress progress("verify", 0);
  Result<recovery::Report> report = recovery::VerifyPool(args.path, ProgressTo(&progress));
  progress.Finish();
  if (!report.ok()) return Fail("verify", report.status());
  bool corrupt = report->HasCorruption();
  if (args.json) {
    PrintJson(ReportJson(*report));
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

// Repair on a private copy of the pool (ScratchPoolCopy): the report names
// the pool, not the copy.
Result<recovery::Report> RepairCopy(const std::string& path, Progress* progress) {
  ScratchPoolCopy copy;
  GPKV_RETURN_IF_ERROR(copy.Make(path));
  Result<recovery::Report> report = recovery::RepairPool(copy.path(), ProgressTo(progress));
  if (!report.ok()) {
    return Status(report.status().code(), ReplaceAll(report.status().message(), copy.path(), path));
  }
  report->path = path;
  for (recovery::Finding& finding : report->findings) {
    finding.message = ReplaceAll(finding.message, copy.path(), path);
  }
  return report;
}

int RunRepair(const CheckArgs& args) {
  int exit_code = kExitOk;
  if (RefuseForeignFormat("repair", args.path, &exit_code)) return exit_code;
  Progress progress("repair", 0);
  Result<recovery::Report> report = args.dry_run
                                        ? RepairCopy(args.path, &progress)
                                        : recovery::RepairPool(args.path, ProgressTo(&progress));
  progress.Finish();
  if (!report.ok()) return FailOpen("repair", args.path, report.status());
  const recovery::Report& r = *report;
  const bool changed = RepairChanged(r);
  if (args.json) {
    nlohmann::ordered_json json = ReportJson(r);
    json["dry_run"] = args.dry_run;
    json["changed"] = changed;
    PrintJson(json);
  } else {
    PrintFindingsText(r);
    PrintRepairCounts(r);
    const char* verdict = !changed       ? "nothing to repair"
                          : args.dry_run ? "repair would change it (dry run: nothing was written)"
                                         : "repaired";
    std::printf("%s: %s\n", args.path.c_str(), verdict);
  }
  // A dry run tells by its exit code whether repair has work to do.
  return args.dry_run && changed ? kExitCorruption : kExitOk;
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
      "the pool (\"written by a newer gpkv\": this build cannot check it).\n"
      "JSON: path, corruption, extents, used_bytes, superblock_generation, tables\n"
      "(name, id, keys, slots_scanned, ...) and findings (severity, region, offset,\n"
      "message).");
  cmd->add_option("pool", args->path, "pool file")->required();
  cmd->add_flag("--json", args->json, "print the report as one JSON document");
  cmd->callback([args, exit_code]() { *exit_code = RunVerify(*args); });
}

void RegisterRepairCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("repair", "recover a pool and repair what verify reports");
  cmd->footer(
      "Runs open-time recovery, then rewrites a bad superblock from the good one, drops\n"
      "catalog entries and slots that cannot be trusted and frees unreachable extents.\n"
      "Prints what it changed. Dropped data is gone: copy the pool first.\n"
      "--dry-run says what repair would change and writes nothing to the pool: it\n"
      "copies the pool (under a shared lock, as a read-only open: busy while another\n"
      "process writes it) to a private file in $TMPDIR (else /tmp; pages of zeros are\n"
      "not copied), repairs the copy, reports, and deletes the copy. It exits 0 when\n"
      "there is nothing to repair, 2 when repair would change the pool.\n"
      "JSON: verify's fields, the counts (slots_cleared, duplicates_removed,\n"
      "cells_reclaimed, extents_freed, tables_dropped), dry_run and changed.");
  cmd->add_option("pool", args->path, "pool file")->required();
  cmd->add_flag("--json", args->json, "print the report as one JSON document");
  cmd->add_flag("--dry-run", args->dry_run,
                "report what repair would change without writing the pool (repairs a private "
                "copy)");
  cmd->callback([args, exit_code]() { *exit_code = RunRepair(*args); });
}

}  // namespace gpkv::tools
