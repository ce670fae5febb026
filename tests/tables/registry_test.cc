// The registry and the family interface as the engine and recovery use them:
// which (kind, durability) pairs have a family, what a catalog entry's kind,
// durability and parameter block may hold, how the GPHash family's
// parameters go into the catalog and back, and what the slab-hash family
// (volatile) answers where a persistent family would touch the pool.
#include "tables/registry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "format/checksum.h"
#include "format/pool_layout.h"
#include "gpkv/db.h"
#include "pm/extent_allocator.h"
#include "recovery/catalog.h"
#include "recovery/verify.h"
#include "tables/gphash/family.h"
#include "tables/gphash/layout.h"
#include "tables/lsm/family.h"
#include "tables/slab_hash/family.h"
#include "test_util.h"

namespace gpkv {
namespace {

TEST(Registry, ServesGphashTheSlabHashTheLsmAndTheBtree) {
  const tables::TableFamily* hash = tables::FindFamily(TableKind::kHash, Durability::kPersistent);
  ASSERT_NE(hash, nullptr);
  EXPECT_STREQ(hash->name(), "gphash");
  EXPECT_EQ(hash, &gphash::Family());
  const tables::TableFamily* volatile_hash =
      tables::FindFamily(TableKind::kHash, Durability::kVolatile);
  ASSERT_NE(volatile_hash, nullptr);
  EXPECT_STREQ(volatile_hash->name(), "slab_hash");
  EXPECT_EQ(volatile_hash, &slab_hash::Family());
  EXPECT_EQ(volatile_hash->kind(), TableKind::kHash);
  EXPECT_EQ(volatile_hash->durability(), Durability::kVolatile);
  const tables::TableFamily* ordered =
      tables::FindFamily(TableKind::kOrdered, Durability::kPersistent);
  ASSERT_NE(ordered, nullptr);
  EXPECT_STREQ(ordered->name(), "lsm");
  const tables::TableFamily* volatile_ordered =
      tables::FindFamily(TableKind::kOrdered, Durability::kVolatile);
  ASSERT_NE(volatile_ordered, nullptr);
  EXPECT_STREQ(volatile_ordered->name(), "btree");
  for (const tables::TableFamily* family : tables::Families()) {
    EXPECT_EQ(tables::FindFamily(family->kind(), family->durability()), family)
        << family->name() << ": two families for one (kind, durability)";
  }
}

format::CatalogEntry EntryOf(uint8_t kind, uint8_t durability) {
  format::CatalogEntry entry{};
  std::strcpy(entry.name, "t");
  entry.kind = kind;
  entry.durability = durability;
  return entry;
}

TEST(Registry, FamilyOfTellsCorruptValuesFromFamilies) {
  EXPECT_TRUE(tables::FamilyOf("w", EntryOf(1, 1)).ok());
  EXPECT_TRUE(tables::FamilyOf("w", EntryOf(1, 2)).ok());
  EXPECT_TRUE(tables::FamilyOf("w", EntryOf(2, 1)).ok());
  auto volatile_ordered = tables::FamilyOf("pool: table 't'", EntryOf(2, 2));
  ASSERT_TRUE(volatile_ordered.ok()) << volatile_ordered.status().ToString();
  EXPECT_STREQ((*volatile_ordered)->name(), "btree");
  EXPECT_TRUE(tables::FamilyOf("w", EntryOf(3, 1)).status().IsCorruption());
  EXPECT_TRUE(tables::FamilyOf("w", EntryOf(0, 1)).status().IsCorruption());
  EXPECT_TRUE(tables::FamilyOf("w", EntryOf(1, 3)).status().IsCorruption());
}

// Each flag of a family's CLI hook reads and writes one field of
// TableOptions: setting it changes what it reads and no other flag's field.
TEST(Registry, EveryFamilysCliFlagsFillTheFieldTheyRead) {
  for (const tables::TableFamily* family : tables::Families()) {
    const std::vector<tables::CliFlag>& flags = family->cli().Flags();
    for (const tables::CliFlag& flag : flags) {
      SCOPED_TRACE(std::string(family->name()) + " " + flag.name);
      EXPECT_EQ(std::string(flag.name).rfind("--", 0), 0u);
      EXPECT_STRNE(flag.help, "");
      ASSERT_NE(flag.get, nullptr);
      ASSERT_NE(flag.set, nullptr);
      const TableOptions defaults;
      TableOptions options;
      // A value the flag's check admits that differs from the default.
      const uint64_t value = flag.check == tables::CliFlag::Check::kNone
                                 ? flag.get(defaults) + 16
                                 : (flag.get(defaults) == flag.max ? flag.min : flag.max);
      flag.set(value, &options);
      EXPECT_EQ(flag.get(options), value);
      for (const tables::CliFlag& other : flags) {
        if (&other == &flag) continue;
        EXPECT_NE(std::string(other.name), flag.name);
        EXPECT_EQ(other.get(options), other.get(defaults)) << other.name;
      }
    }
  }
}

TEST(GphashFamily, ParametersRoundTripThroughTheCatalogBlock) {
  const tables::TableFamily& family = gphash::Family();
  for (uint8_t levels : {1, 2, 4}) {
    for (uint8_t locations : {1, 3, 4}) {
      for (uint8_t slots : {4, 8, 16}) {
        TableOptions options;
        options.hash.levels = levels;
        options.hash.hash_locations = locations;
        options.hash.slots_per_bucket = slots;
        uint8_t params[format::kCatalogParamsSize];
        std::memset(params, 0xee, sizeof(params));
        family.EncodeParams(options, params);
        TableOptions back;
        ASSERT_TRUE(family.DecodeParams("w", params, &back).ok());
        EXPECT_EQ(back.hash.levels, levels);
        EXPECT_EQ(back.hash.hash_locations, locations);
        EXPECT_EQ(back.hash.slots_per_bucket, slots);
      }
    }
  }
}

TEST(GphashFamily, BadParameterBlocksAreCorruptionNamingWhere) {
  const tables::TableFamily& family = gphash::Family();
  TableOptions options;
  uint8_t params[format::kCatalogParamsSize];
  family.EncodeParams(options, params);
  struct Case {
    size_t byte;
    uint8_t value;
  };
  for (Case c : {Case{0, 0}, Case{0, 5}, Case{1, 0}, Case{1, 9}, Case{2, 7}, Case{2, 32},
                 Case{3, 1}, Case{23, 1}}) {
    uint8_t bad[format::kCatalogParamsSize];
    std::memcpy(bad, params, sizeof(bad));
    bad[c.byte] = c.value;
    TableOptions out;
    Status status = family.DecodeParams("pool: catalog entry 0", bad, &out);
    EXPECT_TRUE(status.IsCorruption()) << "byte " << c.byte << " = " << int{c.value};
    EXPECT_EQ(status.message().rfind("pool: catalog entry 0", 0), 0u) << status.message();
  }
}

TEST(GphashFamily, CheckOptionsRefusesWhatTheFormatCannotHold) {
  const tables::TableFamily& family = gphash::Family();
  TableOptions good;
  EXPECT_TRUE(family.CheckOptions("w", good).ok());
  auto refused = [&](auto edit) {
    TableOptions options;
    edit(options);
    Status status = family.CheckOptions("pool: table 'x'", options);
    return status.IsInvalidArgument() && status.message().rfind("pool: table 'x'", 0) == 0;
  };
  EXPECT_TRUE(refused([](TableOptions& o) { o.key_size = 12; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.value_size = 0; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.value_size = 129; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.hash.levels = 5; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.hash.hash_locations = 0; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.hash.slots_per_bucket = 12; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.hash.initial_top_buckets = 100; }));
}

TEST(SlabHashFamily, ItsParameterBlockIsZerosAndAnythingElseIsCorruption) {
  const tables::TableFamily& family = slab_hash::Family();
  TableOptions options;
  options.durability = Durability::kVolatile;
  uint8_t params[format::kCatalogParamsSize];
  std::memset(params, 0xee, sizeof(params));
  family.EncodeParams(options, params);
  for (uint8_t byte : params) EXPECT_EQ(byte, 0);
  TableOptions back;
  back.hash.levels = 3;  // decoding gives the default geometry back
  ASSERT_TRUE(family.DecodeParams("w", params, &back).ok());
  EXPECT_EQ(back.hash.levels, HashGeometry{}.levels);
  for (size_t byte : {size_t{0}, size_t{11}, size_t{format::kCatalogParamsSize - 1}}) {
    uint8_t bad[format::kCatalogParamsSize] = {};
    bad[byte] = 1;
    Status status = family.DecodeParams("pool: catalog entry 3", bad, &back);
    EXPECT_TRUE(status.IsCorruption()) << "byte " << byte;
    EXPECT_EQ(status.message().rfind("pool: catalog entry 3", 0), 0u) << status.message();
  }
}

TEST(SlabHashFamily, CheckOptionsRefusesBadSizesAndAPersistentGeometry) {
  const tables::TableFamily& family = slab_hash::Family();
  TableOptions good;
  good.durability = Durability::kVolatile;
  EXPECT_TRUE(family.CheckOptions("w", good).ok());
  for (uint32_t key_size : {8u, 16u, 32u}) {
    for (uint32_t value_size : {1u, 8u, 100u, 128u}) {
      TableOptions options = good;
      options.key_size = key_size;
      options.value_size = value_size;
      EXPECT_TRUE(family.CheckOptions("w", options).ok()) << key_size << "/" << value_size;
    }
  }
  auto refused = [&](auto edit) {
    TableOptions options = good;
    edit(options);
    Status status = family.CheckOptions("pool: table 'x'", options);
    return status.IsInvalidArgument() && status.message().rfind("pool: table 'x'", 0) == 0;
  };
  EXPECT_TRUE(refused([](TableOptions& o) { o.key_size = 4; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.key_size = 64; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.value_size = 0; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.value_size = 129; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.expected_keys = slab_hash::kMaxExpectedKeys + 1; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.hash.levels = 3; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.hash.slots_per_bucket = 16; }));
  EXPECT_TRUE(refused([](TableOptions& o) { o.hash.initial_top_buckets = 1024; }));
  TableOptions geometry = good;
  geometry.hash.hash_locations = 1;
  EXPECT_NE(family.CheckOptions("w", geometry).message().find("persistent hash tables"),
            std::string::npos);
}

TEST(SlabHashFamily, AVolatileTableHasNothingInThePoolAndNoRoot) {
  testutil::TempPool temp("slab-family");
  auto pool = pm::Pool::Create(temp.path(), uint64_t{16} << 20, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  const tables::TableFamily& family = slab_hash::Family();
  const uint64_t used = (*pool)->allocator().used_bytes();
  TableOptions options;
  options.durability = Durability::kVolatile;
  auto root = family.Create(**pool, 7, options);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(*root, 0u);
  EXPECT_EQ((*pool)->allocator().used_bytes(), used);
  format::CatalogEntry entry = EntryOf(1, 2);
  entry.table_id = 7;
  auto extents = family.Extents(**pool, entry, /*require_allocated=*/true);
  ASSERT_TRUE(extents.ok());
  EXPECT_TRUE(extents->empty());
  EXPECT_TRUE(family.Drop(**pool, entry).ok());
  recovery::Report report;
  ASSERT_TRUE(family.Verify(**pool, entry, report, nullptr).ok());
  ASSERT_EQ(report.tables.size(), 1u);
  EXPECT_EQ(report.tables[0].table_id, 7u);
  EXPECT_FALSE(report.HasCorruption());
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_NE(report.findings[0].message.find("volatile: nothing in the pool"), std::string::npos);
  recovery::Report repaired;
  EXPECT_TRUE(family.Repair(**pool, entry, repaired, nullptr).ok());
  EXPECT_TRUE(repaired.findings.empty());
  format::ExtentEntry extent{};
  extent.offset = 1 << 20;
  extent.kind = format::kExtentKindTableRoot;
  EXPECT_FALSE(family.Salvage(**pool, extent, "recovered-7").ok());
}

// The catalog entry of table `name` in the pool at path, and its offset.
uint64_t EntryOffset(const std::string& path, const std::string& name) {
  auto pool = pm::Pool::Open(path, /*read_only=*/true, SyncMode::kBatch);
  EXPECT_TRUE(pool.ok());
  auto catalog = recovery::ReadCatalog(**pool);
  EXPECT_TRUE(catalog.ok());
  const uint64_t base = (*pool)->superblock().catalog_offset + sizeof(format::CatalogHeader);
  for (size_t i = 0; i < catalog->size(); ++i) {
    if (name == (*catalog)[i].name) return base + i * sizeof(format::CatalogEntry);
  }
  ADD_FAILURE() << "no table " << name;
  return 0;
}

// Rewrites one catalog entry in place and fixes the catalog checksum, as a
// pool written by a build with another family would look.
void EditEntry(const std::string& path, const std::string& name,
               void (*edit)(format::CatalogEntry&)) {
  const uint64_t offset = EntryOffset(path, name);
  auto pool = pm::Pool::Open(path, /*read_only=*/false, SyncMode::kBatch);
  ASSERT_TRUE(pool.ok());
  auto* entry = (*pool)->At<format::CatalogEntry>(offset);
  edit(*entry);
  const uint64_t catalog = (*pool)->superblock().catalog_offset;
  auto* header = (*pool)->At<format::CatalogHeader>(catalog);
  const uint8_t* bytes = (*pool)->At<uint8_t>(catalog);
  header->checksum = format::Checksum64(bytes, offsetof(format::CatalogHeader, checksum)) ^
                     format::Checksum64(bytes + sizeof(format::CatalogHeader),
                                        header->entry_count * sizeof(format::CatalogEntry));
  (*pool)->Persist(bytes, (*pool)->superblock().catalog_size);
  ASSERT_TRUE((*pool)->Sync().ok());
}

// A catalog entry that turns into a volatile table (here a hash table's
// entry rewritten as a volatile ordered one) keeps its entry and opens empty;
// the extents it had as a persistent table are unreferenced and freed.
TEST(Catalog, AnEntryTurnedVolatileOpensEmptyAndItsOldExtentsAreFreed) {
  testutil::TempPool temp("turned-volatile");
  Options options;
  options.create_if_missing = true;
  options.pool_size = uint64_t{64} << 20;
  options.backend = Backend::kCpu;
  uint64_t used_before = 0;
  {
    auto db = DB::Open(temp.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    TableOptions small;
    small.expected_keys = 1000;
    ASSERT_TRUE((*db)->CreateTable("kept", small).ok());
    ASSERT_TRUE((*db)->CreateTable("future", small).ok());
    used_before = (*(*db)->Info()).used_bytes;
  }
  EditEntry(temp.path(), "future", [](format::CatalogEntry& e) {
    e.kind = 2;
    e.durability = 2;
    e.root_offset = 0;
    std::memset(e.params, 0, sizeof(e.params));
  });
  {
    auto db = DB::Open(temp.path(), options);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto future = (*db)->OpenTable("future");
    ASSERT_TRUE(future.ok()) << future.status().ToString();
    EXPECT_EQ((*future)->options().kind, TableKind::kOrdered);
    EXPECT_EQ((*(*future)->Stats()).keys, 0u);
    EXPECT_TRUE((*db)->OpenTable("kept").ok());
    EXPECT_LT((*(*db)->Info()).used_bytes, used_before);
    auto tables = (*db)->ListTables();
    ASSERT_TRUE(tables.ok());
    EXPECT_EQ(tables->size(), 2u);
  }
  auto report = recovery::VerifyPool(temp.path(), nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->HasCorruption());
  bool said = false;
  for (const auto& finding : report->findings) {
    said |= finding.message.find("table 'future': volatile") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(Catalog, ACorruptParameterBlockIsCorruptionWithItsOffset) {
  testutil::TempPool temp("bad-params");
  Options options;
  options.create_if_missing = true;
  options.pool_size = uint64_t{64} << 20;
  options.backend = Backend::kCpu;
  {
    auto db = DB::Open(temp.path(), options);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->CreateTable("t", TableOptions{}).ok());
  }
  const uint64_t params_offset =
      EntryOffset(temp.path(), "t") + offsetof(format::CatalogEntry, params);
  EditEntry(temp.path(), "t", [](format::CatalogEntry& e) { e.params[2] = 7; });
  auto db = DB::Open(temp.path(), options);
  ASSERT_TRUE(db.status().IsCorruption()) << db.status().ToString();
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(params_offset));
  EXPECT_NE(db.status().message().find(hex), std::string::npos) << db.status().ToString();
  EXPECT_NE(db.status().message().find("table 't'"), std::string::npos);
}

}  // namespace
}  // namespace gpkv
