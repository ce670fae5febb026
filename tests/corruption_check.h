// What the tests of damaged pools expect: opening the damaged part is
// Corruption naming the table and the offset of the damage, verify reports
// it, and after a repair verify finds the pool free of corruption.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "gpkv/status.h"
#include "recovery/report.h"
#include "recovery/verify.h"

namespace gpkv::testutil {

// `status` is Corruption naming the offset `at` as messages name one:
// "(offset 0x3a000)".
inline void ExpectCorruptionAtOffset(const Status& status, uint64_t at) {
  ASSERT_TRUE(status.IsCorruption()) << status.ToString();
  char offset[32];
  std::snprintf(offset, sizeof(offset), "(offset 0x%llx)", static_cast<unsigned long long>(at));
  EXPECT_NE(status.message().find(offset), std::string::npos)
      << status.ToString() << " does not name " << offset;
}

// `status` is Corruption naming the table `table` and the offset `at`.
inline void ExpectTableCorruptionAt(const Status& status, const std::string& table, uint64_t at) {
  ASSERT_NO_FATAL_FAILURE(ExpectCorruptionAtOffset(status, at));
  EXPECT_NE(status.message().find("table '" + table + "'"), std::string::npos) << status.ToString();
}

// Verify reports corruption in the pool at `path`.
inline void ExpectVerifyFindsCorruption(const std::string& path) {
  auto verified = recovery::VerifyPool(path, nullptr);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_TRUE(verified->HasCorruption());
}

// Repair of the pool at `path` succeeds, and verify then finds no
// corruption. *repair_report, when given, receives what the repair changed.
inline void ExpectRepairLeavesNoCorruption(const std::string& path,
                                           recovery::Report* repair_report = nullptr) {
  auto repaired = recovery::RepairPool(path, nullptr);
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  if (repair_report != nullptr) *repair_report = *repaired;
  auto after = recovery::VerifyPool(path, nullptr);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_FALSE(after->HasCorruption()) << after->findings[0].message;
}

}  // namespace gpkv::testutil
