#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bench/gpu/registered_file.h"
#include "gpu/cuda_check.h"

namespace gpkv::bench::gpu {

Result<std::unique_ptr<RegisteredFile>> RegisteredFile::Create(const std::string& dir,
                                                               const std::string& name,
                                                               uint64_t bytes, int fill) {
  std::unique_ptr<RegisteredFile> file(new RegisteredFile());
  file->path_ = dir + "/" + name + "-" + std::to_string(::getpid());
  const std::string& path = file->path_;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return Status::IOError(path + ": cannot create: " + std::strerror(errno));
  ::unlink(path.c_str());
  if (::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) != 0) {
    ::close(fd);
    return Status::IOError(path + ": cannot reserve " + std::to_string(bytes) + " bytes");
  }
  void* mapping = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mapping == MAP_FAILED) return Status::IOError(path + ": mmap: " + std::strerror(errno));
  file->host_ = mapping;
  file->bytes_ = bytes;
  std::memset(mapping, fill, bytes);
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaHostRegister(mapping, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable),
      "cudaHostRegister of " + path);
  file->registered_ = true;
  GPKV_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&file->device_, mapping, 0),
                            "cudaHostGetDevicePointer of " + path);
  return Result<std::unique_ptr<RegisteredFile>>(std::move(file));
}

RegisteredFile::~RegisteredFile() {
  if (registered_) cudaHostUnregister(host_);
  if (host_ != nullptr) ::munmap(host_, bytes_);
}

Status RegisteredFile::Sync() const {
  if (::msync(host_, bytes_, MS_SYNC) != 0) {
    return Status::IOError(path_ + ": msync: " + std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace gpkv::bench::gpu
