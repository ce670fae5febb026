// gphash::VerifyGphash: a read-only check that tells crash leftovers
// (kRecoverable) from corruption (kCorruption) and names file, table, bucket
// and offset; gphash::cpu::CpuBackend::Open refuses the same corruption.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "gphash/cpu/gphash_test_util.h"
#include "tables/gphash/check.h"

namespace gpkv::gphash_test {
namespace {

using Severity = recovery::Finding::Severity;

constexpr uint64_t kTableId = 7;

std::vector<uint64_t> Range(uint64_t begin, uint64_t end) {
  std::vector<uint64_t> ids;
  for (uint64_t id = begin; id < end; ++id) ids.push_back(id);
  return ids;
}

uint64_t& Word(TestTable& t, uint64_t offset) { return *t.pool().At<uint64_t>(offset); }

recovery::Report Verify(TestTable& t) {
  recovery::Report report;
  Status status = gphash::VerifyGphash(t.pool(), "t", kTableId, t.root(), report, nullptr);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return report;
}

std::vector<recovery::Finding> Findings(const recovery::Report& report, Severity severity) {
  std::vector<recovery::Finding> out;
  for (const recovery::Finding& finding : report.findings) {
    if (finding.severity == severity) out.push_back(finding);
  }
  return out;
}

std::string HexOf(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%lx", static_cast<unsigned long>(value));
  return text;
}

// A slot holding key `id`, with the table closed (pool still mapped).
SlotAt SlotOf(TestTable& t, uint64_t id) {
  std::vector<SlotAt> slots = FindKey(t.pool(), t.View(), t.Keys({id}).data());
  EXPECT_EQ(slots.size(), 1u);
  return slots[0];
}

TEST(GphashVerify, CleanTableHasNoFindings) {
  TestTable t("verify-clean", Options(16, 40));
  ASSERT_TRUE(t.Put(Range(0, 3000), 1).ok());
  t.Erase(Range(0, 500));
  t.CloseTableOnly();
  uint64_t calls = 0;
  recovery::Report report;
  ASSERT_TRUE(gphash::VerifyGphash(t.pool(), "t", kTableId, t.root(), report,
                                   [&](uint64_t done, uint64_t total) {
                                     EXPECT_LE(done, total);
                                     ++calls;
                                   })
                  .ok());
  EXPECT_TRUE(report.findings.empty());
  ASSERT_EQ(report.tables.size(), 1u);
  EXPECT_EQ(report.tables[0].keys, 2500u);
  EXPECT_EQ(report.tables[0].value_cells_in_use, 2500u);
  EXPECT_EQ(report.tables[0].slots_scanned, t.View().TotalSlots());
  EXPECT_GT(calls, 0u);
}

TEST(GphashVerify, FlippedSlotStateIsCorruptionNamingFileTableBucketAndOffset) {
  TestTable t("verify-state", Options(8, 8));
  ASSERT_TRUE(t.Put(Range(0, 100), 1).ok());
  t.CloseTableOnly();
  SlotAt at = SlotOf(t, 42);
  Word(t, at.word_offset) |= uint64_t{7} << 60;  // state 2 -> 7
  recovery::Report report = Verify(t);
  std::vector<recovery::Finding> corrupt = Findings(report, Severity::kCorruption);
  ASSERT_EQ(corrupt.size(), 1u);
  EXPECT_EQ(corrupt[0].offset, at.word_offset);
  const std::string& message = corrupt[0].message;
  EXPECT_NE(message.find(t.path()), std::string::npos) << message;
  EXPECT_NE(message.find("table 't' level " + std::to_string(at.level) + " bucket " +
                         std::to_string(at.bucket)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(HexOf(at.word_offset)), std::string::npos) << message;
  EXPECT_NE(message.find("slot " + std::to_string(at.slot) + " state 7 is not a valid state"),
            std::string::npos)
      << message;
  EXPECT_EQ(report.tables[0].keys, 99u);
  // Open refuses it with the same words.
  auto opened = gphash::cpu::CpuBackend::Open(t.pool(), "t", t.root(), 1, nullptr);
  ASSERT_TRUE(opened.status().IsCorruption());
  EXPECT_NE(opened.status().message().find("state 7 is not a valid state"), std::string::npos);
  EXPECT_NE(opened.status().message().find(t.path()), std::string::npos);
}

TEST(GphashVerify, EmptySlotWithFingerprintBitsIsCorruption) {
  TestTable t("verify-empty-fp", Options(8, 8));
  ASSERT_TRUE(t.Put(Range(0, 10), 1).ok());
  t.CloseTableOnly();
  auto free_slot = FreeCandidate(t.pool(), t.View(), t.Keys({99}).data(), -1, ~0u, 0);
  ASSERT_TRUE(free_slot.has_value());
  Word(t, free_slot->word_offset) = 0x1234;
  EXPECT_EQ(Findings(Verify(t), Severity::kCorruption).size(), 1u);
}

TEST(GphashVerify, MisplacedKeyIsCorruption) {
  TestTable t("verify-misplaced", Options(8, 8));
  ASSERT_TRUE(t.Put(Range(0, 100), 1).ok());
  t.CloseTableOnly();
  gphash::GphashView view = t.View();
  SlotAt at = SlotOf(t, 42);
  // Move key 42 to a bucket that is none of its candidates.
  format::KeyHash hash = format::HashKey(t.Keys({42}).data(), 8, view.geo.hash_seed);
  uint64_t wrong = 0;
  for (;; ++wrong) {
    const bool candidate = gphash::IsCandidateBucket(hash, view.geo.hash_locations,
                                                     view.levels[0].bucket_count, wrong);
    uint64_t word = Word(t, Locate(view, 0, wrong, 0).word_offset);
    if (!candidate && word == 0) break;
  }
  SlotAt to = Locate(view, 0, wrong, 0);
  std::memcpy(t.pool().At<uint8_t>(to.key_offset), t.pool().At<uint8_t>(at.key_offset), 8);
  Word(t, to.value_offset) = Word(t, at.value_offset);
  Word(t, to.word_offset) = Word(t, at.word_offset);
  Word(t, at.word_offset) = 0;
  std::vector<recovery::Finding> corrupt = Findings(Verify(t), Severity::kCorruption);
  ASSERT_EQ(corrupt.size(), 1u);
  EXPECT_EQ(corrupt[0].offset, to.word_offset);
  EXPECT_NE(corrupt[0].message.find("candidate buckets"), std::string::npos);
}

TEST(GphashVerify, FingerprintThatDoesNotMatchTheKeyIsCorruption) {
  TestTable t("verify-fp", Options(32, 8));
  ASSERT_TRUE(t.Put(Range(0, 100), 1).ok());
  t.CloseTableOnly();
  SlotAt at = SlotOf(t, 7);
  Word(t, at.word_offset) ^= 1;  // a fingerprint bit
  std::vector<recovery::Finding> corrupt = Findings(Verify(t), Severity::kCorruption);
  ASSERT_EQ(corrupt.size(), 1u);
  EXPECT_NE(corrupt[0].message.find("fingerprint"), std::string::npos);
}

TEST(GphashVerify, BadValueReferencesAreCorruption) {
  TestTable t("verify-ref", Options(8, 100));
  ASSERT_TRUE(t.Put(Range(0, 100), 1).ok());
  t.CloseTableOnly();
  gphash::GphashView view = t.View();
  SlotAt misaligned = SlotOf(t, 1);
  SlotAt outside = SlotOf(t, 2);
  SlotAt shared_a = SlotOf(t, 3);
  SlotAt shared_b = SlotOf(t, 4);
  Word(t, misaligned.value_offset) += 8;
  Word(t, outside.value_offset) = view.root_offset;
  Word(t, shared_b.value_offset) = Word(t, shared_a.value_offset);
  recovery::Report report = Verify(t);
  std::vector<recovery::Finding> corrupt = Findings(report, Severity::kCorruption);
  ASSERT_EQ(corrupt.size(), 4u);
  std::vector<uint64_t> offsets;
  for (const recovery::Finding& finding : corrupt) offsets.push_back(finding.offset);
  for (const SlotAt& at : {misaligned, outside, shared_a, shared_b}) {
    EXPECT_NE(std::find(offsets.begin(), offsets.end(), at.word_offset), offsets.end());
  }
  EXPECT_EQ(report.tables[0].keys, 96u);
}

TEST(GphashVerify, InlinePaddingPastTheValueSizeIsCorruption) {
  TestTable t("verify-padding", Options(8, 4));
  ASSERT_TRUE(t.Put(Range(0, 10), 1).ok());
  t.CloseTableOnly();
  Word(t, SlotOf(t, 3).value_offset) |= uint64_t{1} << 40;
  EXPECT_EQ(Findings(Verify(t), Severity::kCorruption).size(), 1u);
}

TEST(GphashVerify, CrashLeftoversAreRecoverableAndVerifyNeverWrites) {
  TestTable t("verify-leftovers", Options(8, 8));
  ASSERT_TRUE(t.Put(Range(0, 100), 1).ok());
  t.CloseTableOnly();
  gphash::GphashView view = t.View();
  // A reserved slot and a duplicate that loses to the original.
  auto reserved = FreeCandidate(t.pool(), view, t.Keys({500}).data(), -1, ~0u, 0);
  ASSERT_TRUE(reserved.has_value());
  Word(t, reserved->word_offset) = gphash::ReserveWord(0);
  SlotAt original = SlotOf(t, 9);
  auto copy = FreeCandidate(t.pool(), view, t.Keys({9}).data(), 1, original.level, original.bucket);
  ASSERT_TRUE(copy.has_value());
  std::memcpy(t.pool().At<uint8_t>(copy->key_offset), t.pool().At<uint8_t>(original.key_offset), 8);
  Word(t, copy->value_offset) = 5;
  Word(t, copy->word_offset) = Word(t, original.word_offset);
  t.Close();

  std::ifstream before_file(t.path(), std::ios::binary);
  std::string before((std::istreambuf_iterator<char>(before_file)), {});
  auto pool = pm::Pool::Open(t.path(), /*read_only=*/true, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  recovery::Report report;
  ASSERT_TRUE(gphash::VerifyGphash(**pool, "t", kTableId, t.root(), report, nullptr).ok());
  EXPECT_FALSE(report.HasCorruption());
  EXPECT_EQ(Findings(report, Severity::kRecoverable).size(), 2u);
  EXPECT_EQ(report.tables[0].reserved_slots, 1u);
  EXPECT_EQ(report.tables[0].duplicate_slots, 1u);
  EXPECT_EQ(report.tables[0].keys, 100u);
  // A read-only open writes nothing and answers as the recovered table does:
  // the gets and the scan of a writable open of a copy of the file.
  const std::vector<uint8_t> keys = t.Keys(Range(0, 600));
  auto read_only = gphash::cpu::CpuBackend::Open(**pool, "t", t.root(), 1, nullptr);
  ASSERT_TRUE(read_only.ok()) << read_only.status().ToString();
  const Answers answered = AnswersOf(**read_only, keys);
  EXPECT_EQ(answered.pairs.size(), 100u);
  ASSERT_TRUE(answered.gets[9].has_value());
  EXPECT_EQ(*answered.gets[9], t.Values({9}, {1}));
  EXPECT_FALSE(answered.gets[500].has_value());
  read_only->reset();
  pool->reset();
  std::ifstream after_file(t.path(), std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(after_file)), {});
  EXPECT_TRUE(before == after);

  testutil::TempPool copied("verify-leftovers-copy");
  ASSERT_EQ(std::system(("cp " + t.path() + " " + copied.path()).c_str()), 0);
  auto writable = pm::Pool::Open(copied.path(), /*read_only=*/false, SyncMode::kBatch);
  ASSERT_TRUE(writable.ok());
  recovery::Report recovered;
  auto recovering = gphash::cpu::CpuBackend::Open(**writable, "t", t.root(), 1, &recovered);
  ASSERT_TRUE(recovering.ok()) << recovering.status().ToString();
  EXPECT_EQ(recovered.slots_cleared + recovered.duplicates_removed, 2u);
  EXPECT_TRUE(AnswersOf(**recovering, keys) == answered);
}

TEST(GphashVerify, UntrustworthyRootIsCorruption) {
  TestTable t("verify-root", Options(8, 8));
  ASSERT_TRUE(t.Put(Range(0, 10), 1).ok());
  t.CloseTableOnly();
  auto* root = t.pool().At<gphash::GphashRoot>(t.root());
  struct Case {
    const char* name;
    uint64_t* field;
    uint64_t flip;
    const char* says;
  };
  for (Case c : {Case{"magic", &root->magic, 1, "bad magic"},
                 Case{"seed", &root->hash_seed, 1, "checksum mismatch"},
                 Case{"active", &root->active_levelset, 1, "LevelSet"},
                 Case{"level offset", &root->levelsets[0].levels[1].offset, 0x1000, "LevelSet"},
                 Case{"levelset generation", &root->levelsets[0].generation, 2, "LevelSet"}}) {
    *c.field ^= c.flip;
    recovery::Report report;
    Status status = gphash::VerifyGphash(t.pool(), "t", kTableId, t.root(), report, nullptr);
    EXPECT_TRUE(status.IsCorruption()) << c.name;
    EXPECT_NE(status.message().find(c.says), std::string::npos)
        << c.name << ": " << status.message();
    EXPECT_NE(status.message().find("table 't' root"), std::string::npos) << status.message();
    EXPECT_TRUE(gphash::GphashExtents(t.pool(), "t", t.root(), /*require_allocated=*/true)
                    .status()
                    .IsCorruption());
    EXPECT_TRUE(
        gphash::cpu::CpuBackend::Open(t.pool(), "t", t.root(), 1, nullptr).status().IsCorruption());
    *c.field ^= c.flip;
  }
  EXPECT_TRUE(Verify(t).findings.empty());
}

TEST(GphashVerify, ReferencedExtentsAreRootLevelsAndChunks) {
  TestTable t("verify-extents", Options(8, 64));
  auto extents = gphash::GphashExtents(t.pool(), "t", t.root(), /*require_allocated=*/true);
  ASSERT_TRUE(extents.ok());
  ASSERT_EQ(extents->size(), 1u + 2u + 1u);
  EXPECT_EQ((*extents)[0].offset, t.root());
  EXPECT_EQ((*extents)[0].kind, format::kExtentKindTableRoot);
  EXPECT_EQ((*extents)[3].kind, format::kExtentKindValueChunk);
}

}  // namespace
}  // namespace gpkv::gphash_test
