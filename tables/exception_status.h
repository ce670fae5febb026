// tables::StatusOfCurrentException: the one place where an exception that a
// library a CPU backend runs on throws (libcuckoo, Abseil's btree_map, the
// standard containers) becomes a Status, so that no exception leaves a
// backend. std::bad_alloc is OutOfDeviceMemory (RAM is a CPU table's device
// memory); any other exception is IOError with its what().
//
// Who may call: the families' CPU backends, inside a catch block.
// Thread safety: any thread.
#pragma once

#include <string>

#include "gpkv/status.h"

namespace gpkv::tables {

// The exception being handled, as a Status whose message starts with
// `where`. REQUIRES: called while an exception is being handled (in a catch
// block or a function it calls).
Status StatusOfCurrentException(const std::string& where);

}  // namespace gpkv::tables
