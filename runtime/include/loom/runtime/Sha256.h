//===- Sha256.h - SHA-256 digests of buffers and files ----------*- C++ -*-===//
//
// Checkpoints record the digest of each file they contain, so that a resume
// can refuse a file that was truncated or altered after it was written.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SHA256_H
#define LOOM_RUNTIME_SHA256_H

#include <cstddef>
#include <string>

namespace loom::rt {

/// Lower-case hex digest of `size` bytes at `data`.
std::string sha256Hex(const void *data, size_t size);
/// Lower-case hex digest of the file at `path`; throws Error if unreadable.
std::string sha256FileHex(const std::string &path);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SHA256_H
