#include "pm/pool.h"

#include <fcntl.h>
#include <libpmem2.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>

#include "format/checksum.h"
#include "pm/extent_allocator.h"
#include "pm/persist_hook.h"

namespace gpkv::pm {
namespace {

using format::PoolHeader;
using format::Superblock;

std::string Hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIx64, value);
  return buffer;
}

std::string Errno(const std::string& what, const std::string& path) {
  return path + ": " + what + ": " + std::strerror(errno);
}

std::string Pmem2Error(const std::string& call, const std::string& path) {
  return path + ": " + call + ": " + pmem2_errormsg();
}

uint64_t HeaderChecksum(const PoolHeader& header) {
  return format::Checksum64(&header, offsetof(PoolHeader, checksum));
}

uint64_t SuperblockChecksum(const Superblock& superblock) {
  return format::Checksum64(&superblock, offsetof(Superblock, checksum));
}

bool SuperblockValid(const Superblock& superblock) {
  return superblock.magic == format::kSuperblockMagic &&
         superblock.checksum == SuperblockChecksum(superblock) && superblock.generation > 0;
}

// Extent table entries for a pool of `size` bytes: one per 64 KiB of pool,
// between 1024 and 65536.
uint64_t ExtentCapacityFor(uint64_t size) {
  uint64_t capacity = size / (64 * 1024);
  if (capacity < 1024) capacity = 1024;
  if (capacity > 65536) capacity = 65536;
  return capacity;
}

// RAII for the libpmem2 config and source used while mapping.
struct Pmem2Setup {
  pmem2_config* config = nullptr;
  pmem2_source* source = nullptr;
  ~Pmem2Setup() {
    if (source != nullptr) pmem2_source_delete(&source);
    if (config != nullptr) pmem2_config_delete(&config);
  }
};

}  // namespace

Result<std::unique_ptr<Pool>> Pool::Create(const std::string& path, uint64_t size,
                                           SyncMode sync_mode) {
  if (size < kMinPoolSize) {
    return Status::InvalidArgument(path + ": pool size " + std::to_string(size) +
                                   " is below the minimum of " + std::to_string(kMinPoolSize));
  }
  size = format::AlignUp(size, format::kPageSize);
  std::unique_ptr<Pool> pool(new Pool());
  pool->sync_mode_ = sync_mode;
  pool->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (pool->fd_ < 0) {
    if (errno == EEXIST) return Status::AlreadyExists(path + ": file exists");
    return Status::IOError(Errno("cannot create pool file", path));
  }
  // Locked before it has a size, so that no other open sees it half made.
  Status status = pool->Lock(path, /*read_only=*/false);
  int err = status.ok() ? ::posix_fallocate(pool->fd_, 0, static_cast<off_t>(size)) : 0;
  if (!status.ok() || err != 0) {
    pool.reset();
    ::unlink(path.c_str());
    if (!status.ok()) return status;
    errno = err;
    if (err == ENOSPC) {
      return Status::PoolFull(Errno("cannot reserve " + std::to_string(size) + " bytes", path));
    }
    return Status::IOError(Errno("posix_fallocate", path));
  }

  status = pool->MapFile(path, /*read_only=*/false, /*created=*/true);
  if (!status.ok()) {
    pool.reset();
    ::unlink(path.c_str());
    return status;
  }

  // Everything but the header first; the header (with its magic) last, so a
  // crash during create leaves a file that is plainly not a pool.
  uint64_t capacity = ExtentCapacityFor(size);
  uint64_t heap_offset =
      format::AlignUp(format::kExtentTableOffset + capacity * sizeof(format::ExtentEntry),
                      size >= (uint64_t{64} << 20) ? (uint64_t{2} << 20) : format::kPageSize);
  if (heap_offset + format::kPageSize > size) {
    pool.reset();
    ::unlink(path.c_str());
    return Status::InvalidArgument(path + ": pool size " + std::to_string(size) +
                                   " leaves no heap");
  }
  pool->ZeroAndPersist(pool->base_, heap_offset);

  Superblock first{};
  first.magic = format::kSuperblockMagic;
  first.generation = 1;
  first.next_table_id = 1;
  first.checksum = SuperblockChecksum(first);
  std::memcpy(pool->base_ + format::kSuperblockOffset[0], &first, sizeof(first));
  pool->Persist(pool->base_ + format::kSuperblockOffset[0], sizeof(first));

  PoolHeader header{};
  header.magic = format::kPoolMagic;
  header.format_version = format::kFormatVersion;
  header.header_size = format::kPageSize;
  std::random_device random;
  for (int i = 0; i < 16; i += 4) {
    uint32_t word = random();
    std::memcpy(header.uuid + i, &word, 4);
  }
  header.uuid[6] = (header.uuid[6] & 0x0f) | 0x40;  // version 4
  header.uuid[8] = (header.uuid[8] & 0x3f) | 0x80;  // variant 1
  header.pool_size = size;
  header.extent_table_offset = format::kExtentTableOffset;
  header.extent_capacity = capacity;
  header.heap_offset = heap_offset;
  header.heap_size = size - heap_offset;
  header.created_unix_ns =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  header.checksum = HeaderChecksum(header);
  std::memcpy(pool->base_, &header, sizeof(header));
  pool->Persist(pool->base_, sizeof(header));
  GPKV_RETURN_IF_ERROR(pool->Sync());

  pool->header_ = header;
  GPKV_RETURN_IF_ERROR(pool->LoadSuperblocks());
  auto allocator = ExtentAllocator::Load(*pool);
  if (!allocator.ok()) return allocator.status();
  pool->allocator_ = std::move(allocator.value());
  return pool;
}

