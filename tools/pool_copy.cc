#include "tools/pool_copy.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gpkv::tools {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kChunk = size_t{1} << 20;

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Closes a file descriptor when it goes out of scope (its lock with it).
class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;

 private:
  int fd_;
};

bool AllZero(const uint8_t* bytes, size_t size) {
  return std::all_of(bytes, bytes + size, [](uint8_t byte) { return byte == 0; });
}

// Copies `size` bytes from `from` to `to` (already `size` bytes long),
// skipping pages of zeros.
Status CopyBytes(int from, const std::string& source, int to, const std::string& copy,
                 uint64_t size) {
  std::vector<uint8_t> buffer(kChunk);
  for (uint64_t offset = 0; offset < size;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, size - offset));
    ssize_t got = ::pread(from, buffer.data(), want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::IOError(ErrnoText("cannot read", source));
    if (got == 0) return Status::IOError(source + ": shorter than it was when the copy began");
    for (size_t page = 0; page < static_cast<size_t>(got); page += kPage) {
      size_t length = std::min(kPage, static_cast<size_t>(got) - page);
      if (AllZero(buffer.data() + page, length)) continue;
      for (size_t done = 0; done < length;) {
        ssize_t wrote = ::pwrite(to, buffer.data() + page + done, length - done,
                                 static_cast<off_t>(offset + page + done));
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
          return Status::IOError(ErrnoText("cannot write the dry run's copy", copy) +
                                 " (set TMPDIR to a directory with room for the pool)");
        }
        done += static_cast<size_t>(wrote);
      }
    }
    offset += static_cast<uint64_t>(got);
  }
  return Status::OK();
}

}  // namespace

ScratchPoolCopy::~ScratchPoolCopy() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

Status ScratchPoolCopy::Make(const std::string& source) {
  int from = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (from < 0) {
    if (errno == ENOENT) return Status::NotFound(source + ": no such pool file");
    return Status::IOError(ErrnoText("cannot open pool file", source));
  }
  FileCloser close_from(from);
  // The lock a read-only open takes: no writer changes the pool while it is
  // copied.
  if (::flock(from, LOCK_SH | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return Status::IOError(ErrnoText("flock", source));
    return Status::Busy(source +
                        ": another process (or another open in this process) has the pool open "
                        "for writing (exclusive lock); a pool has one writer, or any number of "
                        "readers, at a time");
  }
  struct stat st;
  if (::fstat(from, &st) != 0) return Status::IOError(ErrnoText("fstat", source));
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(source +
                                   ": repair --dry-run copies the pool: a regular file only");
  }

  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/gpkv-dry-run-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int to = ::mkstemp(name.data());
  if (to < 0) return Status::IOError(ErrnoText("cannot create the dry run's copy", pattern));
  path_ = name.data();
  FileCloser close_to(to);
  if (::ftruncate(to, st.st_size) != 0) {
    return Status::IOError(ErrnoText("cannot size the dry run's copy", path_));
  }
  return CopyBytes(from, source, to, path_, static_cast<uint64_t>(st.st_size));
}

}  // namespace gpkv::tools
