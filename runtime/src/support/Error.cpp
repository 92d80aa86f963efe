//===- Error.cpp - The runtime's error type ---------------------*- C++ -*-===//
//
// printf-style helpers for building Error messages.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Error.h"

#include <cstdarg>
#include <cstdio>

namespace loom::rt {

static const char *currentToolName = "loom";

void setToolName(const char *name) { currentToolName = name; }
const char *toolName() { return currentToolName; }

static std::string vformat(const char *format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (length < 0)
    return format;
  std::string result(static_cast<size_t>(length) + 1, '\0');
  std::vsnprintf(result.data(), result.size(), format, args);
  result.resize(static_cast<size_t>(length));
  return result;
}

std::string formatString(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string result = vformat(format, args);
  va_end(args);
  return result;
}

void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string message = vformat(format, args);
  va_end(args);
  throw Error(message);
}

} // namespace loom::rt
