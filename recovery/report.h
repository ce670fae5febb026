// Reports of recovery, verify and repair, shared by the engine, the tools and
// the tests. Plain data; the tools print them as text or JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpkv::recovery {

// One thing verify found, or one thing repair or recovery changed.
struct Finding {
  enum class Severity : uint8_t {
    kInfo,         // a fact (e.g. "resize in progress, resumed at open")
    kRecoverable,  // state a crash leaves and open-time recovery clears
    kCorruption,   // bytes no sequence of gpkv operations and crashes can leave
  };
  Severity severity = Severity::kCorruption;
  std::string region;   // "header", "superblock A", "catalog", "table 'users' bucket 17", ...
  uint64_t offset = 0;  // pool offset of the bytes concerned
  std::string message;  // full text, naming file, table and offset
};

struct TableReport {
  std::string name;
  uint64_t table_id = 0;
  uint64_t keys = 0;  // VALID slots counted (after duplicate resolution)
  uint64_t slots_scanned = 0;
  uint64_t reserved_slots = 0;   // INSERT slots (a crash's leftovers)
  uint64_t duplicate_slots = 0;  // losers of duplicate resolution
  uint64_t value_cells_in_use = 0;
  uint64_t value_cells_unreferenced = 0;
  bool resizing = false;
};

struct Report {
  std::string path;
  std::vector<Finding> findings;
  std::vector<TableReport> tables;
  uint64_t extents = 0;
  uint64_t used_bytes = 0;
  uint64_t superblock_generation = 0;
  // Repair / recovery only: what was changed.
  uint64_t slots_cleared = 0;  // reserved slots cleared, corrupt slots dropped
  uint64_t duplicates_removed = 0;
  uint64_t cells_reclaimed = 0;
  uint64_t extents_freed = 0;
  uint64_t tables_dropped = 0;

  bool HasCorruption() const {
    for (const Finding& f : findings) {
      if (f.severity == Finding::Severity::kCorruption) return true;
    }
    return false;
  }
};

// Progress of a long scan: (done, total) in units the caller does not need
// to know (slots). Called from one thread, at most every few milliseconds.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

}  // namespace gpkv::recovery
