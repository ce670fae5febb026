// On-media layout of a gpkv pool file: header, A/B superblocks, extent table
// and catalog. All fields little-endian, all references 64-bit offsets from
// the start of the file. docs/FORMAT.md describes the same bytes in prose.
//
//   offset         size               what
//   0              4 KiB              PoolHeader (written once at create)
//   4 KiB          4 KiB              Superblock A
//   8 KiB          4 KiB              Superblock B
//   12 KiB         extent_capacity*32 ExtentEntry[extent_capacity]
//   heap_offset    size - heap_offset extents (catalog, table roots, levels, value chunks)
//
// The pool's size is the current superblock's pool_size, or the header's
// when that is 0. Growth extends the file first and then publishes a
// superblock with the new size, so the file may be longer than the pool
// (a crash in between): those tail bytes are not part of the pool.
//
// Commit rule: the only in-place commit is an aligned 8-byte store that is
// then persisted. Superblocks are written out of place (the other slot) and
// the valid one with the higher generation wins; a torn superblock fails its
// checksum. An extent is allocated by writing its entry and then publishing
// its state word; recovery frees every allocated extent not reachable from the
// current superblock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "format/hd.h"

namespace gpkv::format {

// Version 3: an ordered table's run ends with a key filter (tables/lsm/
// layout.h). Version 2: a catalog entry holds a per-family parameter block
// (version 1 had hash geometry in the generic record). Older pools are
// refused with an error naming both versions.
constexpr uint32_t kFormatVersion = 3;
constexpr uint64_t kPageSize = 4096;
constexpr uint64_t kExtentAlignment = 4096;

// "GPKVPOOL", "GPKVSUPR", "GPKVCATL" as little-endian words.
constexpr uint64_t kPoolMagic = 0x4c4f4f5056504b47ULL;
constexpr uint64_t kSuperblockMagic = 0x5250555356504b47ULL;
constexpr uint64_t kCatalogMagic = 0x4c54414356504b47ULL;

constexpr uint64_t kHeaderOffset = 0;
constexpr uint64_t kSuperblockOffset[2] = {4096, 8192};
constexpr uint64_t kExtentTableOffset = 12288;

// PoolHeader, at offset 0. Immutable after create.
//   0  u64 magic            kPoolMagic
//   8  u32 format_version   kFormatVersion
//   12 u32 header_size      4096
//   16 u8  uuid[16]
//   32 u64 pool_size        bytes of the pool at create
//   40 u64 extent_table_offset
//   48 u64 extent_capacity  entries in the extent table
//   56 u64 heap_offset      first byte of the heap (4 KiB aligned)
//   64 u64 heap_size        pool_size - heap_offset (the heap at create)
//   72 u64 created_unix_ns
//   80 u64 reserved[5]
//   120 u64 checksum        Checksum64 of bytes 0..119
struct PoolHeader {
  uint64_t magic;
  uint32_t format_version;
  uint32_t header_size;
  uint8_t uuid[16];
  uint64_t pool_size;
  uint64_t extent_table_offset;
  uint64_t extent_capacity;
  uint64_t heap_offset;
  uint64_t heap_size;
  uint64_t created_unix_ns;
  uint64_t reserved[5];
  uint64_t checksum;
};
static_assert(sizeof(PoolHeader) == 128);
static_assert(offsetof(PoolHeader, checksum) == 120);
static_assert(std::is_trivially_copyable_v<PoolHeader>);

// Superblock, two copies (A at 4 KiB, B at 8 KiB).
//   0  u64 magic            kSuperblockMagic
//   8  u64 generation       valid copy with the higher generation wins
//   16 u64 catalog_offset   extent holding the Catalog (0 = no catalog yet)
//   24 u64 catalog_size     bytes of that extent
//   32 u64 next_table_id    ids are never reused
//   40 u64 reserved         0
//   48 u64 pool_size        bytes of the pool since it last grew; 0 = the
//                           header's pool_size (never grown)
//   56 u64 checksum         Checksum64 of bytes 0..55
struct Superblock {
  uint64_t magic;
  uint64_t generation;
  uint64_t catalog_offset;
  uint64_t catalog_size;
  uint64_t next_table_id;
  uint64_t reserved;
  uint64_t pool_size;
  uint64_t checksum;
};
static_assert(sizeof(Superblock) == 64);
static_assert(offsetof(Superblock, pool_size) == 48);
static_assert(offsetof(Superblock, checksum) == 56);
static_assert(std::is_trivially_copyable_v<Superblock>);

// Extent states (ExtentEntry::state, the entry's commit word).
enum ExtentState : uint64_t {
  kExtentFree = 0,
  kExtentAllocated = 0x4c4c41ULL,  // "ALL"
};

// Who an extent belongs to (ExtentEntry::kind). Informational: reachability
// from the superblock, not this field, decides whether an extent is live.
enum ExtentKind : uint32_t {
  kExtentKindCatalog = 1,
  kExtentKindTableRoot = 2,
  kExtentKindBucketLevel = 3,
  kExtentKindValueChunk = 4,
  kExtentKindOther = 5,
};

// ExtentEntry, 32 bytes, extent_capacity of them at extent_table_offset.
//   0  u64 offset           first byte, kExtentAlignment aligned, inside the heap
//   8  u64 length           bytes, a multiple of kExtentAlignment
//   16 u32 kind             ExtentKind
//   20 u32 owner_table_id   low 32 bits of the owning table id (0 = pool)
//   24 u64 state            ExtentState; written last (the commit word)
struct ExtentEntry {
  uint64_t offset;
  uint64_t length;
  uint32_t kind;
  uint32_t owner_table_id;
  uint64_t state;
};
static_assert(sizeof(ExtentEntry) == 32);
static_assert(std::is_trivially_copyable_v<ExtentEntry>);

constexpr uint32_t kMaxTableNameLength = 63;

// Key and value sizes every table family supports (fixed-size keys of 8, 16
// or 32 bytes; values of 1 to 128 bytes). Pure functions the
// kernels may call too.
constexpr uint32_t kMinKeySize = 8;  // key sizes: the powers of two kMinKeySize..kMaxKeySize
constexpr uint32_t kMaxKeySize = 32;
constexpr uint32_t kMinValueSize = 1;
constexpr uint32_t kMaxValueSize = 128;

GPKV_HD constexpr bool IsPowerOfTwo(uint64_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}
GPKV_HD constexpr bool IsValidKeySize(uint32_t key_size) {
  return IsPowerOfTwo(key_size) && key_size >= kMinKeySize && key_size <= kMaxKeySize;
}
GPKV_HD constexpr bool IsValidValueSize(uint32_t value_size) {
  return value_size >= kMinValueSize && value_size <= kMaxValueSize;
}

// Bytes of a catalog entry's family parameter block.
constexpr uint32_t kCatalogParamsSize = 24;

// CatalogEntry, 128 bytes: one table. The generic record every family has,
// then the family's own parameter block (its layout.h draws those bytes; for
// GPHash the hash geometry).
//   0   char name[64]        NUL-terminated, 1..63 bytes
//   64  u64 table_id
//   72  u8  kind             TableKind (1 hash, 2 ordered)
//   73  u8  durability       Durability (1 persistent, 2 volatile)
//   74  u8  reserved0[6]     zero
//   80  u32 key_size
//   84  u32 value_size
//   88  u64 root_offset      table root extent (0 for volatile tables)
//   96  u64 expected_keys
//   104 u8  params[24]       the family's parameter block
struct CatalogEntry {
  char name[64];
  uint64_t table_id;
  uint8_t kind;
  uint8_t durability;
  uint8_t reserved0[6];
  uint32_t key_size;
  uint32_t value_size;
  uint64_t root_offset;
  uint64_t expected_keys;
  uint8_t params[kCatalogParamsSize];
};
static_assert(sizeof(CatalogEntry) == 128);
static_assert(offsetof(CatalogEntry, params) == 104);
static_assert(std::is_trivially_copyable_v<CatalogEntry>);

// Catalog, at superblock.catalog_offset: a 64-byte header then entries.
// Replaced out of place: a change writes a new catalog extent and publishes it
// through a new superblock.
//   0  u64 magic            kCatalogMagic
//   8  u64 entry_count
//   16 u64 reserved[5]
//   56 u64 checksum         Checksum64 of bytes 0..55 and of all entries
struct CatalogHeader {
  uint64_t magic;
  uint64_t entry_count;
  uint64_t reserved[5];
  uint64_t checksum;
};
static_assert(sizeof(CatalogHeader) == 64);
static_assert(std::is_trivially_copyable_v<CatalogHeader>);

inline uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace gpkv::format
