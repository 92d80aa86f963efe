//===- FileUtil.cpp - File helpers for durable writes -----------*- C++ -*-===//
//
// POSIX I/O with explicit fsync; std::fstream cannot fsync.
//
//===----------------------------------------------------------------------===//

#include "support/FileUtil.h"
#include "loom/runtime/Error.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::rt {

static std::string errnoText() { return std::strerror(errno); }

/// Opens `path` for reading, failing unless it is a regular file; returns the
/// descriptor and stores the file's size.
static int openRegularFile(const std::string &path, size_t &size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail("cannot read %s: %s", path.c_str(), errnoText().c_str());
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    fail("cannot read %s: not a regular file", path.c_str());
  }
  size = static_cast<size_t>(info.st_size);
  return fd;
}

std::vector<char> readFileBytes(const std::string &path) {
  size_t size;
  int fd = openRegularFile(path, size);
  std::vector<char> bytes(size);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      std::string reason = got < 0 ? errnoText() : "file shrank while reading";
      ::close(fd);
      fail("cannot read %s: %s", path.c_str(), reason.c_str());
    }
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  return bytes;
}

std::string readFileText(const std::string &path) {
  std::vector<char> bytes = readFileBytes(path);
  return std::string(bytes.begin(), bytes.end());
}

void writeFileDurable(
    const std::string &path,
    const std::vector<std::pair<const void *, size_t>> &parts) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    fail("cannot write %s: %s", path.c_str(), errnoText().c_str());
  for (const auto &[data, size] : parts) {
    const char *bytes = static_cast<const char *>(data);
    size_t done = 0;
    while (done < size) {
      ssize_t wrote = ::write(fd, bytes + done, size - done);
      if (wrote < 0 && errno == EINTR)
        continue;
      if (wrote < 0) {
        std::string reason = errnoText();
        ::close(fd);
        fail("cannot write %s: %s", path.c_str(), reason.c_str());
      }
      done += static_cast<size_t>(wrote);
    }
  }
  if (::fsync(fd) != 0) {
    std::string reason = errnoText();
    ::close(fd);
    fail("cannot flush %s to disk: %s", path.c_str(), reason.c_str());
  }
  if (::close(fd) != 0)
    fail("cannot write %s: %s", path.c_str(), errnoText().c_str());
}

void writeFileDurable(const std::string &path, const std::string &text) {
  writeFileDurable(path, {{text.data(), text.size()}});
}

void syncDirectory(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    fail("cannot open directory %s: %s", path.c_str(), errnoText().c_str());
  // Some file systems refuse fsync on directories (EINVAL); the rename is
  // then as durable as that file system can make it.
  if (::fsync(fd) != 0 && errno != EINVAL) {
    std::string reason = errnoText();
    ::close(fd);
    fail("cannot flush directory %s: %s", path.c_str(), reason.c_str());
  }
  ::close(fd);
}

void checkCanCreateFileIn(const std::string &dir, const std::string &path,
                          const char *what) {
  // mkstemp's unique name keeps apart the ranks and jobs that share `dir`.
  std::string probe = dir + "/.loom-write-probe-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    fail("cannot write %s %s: cannot create a file in %s: %s", what,
         path.c_str(), dir.c_str(), errnoText().c_str());
  ::close(fd);
  ::unlink(probe.c_str());
}

std::string parentDirectory(const std::string &path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/')
    trimmed.pop_back();
  size_t slash = trimmed.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return trimmed.substr(0, slash);
}

MappedFile::MappedFile(const std::string &path) {
  int fd = openRegularFile(path, length);
  if (length > 0) {
    void *map = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      std::string reason = errnoText();
      ::close(fd);
      fail("cannot map %s: %s", path.c_str(), reason.c_str());
    }
    bytes = static_cast<const unsigned char *>(map);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (bytes)
    ::munmap(const_cast<unsigned char *>(bytes), length);
}

} // namespace loom::rt
