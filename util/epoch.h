// util::EpochManager: epoch-based reclamation for host code: when a slot or
// value cell that a batch unlinked may be reused (the CPU GPHash backend's
// slots and cells, the GPU backend's cells). Knows no table family.
//
// Why: a batch may still hold a reference to a slot or a value cell that a
// concurrent batch has just unlinked (a reader between its two seqlock reads,
// an updater about to store a value word). Reusing that slot or cell at once
// would let the late access land on someone else's key: a reader could copy a
// value cell another writer is refilling (a mix of two values), or an inline
// update could overwrite the value of a new key in a reused slot.
//
// How: every batch announces the global epoch when it starts (Enter) and
// withdraws when it ends (Leave). Unlinked things are retired with the global
// epoch read after they were unlinked (their tag); they are reused only once
// SafeBound() > tag, i.e. once every batch that was active at retire time has
// left. A retired slot stays reserved (INSERT, invisible to lookups and
// cleared by recovery after a crash) until then; a retired cell stays out of
// the free list. Batches enter and leave once per batch, not per operation.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpkv::util {

class EpochManager {
 public:
  static constexpr int kRecords = 64;

  // Announces the current epoch; returns the ticket for Leave. Yields while
  // all kRecords announcement records are taken.
  int Enter();
  void Leave(int ticket);

  // The epoch to tag an item with after it was unlinked.
  uint64_t Current() const { return global_.load(std::memory_order_seq_cst); }
  // Starts a new epoch (once per write batch).
  void Advance() { global_.fetch_add(1, std::memory_order_seq_cst); }
  // Items tagged below this are unreachable by every batch active now.
  uint64_t SafeBound() const;

 private:
  struct alignas(64) Record {
    std::atomic<uint64_t> epoch{0};  // 0: free; else the epoch its batch entered in
  };
  std::atomic<uint64_t> global_{1};
  Record records_[kRecords];
};

}  // namespace gpkv::util
