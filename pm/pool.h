// pm::Pool: a mapped gpkv pool file. Owns the libpmem2 mapping (RAII), the
// file's lock (one writer or any number of readers), the header, the A/B superblocks and the extent
// allocator, and is the one place that persists anything: every flush, fence, msync and 8-byte
// publish in gpkv goes through Persist / Publish / PublishCas / Sync here. Growth of a pool
// (Grow) is here too.
//
// Who may call: engine/, cpu/, gpu/ launchers and recovery/. Tools go through
// the engine or recovery.
//
// Thread safety: Persist, Publish, PublishCas, Sync and the read accessors may
// be called from any number of threads. WriteSuperblock and the allocator
// serialise internally.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "format/pool_layout.h"
#include "gpkv/options.h"
#include "gpkv/status.h"

struct pmem2_map;
struct pmem2_source;
struct pmem2_config;

namespace gpkv::pm {

class ExtentAllocator;

// Minimum pool size: header, superblocks, extent table and a little heap.
constexpr uint64_t kMinPoolSize = uint64_t{1} << 20;

class Pool {
 public:
  // Creates a new pool file of `size` bytes (error if the file exists):
  // header, two superblocks (generation 1 valid in A), empty extent table,
  // all persisted before return.
  static Result<std::unique_ptr<Pool>> Create(const std::string& path, uint64_t size,
                                              SyncMode sync_mode);
  // Maps an existing pool file and validates header and superblocks (every
  // field bounds-checked). Corruption names the file, the region and offset
  // (a file shorter than the pool's size is truncated; a longer one is
  // accepted and its tail left unused); Unsupported for a newer format
  // version. Read-only maps it read-only.
  // A writable open (and Create) holds an exclusive lock on the file for the
  // Pool's lifetime, a read-only open a shared one: Busy, naming the file,
  // when another process or another open in this process holds a lock that
  // this one cannot share.
  // `salvage` (repair only): damaged extent table entries are set aside
  // rather than failing the open (see ExtentAllocator::Load).
  static Result<std::unique_ptr<Pool>> Open(const std::string& path, bool read_only,
                                            SyncMode sync_mode, bool salvage = false);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  const std::string& path() const { return path_; }
  uint8_t* base() const { return base_; }
  // Bytes of the pool: the header's pool_size, or the size the pool last
  // grew to. The file may be longer (see Grow); the mapping then is too.
  uint64_t size() const { return size_; }
  // The heap: [header().heap_offset, size()).
  uint64_t heap_size() const { return size_ - header_.heap_offset; }
  bool read_only() const { return read_only_; }
  // True when persistence is by cache-line flush (a DAX / pmem mapping).
  bool is_pmem() const { return is_pmem_; }
  SyncMode sync_mode() const { return sync_mode_; }
  const format::PoolHeader& header() const { return header_; }
  std::string uuid_string() const;

  // Typed access to pool bytes. REQUIRES: the range was bounds-checked
  // (CheckRange) or comes from a structure validated at open.
  template <typename T>
  T* At(uint64_t offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }
  uint64_t OffsetOf(const void* address) const {
    return static_cast<uint64_t>(static_cast<const uint8_t*>(address) - base_);
  }
  // OK if [offset, offset + length) lies inside the heap; else Corruption:
  // "<file> <what> (offset 0x..): range 0x..+0x.. is outside the heap".
  Status CheckRange(uint64_t offset, uint64_t length, const std::string& what) const;
  // "<file>: <what> (offset 0x<offset>)" — the prefix of every message about
  // a place in this pool.
  std::string Where(const std::string& what, uint64_t offset) const;

  // ---- persistence: the only persist points in gpkv (and Grow's fsync) ----
  // Makes [address, address + length) durable, in order with later stores
  // (see SyncMode). Counts as one persist point for the test hook.
  void Persist(const void* address, size_t length);
  // Aligned 8-byte store of `value` to `word`, then Persist. The commit
  // primitive. REQUIRES: word is 8-byte aligned and inside the pool.
  void Publish(uint64_t* word, uint64_t value);
  // CAS of `word` from `expected` to `desired`; on success persists it and
  // returns true, on failure loads the current value into `expected`.
  bool PublishCas(uint64_t* word, uint64_t& expected, uint64_t desired);
  // Zeroes a range and persists it.
  void ZeroAndPersist(void* address, size_t length);
  // End of a write batch: with SyncMode::kBatch on a page-granular mapping,
  // msync the pool; otherwise a fence. IOError if msync fails.
  Status Sync();

  // ---- superblock ----
  // The current (valid, highest-generation) superblock.
  format::Superblock superblock() const;
  // Writes `next` (generation is set to current + 1, checksum computed) into
  // the slot not holding the current superblock, persists it: after return it
  // is current. Serialised with other superblock writes.
  Status WriteSuperblock(format::Superblock next);
  // Serialises read-modify-write of the superblock + catalog (engine use).
  std::mutex& metadata_mutex() { return metadata_mutex_; }

  // ---- growth ----
  // Extends the pool to `new_size` bytes (rounded up to 4 KiB); the heap
  // then ends there. Makes what was written so far durable, extends the file
  // (zero-filled, reserved with posix_fallocate, fsync), maps it again and
  // publishes a superblock carrying the new size (one A/B switch): a crash
  // leaves the old size (with a file that may already be longer) or the new
  // one. Its persist points for the test hook: the file's new length (the
  // fsync), then the superblock. The extent table keeps its capacity. OK
  // without a change when new_size is the current size.
  // InvalidArgument for a smaller size or a read-only pool; PoolFull when the
  // file system has no room; IOError when a file call fails.
  // REQUIRES: nothing holds an address inside the mapping (base() changes):
  // no table is open, no other thread uses the pool.
  Status Grow(uint64_t new_size);

  ExtentAllocator& allocator() { return *allocator_; }
  const ExtentAllocator& allocator() const { return *allocator_; }

 private:
  Pool() = default;
  // Takes the pool file's lock on fd_ without waiting (shared if read_only).
  Status Lock(const std::string& path, bool read_only);
  // Maps the file; opens and locks it first unless `created` (Create did).
  Status MapFile(const std::string& path, bool read_only, bool created);
  // Maps the whole of fd_ into *map.
  Status MapDescriptor(pmem2_map** map) const;
  // Takes the mapping's address, size and persistence from map_; size_
  // becomes the mapping's size until SetSizeFromSuperblock.
  void AdoptMapping();
  Status LoadSuperblocks();
  // size_ from the current superblock (or the header); Corruption when that
  // is not a size the pool can have or the file is shorter.
  Status SetSizeFromSuperblock(uint64_t file_size);
  Status RewriteTornSuperblock();

  std::string path_;
  int fd_ = -1;
  pmem2_map* map_ = nullptr;
  uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  bool read_only_ = false;
  bool is_pmem_ = false;
  SyncMode sync_mode_ = SyncMode::kBatch;
  void (*persist_fn_)(const void*, size_t) = nullptr;
  format::PoolHeader header_{};
  uint32_t current_superblock_ = 0;
  format::Superblock current_{};
  mutable std::mutex superblock_mutex_;
  std::mutex metadata_mutex_;
  std::unique_ptr<ExtentAllocator> allocator_;
};

}  // namespace gpkv::pm
