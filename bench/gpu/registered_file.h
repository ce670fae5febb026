// A file of the benchmark's pool directory mapped MAP_SHARED and registered
// with CUDA, so GPU threads read and write it directly: the memory that
// direct mode and the naive baseline work on, and what the link calibration
// measures. The file is unlinked at once; the mapping lives until the object
// is destroyed. Benchmark code only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpkv/status.h"

namespace gpkv::bench::gpu {

class RegisteredFile {
 public:
  // A new file of `bytes` under `dir`, every byte set to `fill` (so every
  // page is present before it is registered).
  static Result<std::unique_ptr<RegisteredFile>> Create(const std::string& dir,
                                                        const std::string& name, uint64_t bytes,
                                                        int fill);
  ~RegisteredFile();
  RegisteredFile(const RegisteredFile&) = delete;
  RegisteredFile& operator=(const RegisteredFile&) = delete;

  void* host() const { return host_; }
  void* device() const { return device_; }  // the same bytes, as the GPU addresses them
  uint64_t bytes() const { return bytes_; }
  // msync of the whole mapping: what makes GPU stores durable on a
  // page-granular file. IOError naming the file when it fails.
  Status Sync() const;

 private:
  RegisteredFile() = default;
  std::string path_;
  void* host_ = nullptr;
  void* device_ = nullptr;
  uint64_t bytes_ = 0;
  bool registered_ = false;
};

}  // namespace gpkv::bench::gpu
