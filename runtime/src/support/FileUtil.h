//===- FileUtil.h - File helpers for durable writes -------------*- C++ -*-===//
//
// Internal to the runtime. Checkpoints must survive a crash at any point, so
// files are written with explicit fsync of the file and of its directory;
// errors carry the path and strerror.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_FILEUTIL_H
#define LOOM_RUNTIME_SRC_FILEUTIL_H

#include <cstddef>
#include <string>
#include <vector>

namespace loom::rt {

/// Whole file into memory; throws Error("cannot read PATH: reason").
std::vector<char> readFileBytes(const std::string &path);
std::string readFileText(const std::string &path);

/// Writes the pieces to `path` (truncating) and fsyncs it.
void writeFileDurable(
    const std::string &path,
    const std::vector<std::pair<const void *, size_t>> &parts);
void writeFileDurable(const std::string &path, const std::string &text);

/// fsyncs a directory so that renames/creations in it are durable.
void syncDirectory(const std::string &path);

/// The directory containing `path` ("." if none).
std::string parentDirectory(const std::string &path);

/// Throws Error("cannot write WHAT PATH: cannot create a file in DIR:
/// reason") unless a file can be created in `dir`, the directory `path` is
/// to be written into: creates and removes a probe file, so that a place
/// that takes no files (/proc, a read-only disk, as root too, whom
/// access(2) lets write anywhere) fails before the work whose results the
/// file is to hold, naming the user's path rather than a temporary one.
void checkCanCreateFileIn(const std::string &dir, const std::string &path,
                          const char *what);

/// A read-only memory map of a whole file.
class MappedFile {
public:
  /// Throws Error("cannot read PATH: reason").
  explicit MappedFile(const std::string &path);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  const unsigned char *data() const { return bytes; }
  size_t size() const { return length; }

private:
  const unsigned char *bytes = nullptr;
  size_t length = 0;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_FILEUTIL_H
