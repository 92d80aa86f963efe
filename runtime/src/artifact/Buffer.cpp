//===- Buffer.cpp - 64-byte aligned host buffers ----------------*- C++ -*-===//
//
// Sizes are rounded up to whole cache lines because std::aligned_alloc
// requires a multiple of the alignment (and so that kernels may safely read
// the tail of the last line).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Buffer.h"
#include "loom/runtime/Error.h"

#include <cstdlib>
#include <cstring>
#include <utility>

namespace loom::rt {

HostBuffer::HostBuffer(size_t size) : bytes(size) {
  size_t rounded =
      (size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (rounded == 0)
    rounded = kBufferAlignment;
  ptr = std::aligned_alloc(kBufferAlignment, rounded);
  if (!ptr)
    fail("out of memory allocating a %zu-byte buffer", size);
  std::memset(ptr, 0, rounded);
}

HostBuffer::~HostBuffer() { std::free(ptr); }

HostBuffer::HostBuffer(HostBuffer &&other) noexcept
    : ptr(std::exchange(other.ptr, nullptr)),
      bytes(std::exchange(other.bytes, 0)) {}

HostBuffer &HostBuffer::operator=(HostBuffer &&other) noexcept {
  if (this != &other) {
    std::free(ptr);
    ptr = std::exchange(other.ptr, nullptr);
    bytes = std::exchange(other.bytes, 0);
  }
  return *this;
}

} // namespace loom::rt
