//===- Flags.cpp - Command-line parsing helpers for the tools ---*- C++ -*-===//
//
// Strict number parsing: "10x", "", "1e3" for an integer and overflow are
// all rejected with the flag's name.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace loom::rt {

ArgCursor::ArgCursor(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    args.emplace_back(argv[i]);
}

bool ArgCursor::flag(const char *name) {
  if (done() || args[pos] != name)
    return false;
  ++pos;
  return true;
}

bool ArgCursor::value(const char *name, std::string &result) {
  if (done())
    return false;
  const std::string &arg = args[pos];
  size_t length = std::strlen(name);
  if (arg.compare(0, length, name) != 0)
    return false;
  if (arg.size() == length) {
    if (pos + 1 >= args.size())
      throw UsageError(std::string(name) + " needs a value");
    result = args[pos + 1];
    pos += 2;
    return true;
  }
  if (arg[length] != '=')
    return false;
  result = arg.substr(length + 1);
  ++pos;
  return true;
}

std::string ArgCursor::take() { return args[pos++]; }

int64_t parseIntFlag(const std::string &flag, const std::string &text,
                     int64_t min) {
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min)
    throw UsageError(flag + ": expected an integer >= " + std::to_string(min) +
                     ", got '" + text + "'");
  return value;
}

uint64_t parseSeedFlag(const std::string &flag, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE)
    throw UsageError(flag + ": expected a non-negative integer seed, got '" +
                     text + "'");
  return value;
}

double parsePositiveFlag(const std::string &flag, const std::string &text,
                         bool allowZero) {
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value) || value < 0 || (!allowZero && value == 0))
    throw UsageError(flag + ": expected a number " +
                     (allowZero ? ">= 0" : "> 0") + ", got '" + text + "'");
  return value;
}

} // namespace loom::rt