Result<std::unique_ptr<Pool>> Pool::Open(const std::string& path, bool read_only,
                                         SyncMode sync_mode, bool salvage) {
  std::unique_ptr<Pool> pool(new Pool());
  pool->sync_mode_ = sync_mode;
  GPKV_RETURN_IF_ERROR(pool->MapFile(path, read_only, /*created=*/false));

  const uint64_t size = pool->size_;
  if (size < sizeof(PoolHeader)) {
    return Status::Corruption(pool->Where("header", 0) + ": file of " + std::to_string(size) +
                              " bytes is too small to be a gpkv pool");
  }
  PoolHeader header;
  std::memcpy(&header, pool->base_, sizeof(header));
  if (header.magic != format::kPoolMagic) {
    return Status::Corruption(pool->Where("header", 0) + ": not a gpkv pool (bad magic " +
                              Hex(header.magic) + ")");
  }
  if (header.format_version > format::kFormatVersion) {
    return Status::Unsupported(
        pool->Where("header", 8) + ": format version " + std::to_string(header.format_version) +
        " is newer than this gpkv supports (" + std::to_string(format::kFormatVersion) + ")");
  }
  if (header.format_version != 0 && header.format_version < format::kFormatVersion) {
    // Version 1 kept hash geometry in the generic catalog record; version 2's
    // ordered-table runs have no key filter, where version 3's end with one.
    return Status::Unsupported(
        pool->Where("header", 8) + ": format version " + std::to_string(header.format_version) +
        " is older than this gpkv reads (version " + std::to_string(format::kFormatVersion) +
        "); dump its tables with the gpkv that wrote it and load them into a new pool");
  }
  if (header.checksum != HeaderChecksum(header)) {
    return Status::Corruption(pool->Where("header", 120) + ": checksum mismatch (stored " +
                              Hex(header.checksum) + ", computed " + Hex(HeaderChecksum(header)) +
                              ")");
  }
  auto bad_header = [&](uint64_t offset, const std::string& why) {
    return Status::Corruption(pool->Where("header", offset) + ": " + why);
  };
  if (header.format_version == 0) return bad_header(8, "format version 0");
  if (header.header_size != format::kPageSize) return bad_header(12, "bad header size");
  if (header.pool_size > size) {
    return bad_header(32, "pool size " + std::to_string(header.pool_size) +
                              " is larger than the file size " + std::to_string(size) +
                              " (truncated file)");
  }
  if (header.extent_table_offset != format::kExtentTableOffset || header.extent_capacity == 0 ||
      header.extent_capacity > (1u << 20)) {
    return bad_header(40, "bad extent table placement");
  }
  uint64_t table_end = header.extent_table_offset + header.extent_capacity * 32;
  if (header.heap_offset < table_end || header.heap_offset % format::kPageSize != 0 ||
      header.heap_offset > header.pool_size ||
      header.heap_size != header.pool_size - header.heap_offset) {
    return bad_header(56, "bad heap placement (offset " + Hex(header.heap_offset) + ", size " +
                              Hex(header.heap_size) + ")");
  }
  pool->header_ = header;
  GPKV_RETURN_IF_ERROR(pool->LoadSuperblocks());
  GPKV_RETURN_IF_ERROR(pool->SetSizeFromSuperblock(size));
  if (!read_only && !salvage) GPKV_RETURN_IF_ERROR(pool->RewriteTornSuperblock());
  auto allocator = ExtentAllocator::Load(*pool, salvage);
  if (!allocator.ok()) return allocator.status();
  pool->allocator_ = std::move(allocator.value());
  return pool;
}

