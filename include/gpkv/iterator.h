// gpkv::Iterator: ordered reading of an ordered table (TableKind::kOrdered),
// one pair at a time, in the shape LevelDB and RocksDB users know: Seek,
// SeekForPrev, SeekToFirst, SeekToLast, Next, Prev, Valid, key, value,
// status. Made by Table::NewIterator; hash tables answer it with
// Unsupported.
//
// Underneath it reads pages: a Range call of at most
// IteratorOptions::page_size pairs (the next ones after the current page,
// or, moving backwards, the ones before it), so it costs one batch call per
// page whatever the table's family and backend.
//
// What it sees while writes go on: without a snapshot, each page is one
// consistent read of its key range (the table before or after each write
// batch), and pages read later may see later writes: a walk in one
// direction sees every pair that stayed unchanged during it, and each
// changed key at most once, with its value as one page read it. With a
// snapshot (IteratorOptions::snapshot, tables that take them), every page
// reads the snapshot's state: the walk sees exactly that.
//
// Thread safety: an iterator is used by one thread at a time; several
// iterators over one table may run beside each other and beside its
// batches. REQUIRES: the iterator is destroyed before its table is dropped
// or closed, and before the snapshot it reads through is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpkv/batch.h"
#include "gpkv/status.h"

namespace gpkv {

class Snapshot;  // gpkv/table.h

struct IteratorOptions {
  // The keys the iterator visits: lower_bound <= key < upper_bound (each of
  // key_size bytes, as the table orders them), or unbounded on that side
  // when empty. Copied at NewIterator.
  std::vector<uint8_t> lower_bound;
  std::vector<uint8_t> upper_bound;
  // Read the table as this snapshot of it sees it (Table::TakeSnapshot);
  // null: the current contents, page by page.
  const Snapshot* snapshot = nullptr;
  // Pairs read per batch call; at least 1.
  size_t page_size = 1024;
};

class Iterator {
 public:
  virtual ~Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;

  // True when the iterator is at a pair. False after a move past either
  // end or past a bound, and after an error (status() says which).
  virtual bool Valid() const = 0;
  // At the first pair within the bounds.
  virtual void SeekToFirst() = 0;
  // At the last pair within the bounds.
  virtual void SeekToLast() = 0;
  // At the first pair with key >= target (within the bounds).
  // REQUIRES: target holds key_size bytes.
  virtual void Seek(ConstBytes target) = 0;
  // At the last pair with key <= target (within the bounds).
  // REQUIRES: target holds key_size bytes.
  virtual void SeekForPrev(ConstBytes target) = 0;
  // At the next pair. REQUIRES: Valid().
  virtual void Next() = 0;
  // At the previous pair. REQUIRES: Valid().
  virtual void Prev() = 0;
  // The current pair: key_size and value_size bytes, valid until the
  // iterator moves. REQUIRES: Valid().
  virtual ConstBytes key() const = 0;
  virtual ConstBytes value() const = 0;
  // OK, or the error of the last page read (the iterator is then not
  // Valid) or of a call whose arguments were wrong. A seek clears it.
  virtual Status status() const = 0;

 protected:
  Iterator() = default;
};

}  // namespace gpkv
