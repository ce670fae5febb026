// pm::Pool: create / open, the pool file's lock, header and superblock
// validation, persistence hook.
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

// The lock belongs to the open, not the process: a second writable open in
// the same process is refused as another process's would be.
TEST(PoolLock, ASecondWritableOpenIsBusyAndNamesThePool) {
  testutil::TempPool temp("lock-ww");
  auto writer = Pool::Create(temp.path(), kSize, SyncMode::kBatch);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  auto second = Pool::Open(temp.path(), /*read_only=*/false, SyncMode::kBatch);
  ASSERT_TRUE(second.status().IsBusy()) << second.status().ToString();
  const std::string& message = second.status().message();
  EXPECT_NE(message.find(temp.path()), std::string::npos) << message;
  EXPECT_NE(message.find("another process (or another open in this process)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("open for writing"), std::string::npos) << message;
  auto reader = Pool::Open(temp.path(), /*read_only=*/true, SyncMode::kBatch);
  ASSERT_TRUE(reader.status().IsBusy()) << reader.status().ToString();
  EXPECT_NE(reader.status().message().find("open for writing"), std::string::npos);

  writer.value().reset();  // closing releases the lock
  auto again = Pool::Open(temp.path(), /*read_only=*/false, SyncMode::kBatch);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST(PoolLock, ReadOnlyOpensShareAndKeepWritersOut) {
  testutil::TempPool temp("lock-rr");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  auto first = Pool::Open(temp.path(), /*read_only=*/true, SyncMode::kBatch);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = Pool::Open(temp.path(), /*read_only=*/true, SyncMode::kBatch);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto writer = Pool::Open(temp.path(), /*read_only=*/false, SyncMode::kBatch);
  ASSERT_TRUE(writer.status().IsBusy()) << writer.status().ToString();
  EXPECT_NE(writer.status().message().find("open read-only"), std::string::npos)
      << writer.status().message();

  first.value().reset();
  EXPECT_TRUE(Pool::Open(temp.path(), false, SyncMode::kBatch).status().IsBusy());
  second.value().reset();
  auto alone = Pool::Open(temp.path(), /*read_only=*/false, SyncMode::kBatch);
  EXPECT_TRUE(alone.ok()) << alone.status().ToString();
}

// Another process: a child holds the pool (writable, then read-only) until
// told to close it.
TEST(PoolLock, AnotherProcessHoldsThePoolUntilItCloses) {
  testutil::TempPool temp("lock-proc");
  ASSERT_TRUE(Pool::Create(temp.path(), kSize, SyncMode::kBatch).ok());
  for (bool child_read_only : {false, true}) {
    SCOPED_TRACE(child_read_only ? "the child reads" : "the child writes");
    int opened[2], release[2];
    ASSERT_EQ(pipe(opened), 0);
    ASSERT_EQ(pipe(release), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto pool = Pool::Open(temp.path(), child_read_only, SyncMode::kBatch);
      char byte = pool.ok() ? 1 : 0;
      if (write(opened[1], &byte, 1) != 1) _exit(2);
      if (read(release[0], &byte, 1) != 1) _exit(3);
      _exit(pool.ok() ? 0 : 1);
    }
    char byte = 0;
    ASSERT_EQ(read(opened[0], &byte, 1), 1);
    ASSERT_EQ(byte, 1) << "the child could not open the pool";
    auto writer = Pool::Open(temp.path(), /*read_only=*/false, SyncMode::kBatch);
    ASSERT_TRUE(writer.status().IsBusy()) << writer.status().ToString();
    EXPECT_NE(writer.status().message().find(child_read_only ? "open read-only" : "for writing"),
              std::string::npos)
        << writer.status().message();
    auto reader = Pool::Open(temp.path(), /*read_only=*/true, SyncMode::kBatch);
    EXPECT_EQ(reader.ok(), child_read_only) << reader.status().ToString();
    if (!child_read_only) EXPECT_TRUE(reader.status().IsBusy()) << reader.status().ToString();
    if (reader.ok()) reader.value().reset();
    ASSERT_EQ(write(release[1], &byte, 1), 1);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int fd : {opened[0], opened[1], release[0], release[1]}) close(fd);
    auto after = Pool::Open(temp.path(), /*read_only=*/false, SyncMode::kBatch);
    EXPECT_TRUE(after.ok()) << after.status().ToString();
  }
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
