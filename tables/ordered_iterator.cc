#include "tables/ordered_iterator.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace gpkv::tables {
namespace {

// Keys as the tables order them: unsigned little-endian integers of
// key_size bytes (the last 8-byte word the most significant).
using Key = std::vector<uint8_t>;

int CompareKeys(const uint8_t* a, const uint8_t* b, size_t size) {
  for (size_t i = size; i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

// key + 1, carrying from the least significant byte up; false when key was
// the largest key (it wrapped to zero).
bool Increment(Key* key) {
  for (uint8_t& byte : *key) {
    if (++byte != 0) return true;
  }
  return false;
}

// key - 1, borrowing from the least significant byte up; false when key was
// zero (it wrapped to the largest key).
bool Decrement(Key* key) {
  for (uint8_t& byte : *key) {
    if (byte-- != 0) return true;
  }
  return false;
}

class OrderedIterator final : public Iterator {
 public:
  OrderedIterator(uint32_t key_size, uint32_t value_size, const IteratorOptions& options,
                  ReadPage read_page)
      : key_size_(key_size),
        value_size_(value_size),
        page_size_(options.page_size),
        lowest_(options.lower_bound.empty() ? Key(key_size, 0x00) : options.lower_bound),
        highest_(Key(key_size, 0xff)),
        read_page_(std::move(read_page)) {
    // The exclusive upper bound as an inclusive one; a zero upper bound
    // admits no key.
    if (!options.upper_bound.empty()) {
      highest_ = options.upper_bound;
      if (!Decrement(&highest_)) empty_ = true;
    }
    if (Compare(lowest_, highest_) > 0) empty_ = true;
  }

  bool Valid() const override { return valid_; }

  void SeekToFirst() override { SeekAtOrAfter(lowest_); }
  void SeekToLast() override { SeekAtOrBefore(highest_); }

  void Seek(ConstBytes target) override {
    if (!CheckTarget("Seek", target)) return;
    SeekAtOrAfter(Key(target.bytes(), target.bytes() + key_size_));
  }

  void SeekForPrev(ConstBytes target) override {
    if (!CheckTarget("SeekForPrev", target)) return;
    SeekAtOrBefore(Key(target.bytes(), target.bytes() + key_size_));
  }

  void Next() override {
    if (!valid_) return;
    if (++position_ < pairs_) return;
    Key start(KeyAt(pairs_ - 1), KeyAt(pairs_ - 1) + key_size_);
    if (!more_after_ || !Increment(&start) || Compare(start, highest_) > 0) {
      valid_ = false;
      return;
    }
    ReadForward(start);
  }

  void Prev() override {
    if (!valid_) return;
    if (position_ > 0) {
      --position_;
      return;
    }
    Key end(KeyAt(0), KeyAt(0) + key_size_);
    if (!more_before_ || !Decrement(&end) || Compare(end, lowest_) < 0) {
      valid_ = false;
      return;
    }
    ReadBackward(end);
  }

  ConstBytes key() const override { return ConstBytes(KeyAt(position_), key_size_); }
  ConstBytes value() const override {
    return ConstBytes(page_.values.data() + position_ * value_size_, value_size_);
  }
  Status status() const override { return status_; }

 private:
  int Compare(const Key& a, const Key& b) const {
    return CompareKeys(a.data(), b.data(), key_size_);
  }
  const uint8_t* KeyAt(size_t index) const { return page_.keys.data() + index * key_size_; }

  // False (the iterator invalid, status InvalidArgument) unless target is
  // one key.
  bool CheckTarget(const char* call, ConstBytes target) {
    valid_ = false;
    status_ = Status::OK();
    if (target.size() == key_size_ && target.data() != nullptr) return true;
    status_ = Status::InvalidArgument(std::string("Iterator::") + call + ": the target holds " +
                                      std::to_string(target.size()) + " bytes, a key " +
                                      std::to_string(key_size_));
    return false;
  }

  // At the first pair >= key within the bounds.
  void SeekAtOrAfter(const Key& key) {
    valid_ = false;
    status_ = Status::OK();
    const Key& start = Compare(key, lowest_) < 0 ? lowest_ : key;
    if (empty_ || Compare(start, highest_) > 0) return;
    ReadForward(start);
  }

  // At the last pair <= key within the bounds.
  void SeekAtOrBefore(const Key& key) {
    valid_ = false;
    status_ = Status::OK();
    const Key& end = Compare(key, highest_) > 0 ? highest_ : key;
    if (empty_ || Compare(end, lowest_) < 0) return;
    ReadBackward(end);
  }

  // The page of the smallest keys in [start, highest_], at its first pair.
  // REQUIRES: lowest_ <= start <= highest_.
  void ReadForward(const Key& start) {
    if (!Read(start, highest_, /*largest=*/false)) return;
    position_ = 0;
    more_before_ = Compare(start, lowest_) > 0;
    more_after_ = pairs_ == page_size_;
  }

  // The page of the largest keys in [lowest_, end], at its last pair.
  // REQUIRES: lowest_ <= end <= highest_.
  void ReadBackward(const Key& end) {
    if (!Read(lowest_, end, /*largest=*/true)) return;
    position_ = pairs_ - 1;
    more_before_ = pairs_ == page_size_;
    more_after_ = Compare(end, highest_) < 0;
  }

  // Reads a page; false when it failed (status_ set) or is empty.
  bool Read(const Key& lo, const Key& hi, bool largest) {
    valid_ = false;
    pairs_ = 0;
    // The key may point into page_: lo and hi are copies or members.
    status_ = read_page_(lo.data(), hi.data(), RangeLimit{page_size_, largest}, &page_);
    if (!status_.ok()) return false;
    pairs_ = page_.offsets.size() == 2 ? page_.offsets[1] : 0;
    valid_ = pairs_ != 0;
    return valid_;
  }

  const uint32_t key_size_;
  const uint32_t value_size_;
  const uint64_t page_size_;
  // The bounds, inclusive; empty_: none between them.
  Key lowest_;
  Key highest_;
  bool empty_ = false;
  const ReadPage read_page_;

  Table::RangeResults page_;  // one query's results
  uint64_t pairs_ = 0;        // in page_
  uint64_t position_ = 0;     // of the current pair in page_
  bool valid_ = false;
  // Whether keys beyond the page (within the bounds) may be live, as the
  // page's read saw them.
  bool more_before_ = false;
  bool more_after_ = false;
  Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewOrderedIterator(uint32_t key_size, uint32_t value_size,
                                             const IteratorOptions& options, ReadPage read_page) {
  return std::make_unique<OrderedIterator>(key_size, value_size, options, std::move(read_page));
}

}  // namespace gpkv::tables
