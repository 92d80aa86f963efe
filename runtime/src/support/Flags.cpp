//===- Flags.cpp - Command-line parsing helpers for the tools ---*- C++ -*-===//
//
// Strict number parsing: "10x", "", "1e3" for an integer and overflow are
// all rejected with the flag's name. FlagsTest.cpp lists what each helper
// accepts; integers go through absl::SimpleAtoi, seeds and real numbers
// still through strtoull and strtod, whose grammar the tools have always
// accepted (leading whitespace, '+') and no Abseil function reproduces
// (see below), but for the negative seeds strtoull wraps around.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Flags.h"

#include <absl/strings/ascii.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

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

bool parseInteger(const std::string &text, int64_t &value) {
  // SimpleAtoi skips whitespace at both ends; strtoll, which this replaced,
  // left trailing whitespace unread, and "5 " was refused.
  return !text.empty() &&
         !absl::ascii_isspace(static_cast<unsigned char>(text.back())) &&
         absl::SimpleAtoi(text, &value);
}

int64_t parseIntFlag(const std::string &flag, const std::string &text,
                     int64_t min) {
  int64_t value = 0;
  if (!parseInteger(text, value) || value < min)
    throw UsageError(absl::StrCat(flag, ": expected an integer >= ", min,
                                  ", got '", text, "'"));
  return value;
}

uint64_t parseSeedFlag(const std::string &flag, const std::string &text) {
  // strtoull, which takes the leading whitespace and '+' the seed has always
  // accepted; but it also negates a '-' (" -1" would be 2^64-1, a seed no
  // one meant), so a '-' after any whitespace is refused first.
  size_t first = text.find_first_not_of(" \t\n\v\f\r");
  errno = 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || (first != std::string::npos && text[first] == '-') ||
      *end != '\0' || errno == ERANGE)
    throw UsageError(absl::StrCat(
        flag, ": expected a non-negative integer seed, got '", text, "'"));
  return value;
}

double parsePositiveFlag(const std::string &flag, const std::string &text,
                         bool allowZero) {
  // strtod rather than absl::SimpleAtod, which in this Abseil is strtod
  // without its ERANGE: "1e-400" would become 0 rather than be refused.
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value) || value < 0 || (!allowZero && value == 0))
    throw UsageError(absl::StrCat(flag, ": expected a number ",
                                  allowZero ? ">= 0" : "> 0", ", got '", text,
                                  "'"));
  return value;
}

} // namespace loom::rt
