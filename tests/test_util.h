// Helpers shared by the tests: temporary pool paths and byte pokes.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

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

}  // namespace gpkv::testutil
