//===- Sha256.cpp - SHA-256 digests of buffers and files --------*- C++ -*-===//
//
// OpenSSL's EVP interface (the SHA256_* functions are deprecated in 3.0).
// Files are hashed in 1 MiB chunks so large checkpoints need no extra memory.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Sha256.h"
#include "loom/runtime/Error.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <unistd.h>
#include <vector>

namespace loom::rt {

namespace {

struct DigestContext {
  DigestContext() : ctx(EVP_MD_CTX_new()) {
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1)
      fail("cannot initialise SHA-256");
  }
  ~DigestContext() { EVP_MD_CTX_free(ctx); }
  void update(const void *data, size_t size) {
    if (EVP_DigestUpdate(ctx, data, size) != 1)
      fail("SHA-256 update failed");
  }
  std::string finishHex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (EVP_DigestFinal_ex(ctx, digest, &length) != 1)
      fail("SHA-256 finalisation failed");
    static const char *hex = "0123456789abcdef";
    std::string text;
    for (unsigned i = 0; i < length; ++i) {
      text += hex[digest[i] >> 4];
      text += hex[digest[i] & 15];
    }
    return text;
  }
  EVP_MD_CTX *ctx;
};

} // namespace

std::string sha256Hex(const void *data, size_t size) {
  DigestContext context;
  context.update(data, size);
  return context.finishHex();
}

std::string sha256FileHex(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail("cannot read %s: %s", path.c_str(), std::strerror(errno));
  DigestContext context;
  std::vector<char> chunk(1 << 20);
  for (;;) {
    ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      std::string reason = std::strerror(errno);
      ::close(fd);
      fail("cannot read %s: %s", path.c_str(), reason.c_str());
    }
    if (got == 0)
      break;
    context.update(chunk.data(), static_cast<size_t>(got));
  }
  ::close(fd);
  return context.finishHex();
}

} // namespace loom::rt
