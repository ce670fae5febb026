#include "tables/log/record.h"

#include <cstring>

namespace gpkv::log {

RecordHeader ColumnarRecordHeader(uint64_t seq, uint64_t count, bool tombstones) {
  RecordHeader header{};
  header.seq = seq;
  header.count = static_cast<uint32_t>(count);
  header.flags = kRecordColumnar | (tombstones ? kRecordTombstones : 0);
  return header;
}

RecordArrays ColumnarRecordArrays(pm::Pool& pool, uint64_t record_offset,
                                  const RecordHeader& header, uint32_t key_size) {
  uint8_t* keys = pool.At<uint8_t>(record_offset) + kRecordHeaderSize;
  return {keys, HasTombstones(header.flags) ? nullptr : keys + uint64_t{header.count} * key_size};
}

uint64_t FinishRecord(pm::Pool& pool, uint64_t record_offset, const RecordHeader& header,
                      uint32_t key_size, uint32_t value_size) {
  const uint64_t record_bytes =
      ColumnarRecordBytes(header.count, key_size, value_size, HasTombstones(header.flags));
  uint8_t* record = pool.At<uint8_t>(record_offset);
  uint8_t* values = ColumnarRecordArrays(pool, record_offset, header, key_size).values;
  if (values != nullptr) {
    const uint64_t value_bytes = uint64_t{header.count} * value_size;
    std::memset(values + value_bytes, 0, AlignUp8(value_bytes) - value_bytes);
  }
  std::memcpy(record, &header, sizeof(header));
  pool.Persist(record, record_bytes);
  return record_bytes;
}

}  // namespace gpkv::log
