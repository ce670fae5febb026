// gphash::RepairGphash: drops every slot that cannot be trusted, clears
// crash leftovers, reports each change, and leaves a table that verifies
// clean and opens; a root that cannot be trusted is Corruption.
#include <gtest/gtest.h>

#include "gphash/cpu/gphash_test_util.h"
#include "tables/gphash/check.h"

namespace gpkv::gphash_test {
namespace {

using Severity = recovery::Finding::Severity;

constexpr uint64_t kTableId = 7;

uint64_t& Word(TestTable& t, uint64_t offset) { return *t.pool().At<uint64_t>(offset); }

SlotAt SlotOf(TestTable& t, uint64_t id) {
  std::vector<SlotAt> slots = FindKey(t.pool(), t.View(), t.Keys({id}).data());
  EXPECT_EQ(slots.size(), 1u);
  return slots[0];
}

TEST(GphashRepair, DropsUntrustworthySlotsClearsLeftoversAndKeepsTheRest) {
  TestTable t("repair-all", Options(16, 48));
  std::vector<uint64_t> ids;
  for (uint64_t id = 0; id < 300; ++id) ids.push_back(id);
  ASSERT_TRUE(t.Put(ids, 1).ok());
  t.CloseTableOnly();
  gphash::GphashView view = t.View();
  // Corruption: a flipped state, a wrong fingerprint, a misaligned cell
  // reference, two keys sharing a cell.
  Word(t, SlotOf(t, 1).word_offset) |= uint64_t{5} << 60;
  Word(t, SlotOf(t, 2).word_offset) ^= 0x10;
  Word(t, SlotOf(t, 3).value_offset) += 16;
  Word(t, SlotOf(t, 5).value_offset) = Word(t, SlotOf(t, 4).value_offset);
  // Crash leftovers: a reserved slot and a losing duplicate of key 10.
  auto reserved = FreeCandidate(t.pool(), view, t.Keys({1000}).data(), -1, ~0u, 0);
  ASSERT_TRUE(reserved.has_value());
  Word(t, reserved->word_offset) = gphash::ReserveWord(0);
  SlotAt original = SlotOf(t, 10);
  auto copy =
      FreeCandidate(t.pool(), view, t.Keys({10}).data(), 1, original.level, original.bucket);
  ASSERT_TRUE(copy.has_value());
  std::memcpy(t.pool().At<uint8_t>(copy->key_offset), t.pool().At<uint8_t>(original.key_offset),
              16);
  Word(t, copy->value_offset) = Word(t, original.value_offset);  // as an interrupted move
  Word(t, copy->word_offset) = Word(t, original.word_offset);

  recovery::Report report;
  ASSERT_TRUE(gphash::RepairGphash(t.pool(), "t", kTableId, t.root(), report, nullptr).ok());
  EXPECT_EQ(report.slots_cleared, 1u + 5u);  // the reserved slot + keys 1..5
  EXPECT_EQ(report.duplicates_removed, 1u);
  size_t dropped = 0;
  for (const recovery::Finding& finding : report.findings) {
    if (finding.severity == Severity::kCorruption) {
      EXPECT_NE(finding.message.find("slot dropped"), std::string::npos) << finding.message;
      EXPECT_NE(finding.message.find(t.path()), std::string::npos);
      ++dropped;
    }
  }
  EXPECT_EQ(dropped, 5u);
  ASSERT_EQ(report.tables.size(), 1u);
  EXPECT_EQ(report.tables[0].keys, 295u);

  recovery::Report again;
  ASSERT_TRUE(gphash::VerifyGphash(t.pool(), "t", kTableId, t.root(), again, nullptr).ok());
  EXPECT_TRUE(again.findings.empty());
  recovery::Report open_report;
  t.OpenTable(&open_report);
  EXPECT_EQ(open_report.slots_cleared, 0u);
  EXPECT_EQ(t.table().Stats().keys, 295u);
  for (uint64_t id = 1; id <= 5; ++id) EXPECT_FALSE(t.Get({id})[0].has_value()) << id;
  for (uint64_t id = 6; id < 300; ++id) ASSERT_TRUE(t.Holds(id, 1)) << id;
  EXPECT_TRUE(t.Holds(0, 1));
  // The freed cells and slots are usable again.
  ASSERT_TRUE(t.Put({1, 2, 3, 4, 5, 1000}, 2).ok());
  for (uint64_t id : {1, 2, 3, 4, 5, 1000}) EXPECT_TRUE(t.Holds(id, 2));
}

TEST(GphashRepair, RepairOfACleanTableChangesNothing) {
  TestTable t("repair-clean", Options(8, 8));
  ASSERT_TRUE(t.Put({1, 2, 3}, 1).ok());
  t.CloseTableOnly();
  recovery::Report report;
  ASSERT_TRUE(gphash::RepairGphash(t.pool(), "t", kTableId, t.root(), report, nullptr).ok());
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.slots_cleared + report.duplicates_removed + report.cells_reclaimed, 0u);
}

TEST(GphashRepair, UntrustworthyRootIsCorruption) {
  TestTable t("repair-root", Options(8, 8));
  t.CloseTableOnly();
  t.pool().At<gphash::GphashRoot>(t.root())->checksum ^= 1;
  recovery::Report report;
  Status status = gphash::RepairGphash(t.pool(), "t", kTableId, t.root(), report, nullptr);
  EXPECT_TRUE(status.IsCorruption());
  EXPECT_NE(status.message().find("checksum mismatch"), std::string::npos);
}

}  // namespace
}  // namespace gpkv::gphash_test
