#include "tables/gphash/logged/image_writer.h"

#include <cstring>
#include <utility>
#include <vector>

#include "tables/exception_status.h"
#include "tables/gphash/logged/key_order.h"
#include "tables/gphash/logged/layout.h"
#include "tables/gphash/logged/root.h"

namespace gpkv::gphash::logged {
namespace {

// Below this many pairs one thread gathers them into key order.
constexpr uint64_t kParallelGather = uint64_t{1} << 16;

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
  // image holds. The order comes from a radix sort on threads_ threads:
  // this runs behind the batches and must end before they fill the other
  // log half.
  void SortPairs() {
    const uint64_t entries = place_.entries;
    const std::unique_ptr<uint64_t[]> order = KeyOrder(keys_.data(), entries, key_size_, threads_);
    std::vector<uint8_t> keys(keys_.size()), values(values_.size());
    const uint32_t key_size = key_size_, value_size = value_size_;
    const uint8_t* from_keys = keys_.data();
    const uint8_t* from_values = values_.data();
#pragma omp parallel for num_threads(threads_) schedule(static) if (entries >= kParallelGather)
    for (uint64_t i = 0; i < entries; ++i) {
      std::memcpy(keys.data() + i * key_size, from_keys + order[i] * key_size, key_size);
      std::memcpy(values.data() + i * value_size, from_values + order[i] * value_size, value_size);
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
