#include "tables/gphash/logged/image_writer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "tables/exception_status.h"
#include "tables/gphash/logged/layout.h"
#include "tables/gphash/logged/root.h"

namespace gpkv::gphash::logged {
namespace {

class HostImageWriter final : public ImageWriter {
 public:
  HostImageWriter(pm::Pool& pool, uint64_t table_id, uint32_t key_size, uint32_t value_size,
                  int threads)
      : pool_(pool),
        table_id_(table_id),
        key_size_(key_size),
        value_size_(value_size),
        threads_(threads) {}

  Result<ImagePlace> Scan(Table& index, uint64_t generation) override {
    keys_.clear();
    values_.clear();
    Status scanned;
    try {
      scanned = index.Scan([&](const uint8_t* key, const uint8_t* value) {
        keys_.insert(keys_.end(), key, key + key_size_);
        values_.insert(values_.end(), value, value + value_size_);
        return true;
      });
    } catch (...) {
      scanned = tables::StatusOfCurrentException("the scan of a checkpoint's pairs");
    }
    GPKV_RETURN_IF_ERROR(scanned);
    const uint64_t entries = keys_.size() / key_size_;
    auto offset = ReserveImage(pool_, table_id_, key_size_, value_size_, entries);
    if (!offset.ok()) return offset.status();
    generation_ = generation;
    place_ = {*offset, entries};
    return place_;
  }

  Status Write() override {
    if (place_.offset == 0) return Status::OK();
    try {
      SortPairs();
    } catch (...) {
      return tables::StatusOfCurrentException("the sort of a checkpoint's pairs");
    }
    WriteImage(pool_, place_.offset, table_id_, key_size_, value_size_, generation_,
               {keys_.data(), values_.data(), place_.entries}, threads_);
    // The pairs are not needed again: their memory goes back now.
    std::vector<uint8_t>().swap(keys_);
    std::vector<uint8_t>().swap(values_);
    return Status::OK();
  }

 private:
  // Puts keys_ and values_ in key order (layout.h CompareKeys): what an
  // image holds.
  void SortPairs() {
    const uint64_t entries = place_.entries;
    const uint32_t key_words = key_size_ / 8;
    std::vector<uint64_t> order(entries);
    if (key_words == 1) {
      std::vector<std::pair<uint64_t, uint64_t>> sorted(entries);
      for (uint64_t i = 0; i < entries; ++i) {
        uint64_t key;
        std::memcpy(&key, keys_.data() + i * key_size_, sizeof(key));
        sorted[i] = {key, i};
      }
      std::sort(sorted.begin(), sorted.end());
      for (uint64_t i = 0; i < entries; ++i) order[i] = sorted[i].second;
    } else {
      auto key_at = [&](uint64_t i) {
        std::array<uint64_t, 4> word = {};
        std::memcpy(word.data(), keys_.data() + i * key_size_, key_size_);
        return word;
      };
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
        const auto key_a = key_at(a), key_b = key_at(b);
        return CompareKeys(key_a.data(), key_b.data(), key_words) < 0;
      });
    }
    std::vector<uint8_t> keys(keys_.size()), values(values_.size());
    for (uint64_t i = 0; i < entries; ++i) {
      std::memcpy(keys.data() + i * key_size_, keys_.data() + order[i] * key_size_, key_size_);
      std::memcpy(values.data() + i * value_size_, values_.data() + order[i] * value_size_,
                  value_size_);
    }
    keys_ = std::move(keys);
    values_ = std::move(values);
  }

  pm::Pool& pool_;
  const uint64_t table_id_;
  const uint32_t key_size_;
  const uint32_t value_size_;
  const int threads_;
  std::vector<uint8_t> keys_;
  std::vector<uint8_t> values_;
  uint64_t generation_ = 0;
  ImagePlace place_;
};

}  // namespace

std::unique_ptr<ImageWriter> MakeHostImageWriter(pm::Pool& pool, uint64_t table_id,
                                                 uint32_t key_size, uint32_t value_size,
                                                 int threads) {
  return std::make_unique<HostImageWriter>(pool, table_id, key_size, value_size, threads);
}

Result<ImagePlace> WriteIndexImage(ImageWriter& writer, Table& index, uint64_t generation) {
  auto place = writer.Scan(index, generation);
  if (!place.ok()) return place.status();
  GPKV_RETURN_IF_ERROR(writer.Write());
  return *place;
}

}  // namespace gpkv::gphash::logged
