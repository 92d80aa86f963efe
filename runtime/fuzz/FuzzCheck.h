//===- FuzzCheck.h - What the fuzz targets hold the readers to --*- C++ -*-===//
//
// A reader may reject an input only with a loom::rt::Error that names the
// file (scenario 18: "every case rejected with a specific error"), and what
// it accepts must be consistent. A violation aborts, which the driver or
// libFuzzer reports as a crash with the input saved.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_FUZZ_FUZZCHECK_H
#define LOOM_RUNTIME_FUZZ_FUZZCHECK_H

#include "loom/runtime/Error.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace loom::fuzz {

[[noreturn]] inline void violated(const std::string &what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

/// The error names the file it is about.
inline void checkNamesSource(const rt::Error &error,
                             const std::string &source) {
  std::string message = error.what();
  if (message.find(source) == std::string::npos ||
      message.size() <= source.size() + 2)
    violated("the error does not name " + source + ": \"" + message + "\"");
}

} // namespace loom::fuzz

#endif // LOOM_RUNTIME_FUZZ_FUZZCHECK_H
