// Power-failure simulation for crash tests (CPU backend).
//
// The simulator shadows the pool mapping with a "durable image": the file as
// a power failure would find it. At every persist point the persisted range,
// widened to whole cache lines, is copied from the mapping into the image (a
// flush persists whole lines). At the chosen crash point k the stores of point
// k and of everything written since its line was last persisted are not yet
// durable: each 8-byte word where the mapping and the image differ is
// independently kept or dropped (as a power failure without eADR leaves
// cache lines, at 8-byte store granularity). The dropped words are written
// back into the file and the process ends with _exit(kCrashExitCode).
//
// Use in a forked child only: Install() before DB::Open.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pm/persist_hook.h"

namespace gpkv::testutil {

class PowerFailureSimulator {
 public:
  PowerFailureSimulator(uint64_t crash_at, uint64_t seed) : crash_at_(crash_at), random_(seed) {}

  void Install() {
    pm::TEST_SetMapHook(&OnMap, this);
    pm::TEST_SetPersistHook(&OnPersist, this);
  }

  // Words that were not durable at the crash, and how many were dropped.
  uint64_t volatile_words() const { return volatile_words_; }
  uint64_t dropped_words() const { return dropped_words_; }

 private:
  static constexpr uint64_t kLine = 64;

  static void OnMap(void* context, const uint8_t* base, size_t size, const char* path) {
    auto* self = static_cast<PowerFailureSimulator*>(context);
    self->base_ = base;
    self->size_ = size;
    self->path_ = path;
    // A freshly mapped file is durable as it is.
    self->durable_.assign(base, base + size);
  }

  static void OnPersist(void* context, const void* address, size_t length, uint64_t index) {
    auto* self = static_cast<PowerFailureSimulator*>(context);
    if (self->base_ == nullptr) return;
    if (index == self->crash_at_) self->Crash();  // point k itself is not durable
    const uint8_t* p = static_cast<const uint8_t*>(address);
    if (p < self->base_ || p >= self->base_ + self->size_) return;
    uint64_t begin = static_cast<uint64_t>(p - self->base_) / kLine * kLine;
    uint64_t end = std::min<uint64_t>(
        (static_cast<uint64_t>(p - self->base_) + length + kLine - 1) / kLine * kLine, self->size_);
    std::memcpy(self->durable_.data() + begin, self->base_ + begin, end - begin);
  }

  [[noreturn]] void Crash() {
    int fd = ::open(path_.c_str(), O_RDWR);
    if (fd < 0) _exit(97);
    for (uint64_t offset = 0; offset + 8 <= size_; offset += 8) {
      if (std::memcmp(base_ + offset, durable_.data() + offset, 8) == 0) continue;
      ++volatile_words_;
      if (random_() & 1) continue;  // this store happened to reach the media
      ++dropped_words_;
      if (::pwrite(fd, durable_.data() + offset, 8, static_cast<off_t>(offset)) != 8) _exit(98);
    }
    ::close(fd);
    _exit(pm::kCrashExitCode);
  }

  uint64_t crash_at_;
  std::mt19937_64 random_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::string path_;
  std::vector<uint8_t> durable_;
  uint64_t volatile_words_ = 0;
  uint64_t dropped_words_ = 0;
};

}  // namespace gpkv::testutil
