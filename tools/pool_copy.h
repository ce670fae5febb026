// A private copy of a pool file, for `gpkv repair --dry-run`: repair writes
// as it goes, so the dry run repairs the copy and reports what changed there.
#pragma once

#include <string>

#include "gpkv/status.h"

namespace gpkv::tools {

class ScratchPoolCopy {
 public:
  ScratchPoolCopy() = default;
  ~ScratchPoolCopy();  // deletes the copy
  ScratchPoolCopy(const ScratchPoolCopy&) = delete;
  ScratchPoolCopy& operator=(const ScratchPoolCopy&) = delete;

  // Copies the pool file at `source` to a new file in $TMPDIR (else /tmp).
  // Holds a shared lock on the source while it copies, as a read-only open
  // does: Busy when another process has it open for writing. Never writes
  // the source. Pages of zeros stay holes, so the copy takes about the
  // pool's used bytes. NotFound when there is no such file; IOError naming
  // the copy when it cannot be written (set TMPDIR to a roomier place).
  Status Make(const std::string& source);

  // The copy's path; empty before Make succeeds.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gpkv::tools
