// pm::Pool: create / open, header and superblock validation, persistence hook.
#include "pm/pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "format/pool_layout.h"
#include "pm/extent_allocator.h"
#include "pm/persist_hook.h"
#include "test_util.h"

namespace gpkv::pm {
namespace {

constexpr uint64_t kSize = 8 << 20;

TEST(Pool, CreateThenOpenKeepsHeaderAndUuid) {
  testutil::TempPool temp("pool");
  std::string uuid;
  {
    auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    uuid = (*pool)->uuid_string();
    EXPECT_EQ((*pool)->size(), kSize);
    EXPECT_EQ((*pool)->superblock().generation, 1u);
  }
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  EXPECT_EQ((*pool)->uuid_string(), uuid);
  EXPECT_EQ(uuid.size(), 36u);
  EXPECT_EQ((*pool)->header().format_version, format::kFormatVersion);
}

TEST(Pool, CreateRefusesAnExistingFile) {
  testutil::TempPool temp("exists");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  auto again = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
  EXPECT_TRUE(again.status().IsAlreadyExists()) << again.status().ToString();
}

TEST(Pool, OpenOfMissingFileIsNotFound) {
  auto pool = Pool::Open("/dev/shm/gpkv-test-does-not-exist", false, SyncMode::kBatch);
  EXPECT_TRUE(pool.status().IsNotFound());
}

TEST(Pool, OpenOfANonPoolFileIsCorruptionNamingTheFile) {
  testutil::TempPool temp("garbage");
  std::ofstream(temp.path()) << std::string(4 << 20, 'x');
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.status().IsCorruption()) << pool.status().ToString();
  EXPECT_NE(pool.status().message().find(temp.path()), std::string::npos);
  EXPECT_NE(pool.status().message().find("bad magic"), std::string::npos);
}

TEST(Pool, HeaderBitFlipIsDetectedByChecksum) {
  testutil::TempPool temp("flip");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  testutil::FlipByte(temp.path(), 70);  // heap_size
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.status().IsCorruption());
  EXPECT_NE(pool.status().message().find("checksum"), std::string::npos)
      << pool.status().ToString();
}

TEST(Pool, NewerFormatVersionIsUnsupported) {
  testutil::TempPool temp("newer");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  testutil::WriteBytes<uint32_t>(temp.path(), 8, format::kFormatVersion + 1);
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  EXPECT_TRUE(pool.status().IsUnsupported()) << pool.status().ToString();
}

TEST(Pool, OlderFormatVersionIsRefusedNamingBothVersions) {
  testutil::TempPool temp("older");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  testutil::WriteBytes<uint32_t>(temp.path(), 8, format::kFormatVersion - 1);
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.status().IsUnsupported()) << pool.status().ToString();
  const std::string& message = pool.status().message();
  EXPECT_NE(message.find("format version " + std::to_string(format::kFormatVersion - 1)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("version " + std::to_string(format::kFormatVersion) + ")"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(temp.path()), std::string::npos) << message;
}

TEST(Pool, TruncatedFileIsCorruption) {
  testutil::TempPool temp("trunc");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  ASSERT_EQ(::truncate(temp.path().c_str(), kSize / 2), 0);
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.status().IsCorruption());
  EXPECT_NE(pool.status().message().find("truncated"), std::string::npos);
}

TEST(Superblock, NewerValidCopyWinsAndTornCopyLoses) {
  testutil::TempPool temp("sb");
  {
    auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    format::Superblock next = (*pool)->superblock();
    next.next_table_id = 42;
    ASSERT_TRUE((*pool)->WriteSuperblock(next).ok());  // generation 2, slot B
  }
  {
    auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok());
    EXPECT_EQ((*pool)->superblock().generation, 2u);
    EXPECT_EQ((*pool)->superblock().next_table_id, 42u);
  }
  // Tear slot B (generation 2): slot A (generation 1) is current again.
  testutil::FlipByte(temp.path(), format::kSuperblockOffset[1] + 30);
  {
    auto pool = Pool::Open(temp.path(), /*read_only=*/true, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    EXPECT_EQ((*pool)->superblock().generation, 1u);
    EXPECT_EQ((*pool)->superblock().next_table_id, 1u);
  }
  // A writable open rewrites the torn copy from the current one (a crash in
  // WriteSuperblock leaves exactly this), so both copies are valid again.
  {
    auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    EXPECT_EQ((*pool)->superblock().generation, 2u);
    EXPECT_EQ((*pool)->superblock().next_table_id, 1u);
  }
  testutil::FlipByte(temp.path(), format::kSuperblockOffset[0] + 30);  // slot A now
  auto pool = Pool::Open(temp.path(), /*read_only=*/true, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok()) << "the rewritten slot B must be valid: " << pool.status().ToString();
  EXPECT_EQ((*pool)->superblock().generation, 2u);
  EXPECT_EQ((*pool)->superblock().next_table_id, 1u);
}

TEST(Superblock, BothCopiesInvalidIsCorruption) {
  testutil::TempPool temp("sb2");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  testutil::FlipByte(temp.path(), format::kSuperblockOffset[0] + 9);
  auto pool = Pool::Open(temp.path(), false, SyncMode::kBatch);
  ASSERT_TRUE(pool.status().IsCorruption());
  EXPECT_NE(pool.status().message().find("superblocks"), std::string::npos);
}

TEST(Pool, CheckRangeRejectsOffsetsOutsideTheHeap) {
  testutil::TempPool temp("range");
  auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  const auto& header = (*pool)->header();
  EXPECT_TRUE((*pool)->CheckRange(header.heap_offset, 4096, "x").ok());
  EXPECT_TRUE((*pool)->CheckRange(0, 8, "x").IsCorruption());
  EXPECT_TRUE((*pool)->CheckRange(kSize - 8, 16, "x").IsCorruption());
  EXPECT_TRUE((*pool)->CheckRange(~uint64_t{0} - 4, 8, "x").IsCorruption());
}

TEST(Pool, ReadOnlyPoolRefusesWrites) {
  testutil::TempPool temp("ro");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  auto pool = Pool::Open(temp.path(), true, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  EXPECT_TRUE((*pool)->read_only());
  EXPECT_TRUE((*pool)->WriteSuperblock((*pool)->superblock()).IsInvalidArgument());
  EXPECT_TRUE((*pool)
                  ->allocator()
                  .Allocate(4096, format::kExtentKindOther, 0)
                  .status()
                  .IsInvalidArgument());
}

TEST(PersistHook, CountsPersistPointsAndStopsAtTheChosenOne) {
  testutil::TempPool temp("hook");
  auto pool = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  uint64_t* word = (*pool)->At<uint64_t>((*pool)->header().heap_offset);
  TEST_CountPersistPoints();
  for (int i = 0; i < 5; ++i) (*pool)->Publish(word, i + 1);
  EXPECT_EQ(TEST_PersistPointCount(), 5u);
  TEST_SetPersistHook(nullptr, nullptr);

  pid_t child = fork();
  if (child == 0) {
    TEST_CrashAtPersistPoint(2);
    for (int i = 0; i < 5; ++i) (*pool)->Publish(word, 100 + i);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kCrashExitCode);
  EXPECT_EQ(*word, 102u);  // the store of point 2 happened, later ones did not
}

}  // namespace
}  // namespace gpkv::pm