// flock(2) locks belong to the open file description: a second open of the
// pool in this process conflicts like another process's open, and the lock
// goes when the last descriptor of this open closes (O_CLOEXEC keeps it out
// of programs this process starts).
Status Pool::Lock(const std::string& path, bool read_only) {
  if (::flock(fd_, (read_only ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return Status::OK();
  if (errno != EWOULDBLOCK) return Status::IOError(Errno("flock", path));
  // Say how the pool is held: a shared lock that can still be had means its
  // holders are readers (this descriptor's lock goes with it when it closes).
  const bool readers = !read_only && ::flock(fd_, LOCK_SH | LOCK_NB) == 0;
  const std::string how = readers ? "has the pool open read-only (shared lock)"
                                  : "has the pool open for writing (exclusive lock)";
  return Status::Busy(path + ": another process (or another open in this process) " + how +
                      "; a pool has one writer, or any number of readers, at a time");
}

Status Pool::MapFile(const std::string& path, bool read_only, bool created) {
  path_ = path;
  read_only_ = read_only;
  if (!created) {
    fd_ = ::open(path.c_str(), (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    if (fd_ < 0) {
      if (errno == ENOENT) return Status::NotFound(path + ": no such pool file");
      return Status::IOError(Errno("cannot open pool file", path));
    }
    GPKV_RETURN_IF_ERROR(Lock(path, read_only));
  }
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Status::IOError(Errno("fstat", path));
  if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
    return Status::InvalidArgument(path + ": not a regular file or device-DAX");
  }
  if (S_ISREG(st.st_mode) && st.st_size == 0 && !created) {
    return Status::Corruption(path + ": header (offset 0x0): empty file is not a gpkv pool");
  }

  GPKV_RETURN_IF_ERROR(MapDescriptor(&map_));
  AdoptMapping();
  if (!read_only) RunMapHook(base_, size_, path_.c_str());
  return Status::OK();
}

Status Pool::MapDescriptor(pmem2_map** map) const {
  Pmem2Setup setup;
  if (pmem2_config_new(&setup.config) != 0) {
    return Status::IOError(Pmem2Error("pmem2_config_new", path_));
  }
  if (pmem2_config_set_required_store_granularity(setup.config, PMEM2_GRANULARITY_PAGE) != 0) {
    return Status::IOError(Pmem2Error("pmem2_config_set_required_store_granularity", path_));
  }
  if (read_only_ && pmem2_config_set_protection(setup.config, PMEM2_PROT_READ) != 0) {
    return Status::IOError(Pmem2Error("pmem2_config_set_protection", path_));
  }
  if (pmem2_source_from_fd(&setup.source, fd_) != 0) {
    return Status::IOError(Pmem2Error("pmem2_source_from_fd", path_));
  }
  if (pmem2_map_new(map, setup.config, setup.source) != 0) {
    return Status::IOError(Pmem2Error("pmem2_map_new", path_));
  }
  return Status::OK();
}

void Pool::AdoptMapping() {
  base_ = static_cast<uint8_t*>(pmem2_map_get_address(map_));
  size_ = pmem2_map_get_size(map_);
  is_pmem_ = pmem2_map_get_store_granularity(map_) != PMEM2_GRANULARITY_PAGE;
  persist_fn_ = pmem2_get_persist_fn(map_);
}

Status Pool::LoadSuperblocks() {
  Superblock copies[2];
  bool valid[2];
  for (int i = 0; i < 2; ++i) {
    std::memcpy(&copies[i], base_ + format::kSuperblockOffset[i], sizeof(Superblock));
    valid[i] = SuperblockValid(copies[i]);
  }
  if (!valid[0] && !valid[1]) {
    return Status::Corruption(Where("superblocks A and B", format::kSuperblockOffset[0]) +
                              ": neither copy is valid (bad magic or checksum)");
  }
  uint32_t pick = (valid[0] && (!valid[1] || copies[0].generation >= copies[1].generation)) ? 0 : 1;
  std::lock_guard<std::mutex> lock(superblock_mutex_);
  current_superblock_ = pick;
  current_ = copies[pick];
  return Status::OK();
}

Status Pool::SetSizeFromSuperblock(uint64_t file_size) {
  uint64_t grown_size;
  uint64_t field;
  {
    std::lock_guard<std::mutex> lock(superblock_mutex_);
    grown_size = current_.pool_size;
    field = format::kSuperblockOffset[current_superblock_] + offsetof(Superblock, pool_size);
  }
  if (grown_size == 0) {
    size_ = header_.pool_size;
    return Status::OK();
  }
  if (grown_size < header_.pool_size || grown_size % format::kPageSize != 0) {
    return Status::Corruption(Where("superblock", field) + ": pool size " +
                              std::to_string(grown_size) + " is below the size at create (" +
                              std::to_string(header_.pool_size) + ") or not a multiple of 4 KiB");
  }
  if (grown_size > file_size) {
    return Status::Corruption(Where("superblock", field) + ": pool size " +
                              std::to_string(grown_size) + " is larger than the file size " +
                              std::to_string(file_size) + " (truncated file)");
  }
  size_ = grown_size;
  return Status::OK();
}

// A crash while WriteSuperblock stores the next copy leaves that copy torn
// (bad checksum) and the other one current: a legal crash state, not damage.
// Writing the current contents again puts a valid copy in the torn slot, so
// that both copies are valid after recovery. A slot never written (all
// zero, as after create) is left alone. Repair opens with `salvage` and
// reports the rewrite itself (recovery/verify.cc).
Status Pool::RewriteTornSuperblock() {
  Superblock other;
  uint32_t other_index;
  {
    std::lock_guard<std::mutex> lock(superblock_mutex_);
    other_index = 1 - current_superblock_;
  }
  std::memcpy(&other, base_ + format::kSuperblockOffset[other_index], sizeof(other));
  if (SuperblockValid(other) || other.magic == 0) return Status::OK();
  return WriteSuperblock(superblock());
}

Pool::~Pool() {
  if (map_ != nullptr) {
    if (!read_only_) Sync().IgnoreError();  // best effort; callers Sync explicitly first
    pmem2_map_delete(&map_);
  }
  if (fd_ >= 0) ::close(fd_);
}

std::string Pool::uuid_string() const {
  char text[40];
  const uint8_t* u = header_.uuid;
  std::snprintf(text, sizeof(text),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                u[15]);
  return text;
}

std::string Pool::Where(const std::string& what, uint64_t offset) const {
  return path_ + ": " + what + " (offset " + Hex(offset) + ")";
}

Status Pool::CheckRange(uint64_t offset, uint64_t length, const std::string& what) const {
  uint64_t heap_begin = header_.heap_offset;
  uint64_t heap_end = size_;
  if (offset < heap_begin || offset > heap_end || length > heap_end - offset) {
    return Status::Corruption(Where(what, offset) + ": range " + Hex(offset) + "+" + Hex(length) +
                              " is outside the heap [" + Hex(heap_begin) + ", " + Hex(heap_end) +
                              ")");
  }
  return Status::OK();
}

void Pool::Persist(const void* address, size_t length) {
  RunPersistHook(address, length);
  if (is_pmem_ || sync_mode_ == SyncMode::kStrict) {
    persist_fn_(address, length);
  } else {
    // Page-granular mapping in batch mode: x86 keeps stores in order; the
    // fence keeps the compiler from moving them. Sync() makes them durable.
    std::atomic_thread_fence(std::memory_order_release);
  }
}

void Pool::Publish(uint64_t* word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
  Persist(word, sizeof(uint64_t));
}

bool Pool::PublishCas(uint64_t* word, uint64_t& expected, uint64_t desired) {
  if (!__atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    return false;
  }
  Persist(word, sizeof(uint64_t));
  return true;
}

void Pool::ZeroAndPersist(void* address, size_t length) {
  std::memset(address, 0, length);
  Persist(address, length);
}

Status Pool::Sync() {
  if (read_only_) return Status::OK();
  Status status;
  if (is_pmem_ || sync_mode_ == SyncMode::kStrict) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  } else if (::msync(base_, size_, MS_SYNC) != 0) {
    status = Status::IOError(Errno("msync", path_));
  }
  if (status.ok() && TakeInjectedSyncFailure()) {
    status = Status::IOError(path_ + ": msync: failure injected by TEST_FailNextSyncs");
  }
  return status;
}

format::Superblock Pool::superblock() const {
  std::lock_guard<std::mutex> lock(superblock_mutex_);
  return current_;
}

Status Pool::WriteSuperblock(format::Superblock next) {
  if (read_only_) return Status::InvalidArgument(path_ + ": pool is open read-only");
  std::lock_guard<std::mutex> lock(superblock_mutex_);
  uint32_t target = 1 - current_superblock_;
  next.magic = format::kSuperblockMagic;
  next.generation = current_.generation + 1;
  next.checksum = SuperblockChecksum(next);
  uint8_t* slot = base_ + format::kSuperblockOffset[target];
  std::memcpy(slot, &next, sizeof(next));
  Persist(slot, sizeof(next));
  current_superblock_ = target;
  current_ = next;
  return Status::OK();
}

// The order is what makes growth crash-safe: the file's new length is
// durable (fsync) before the superblock that claims it is written, and until
// that superblock is current the pool keeps its old size, so the bytes past
// it are never handed out. A new mapping is made before the old one goes, so
// a failed map leaves the pool as it was.
Status Pool::Grow(uint64_t new_size) {
  if (read_only_) return Status::InvalidArgument(path_ + ": pool is open read-only");
  new_size = format::AlignUp(new_size, format::kPageSize);
  if (new_size < size_) {
    return Status::InvalidArgument(path_ + ": a pool cannot shrink (size " + std::to_string(size_) +
                                   ", asked for " + std::to_string(new_size) + ")");
  }
  if (new_size == size_) return Status::OK();
  // What the old mapping holds reaches the file first: the new mapping (and
  // a power-failure simulator's image of it) starts from the file.
  GPKV_RETURN_IF_ERROR(Sync());
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Status::IOError(Errno("fstat", path_));
  if (!S_ISREG(st.st_mode)) {
    return Status::Unsupported(path_ + ": only a pool in a regular file can grow");
  }
  if (static_cast<uint64_t>(st.st_size) < new_size) {
    int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(new_size));
    if (err != 0) {
      errno = err;
      if (err == ENOSPC) {
        return Status::PoolFull(
            Errno("cannot grow the pool to " + std::to_string(new_size) + " bytes", path_));
      }
      return Status::IOError(Errno("posix_fallocate", path_));
    }
  }
  // Making the new length durable is a persist point of its own (the test
  // hook sees the range the file gained), before any superblock claims it.
  RunPersistHook(base_ + size_, new_size - size_);
  if (::fsync(fd_) != 0) return Status::IOError(Errno("fsync", path_));

  pmem2_map* grown = nullptr;
  GPKV_RETURN_IF_ERROR(MapDescriptor(&grown));
  pmem2_map_delete(&map_);
  map_ = grown;
  const uint64_t old_size = size_;
  AdoptMapping();
  RunMapHook(base_, size_, path_.c_str());
  size_ = old_size;

  format::Superblock next = superblock();
  next.pool_size = new_size;
  GPKV_RETURN_IF_ERROR(WriteSuperblock(next));
  GPKV_RETURN_IF_ERROR(Sync());
  size_ = new_size;
  return Status::OK();
}

}  // namespace gpkv::pm
