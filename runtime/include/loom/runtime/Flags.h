//===- Flags.h - Command-line parsing helpers for the tools -----*- C++ -*-===//
//
// The tools' mains stay thin: they walk argv with ArgCursor and convert
// values with the parse* helpers, which throw UsageError with a message that
// names the flag. Both `--flag value` and `--flag=value` are accepted, and
// nothing else.
//
// Why not absl flags (absl/flags/parse.h): absl::ParseCommandLine prints its
// own "ERROR: ..." lines and exits with status 1 (a command-line mistake here
// is one `loom-run: error:` line and status 2); it also accepts `-flag`,
// `--noflag`, `--flag=false`, `--` and its own --flagfile/--fromenv/--help,
// which would become part of loom-run's interface; and it reports no argv
// slice per flag, which the launcher needs to pass the ranks every argument
// but its own (--ranks, --max-restarts, --stop-timeout) as it was spelled.
// Abseil 20220623 (Debian 12) has no ParseAbseilFlagsOnly either.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_FLAGS_H
#define LOOM_RUNTIME_FLAGS_H

#include "loom/runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::rt {

/// A mistake on the command line (tools exit with status 2 for these).
class UsageError : public Error {
public:
  using Error::Error;
};

class ArgCursor {
public:
  ArgCursor(int argc, char **argv);
  bool done() const { return pos >= args.size(); }
  const std::string &current() const { return args[pos]; }
  /// Consumes the current argument if it is the boolean flag `name`.
  bool flag(const char *name);
  /// Consumes `name value` or `name=value`; throws UsageError when the value
  /// is missing.
  bool value(const char *name, std::string &result);
  /// Consumes the current argument (a positional one).
  std::string take();
  /// How many arguments (after argv[0]) have been consumed.
  size_t consumed() const { return pos; }

private:
  std::vector<std::string> args;
  size_t pos = 0;
};

/// Whether `text` is a decimal integer that fits in 64 bits, spelled as
/// strtoll reads one whole: an optional sign, leading (not trailing)
/// whitespace allowed. Flags and environment settings read integers with it.
bool parseInteger(const std::string &text, int64_t &value);

/// An integer >= `min`; throws UsageError("--steps: expected an integer >= 0,
/// got 'x'").
int64_t parseIntFlag(const std::string &flag, const std::string &text,
                     int64_t min);
/// An unsigned 64-bit seed.
uint64_t parseSeedFlag(const std::string &flag, const std::string &text);
/// A finite number > 0 (or >= 0 with allowZero).
double parsePositiveFlag(const std::string &flag, const std::string &text,
                         bool allowZero = false);

} // namespace loom::rt

#endif // LOOM_RUNTIME_FLAGS_H
