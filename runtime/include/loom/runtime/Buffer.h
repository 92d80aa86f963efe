//===- Buffer.h - 64-byte aligned host buffers ------------------*- C++ -*-===//
//
// The ABI promises compiled code dense, 64-byte-aligned buffers (so that
// vectorised loads of a whole cache line never split). HostBuffer owns one
// such allocation; it is zero-filled so that outputs that an entry might not
// write still read as 0 rather than garbage.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_BUFFER_H
#define LOOM_RUNTIME_BUFFER_H

#include <cstddef>

namespace loom::rt {

constexpr size_t kBufferAlignment = 64;

class HostBuffer {
public:
  HostBuffer() = default;
  explicit HostBuffer(size_t bytes);
  ~HostBuffer();
  HostBuffer(HostBuffer &&other) noexcept;
  HostBuffer &operator=(HostBuffer &&other) noexcept;
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;

  void *data() { return ptr; }
  const void *data() const { return ptr; }
  size_t size() const { return bytes; }

private:
  void *ptr = nullptr;
  size_t bytes = 0;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_BUFFER_H
