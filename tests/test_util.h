// Helpers shared by the tests: temporary pool paths, byte pokes and
// pseudo-random value bytes.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "gpkv/options.h"

namespace gpkv::testutil {

// A pool path under /dev/shm (tmpfs, like the benchmarks), unique per test
// process, removed on destruction.
class TempPool {
 public:
  explicit TempPool(const std::string& tag) {
    path_ = "/dev/shm/gpkv-test-" + std::to_string(::getpid()) + "-" + tag + ".gpkv";
    std::remove(path_.c_str());
  }
  ~TempPool() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Fills `size` bytes with consecutive outputs of the splitmix64 stream that
// starts at `state`: streams of different seeds differ in every word.
inline void SplitMix64Fill(uint64_t state, uint8_t* out, uint32_t size) {
  for (uint32_t at = 0; at < size; at += 8) {
    state += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    std::memcpy(out + at, &z, std::min<uint32_t>(8, size - at));
  }
}

template <typename T>
inline void WriteBytes(const std::string& path, uint64_t offset, T value) {
  int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return;
  if (::pwrite(fd, &value, sizeof(value), static_cast<off_t>(offset)) != sizeof(value)) {
    std::perror("pwrite");
  }
  ::close(fd);
}

template <typename T>
inline T ReadBytes(const std::string& path, uint64_t offset) {
  T value{};
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return value;
  if (::pread(fd, &value, sizeof(value), static_cast<off_t>(offset)) != sizeof(value)) {
    std::perror("pread");
  }
  ::close(fd);
  return value;
}

inline void FlipByte(const std::string& path, uint64_t offset, uint8_t mask = 0xff) {
  WriteBytes<uint8_t>(path, offset, ReadBytes<uint8_t>(path, offset) ^ mask);
}

// Options of a test's DB: created when missing, `pool_size` bytes, batches
// on `backend` with `threads` CPU worker threads.
inline Options DbOptions(uint64_t pool_size, int threads, Backend backend = Backend::kCpu) {
  Options options;
  options.create_if_missing = true;
  options.pool_size = pool_size;
  options.backend = backend;
  options.cpu_threads = threads;
  return options;
}

// A table of `kind` and `durability` with the default sizes, sized for 1000
// keys.
inline TableOptions TableOf(TableKind kind, Durability durability) {
  TableOptions options;
  options.kind = kind;
  options.durability = durability;
  options.expected_keys = 1000;
  return options;
}

}  // namespace gpkv::testutil
