// Which operation of a write batch counts for a key the batch holds more than
// once: of a put batch the last put of the key (the value it leaves), of an
// erase batch the first erase (the one that reports whether the key was
// live; the others find it gone). Written once for the core, which picks a
// CPU backend's operations, and the GPU backend, which picks its own.
//
// Who may call: tables/btree/. Thread safety: pure functions.
#pragma once

#include "format/hd.h"

namespace gpkv::btree {

// Whether the operation at one position of a batch in stable ascending key
// order counts. `puts`: the batch puts (else it erases); `same_as_previous`,
// `same_as_next`: the key at the position before, after it is the same key.
GPKV_HD bool OperationCounts(bool puts, bool same_as_previous, bool same_as_next) {
  return puts ? !same_as_next : !same_as_previous;
}

}  // namespace gpkv::btree
