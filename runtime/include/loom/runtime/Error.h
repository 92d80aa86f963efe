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

/// A failure that every rank of a multi-rank job has reached together (after
/// a collective agreement, or from values all ranks share), so no peer is
/// left waiting: one rank throws JobError and prints it, the others throw
/// SilentError and print nothing, and all exit normally with status 1. Any
/// other Error in a multi-rank job may leave peers blocked in a collective,
/// so the tools print it with the rank and abort the whole job.
class JobError : public Error {
public:
  using Error::Error;
};
class SilentError : public Error {
public:
  SilentError() : Error("failure reported by another rank") {}
};

/// The program name printed before "error:" in messages that bypass the
/// tools' top-level handler (e.g. from inside compiled code); set by main.
void setToolName(const char *name);
const char *toolName();

/// Throws an Error built with printf-style formatting.
[[noreturn]] void fail(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/// printf into a std::string.
std::string formatString(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

} // namespace loom::rt

#endif // LOOM_RUNTIME_ERROR_H
