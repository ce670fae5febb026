#include "tools/pool_format.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>

#include "format/checksum.h"
#include "format/pool_layout.h"

namespace gpkv::tools {

uint32_t ForeignPoolFormat(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  format::PoolHeader header{};
  ssize_t read = ::pread(fd, &header, sizeof(header), format::kHeaderOffset);
  ::close(fd);
  if (read != static_cast<ssize_t>(sizeof(header)) || header.magic != format::kPoolMagic ||
      header.format_version == 0 || header.format_version == format::kFormatVersion) {
    return 0;
  }
  // A flipped bit in the version field reads as another version too: only a
  // header whose checksum holds was written with it.
  if (header.checksum != format::Checksum64(&header, offsetof(format::PoolHeader, checksum))) {
    return 0;
  }
  return header.format_version;
}

std::string ForeignPoolFormatText(const std::string& path, uint32_t format_version) {
  const std::string versions = "(format " + std::to_string(format_version) + "; this build reads ";
  if (format_version > format::kFormatVersion) {
    return path + ": written by a newer gpkv " + versions + "up to " +
           std::to_string(format::kFormatVersion) + ")";
  }
  return path + ": written by an older gpkv " + versions + "format " +
         std::to_string(format::kFormatVersion) +
         " only); dump its tables with the gpkv that wrote it and load them into a new pool";
}

}  // namespace gpkv::tools
