// Helpers of the LSM family's tests: opening a pool with an ordered table and
// checking it against a std::map oracle.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "tables/log/slots.h"
#include "tables/lsm/layout.h"
#include "test_util.h"

namespace gpkv::lsmtest {

inline Options PoolOptions(uint64_t pool_size = uint64_t{64} << 20, int threads = 2,
                           Backend backend = Backend::kCpu) {
  return testutil::DbOptions(pool_size, threads, backend);
}

inline TableOptions OrderedOptions(uint64_t batch_entries = 64, uint32_t value_size = 8,
                                   uint32_t key_size = 8) {
  TableOptions options;
  options.kind = TableKind::kOrdered;
  options.key_size = key_size;
  options.value_size = value_size;
  options.ordered.batch_entries = batch_entries;
  return options;
}

using Oracle = std::map<uint64_t, uint64_t>;

// Every pair of the table in key order (Scan), as a map.
inline Oracle Contents(Table& table) {
  Oracle contents;
  uint64_t previous = 0;
  bool first = true;
  Status status = table.Scan([&](const uint8_t* key, const uint8_t* value) {
    uint64_t k, v = 0;
    std::memcpy(&k, key, 8);
    std::memcpy(&v, value, std::min<uint32_t>(8, table.options().value_size));
    EXPECT_TRUE(first || k > previous) << "scan out of order at key " << k;
    first = false;
    previous = k;
    contents[k] = v;
    return true;
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return contents;
}

// The root of a pool's one table, from the current superblock's catalog.
inline uint64_t RootOffset(const std::string& path) {
  auto superblock_a = testutil::ReadBytes<format::Superblock>(path, format::kSuperblockOffset[0]);
  auto superblock_b = testutil::ReadBytes<format::Superblock>(path, format::kSuperblockOffset[1]);
  const format::Superblock& current =
      superblock_a.generation > superblock_b.generation ? superblock_a : superblock_b;
  auto entry = testutil::ReadBytes<format::CatalogEntry>(
      path, current.catalog_offset + sizeof(format::CatalogHeader));
  return entry.root_offset;
}

inline lsm::LsmRoot ReadRoot(const std::string& path) {
  return testutil::ReadBytes<lsm::LsmRoot>(path, RootOffset(path));
}

inline const lsm::Manifest& Active(const lsm::LsmRoot& root) {
  return root.manifests[log::ActiveIndex(root.active_manifest)];
}

// Rewrites the one log record of the pool's one table (a columnar record of
// puts, 8-byte keys and values) as the row record a pool written before
// columnar records existed would hold, and republishes the log word.
inline void RewriteLogAsRowRecord(const std::string& path) {
  const uint64_t root_offset = RootOffset(path);
  const lsm::LsmRoot root = ReadRoot(path);
  auto header = testutil::ReadBytes<log::RecordHeader>(path, root.log_offset);
  ASSERT_EQ(header.flags, log::kRecordColumnar);
  ASSERT_EQ(log::WordBytes(root.log_word), log::ColumnarRecordBytes(header.count, 8, 8, false));
  const uint64_t keys_at = root.log_offset + log::kRecordHeaderSize;
  std::vector<uint64_t> entries;
  for (uint64_t i = 0; i < header.count; ++i) {
    entries.push_back(testutil::ReadBytes<uint64_t>(path, keys_at + i * 8));
    entries.push_back(lsm::MakeMeta(header.seq, false));
    entries.push_back(testutil::ReadBytes<uint64_t>(path, keys_at + (header.count + i) * 8));
  }
  header.flags = 0;
  log::WordsChecksumState state =
      log::WordsChecksumBegin(log::RecordSeed(Active(root).log_epoch, header));
  log::WordsChecksumAdd(state, entries.data(), entries.size());
  header.checksum = log::WordsChecksumEnd(state);
  testutil::WriteBytes(path, root.log_offset, header);
  for (size_t i = 0; i < entries.size(); ++i) {
    testutil::WriteBytes(path, keys_at + i * 8, entries[i]);
  }
  testutil::WriteBytes(
      path, root_offset + offsetof(lsm::LsmRoot, log_word),
      log::MakeWord(Active(root).log_epoch, log::RowRecordBytes(header.count, 8, 8)));
}

}  // namespace gpkv::lsmtest
