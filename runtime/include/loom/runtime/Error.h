//===- Error.h - The runtime's error type -----------------------*- C++ -*-===//
//
// Every user-facing failure (bad flag value, malformed manifest, corrupted
// checkpoint, NaN loss) is thrown as an Error whose message is one complete
// sentence naming the file/field at fault. The tools catch it at the top level
// and print `<tool>: error: <message>`, so no user error ever crashes.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_ERROR_H
#define LOOM_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace loom::rt {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Throws an Error built with printf-style formatting.
[[noreturn]] void fail(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/// printf into a std::string.
std::string formatString(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

} // namespace loom::rt

#endif // LOOM_RUNTIME_ERROR_H
