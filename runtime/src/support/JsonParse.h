//===- JsonParse.h - Parsing JSON from untrusted files ----------*- C++ -*-===//
//
// Internal to the runtime. nlohmann::json parses without recursion, but
// dump(), copies and comparisons recurse, so a value nested a million deep
// (a few megabytes of '[') would overflow the stack in an error message;
// and it keeps the last of duplicate keys silently, so that a file could say
// two things at once. The readers of manifests and safetensors headers parse
// through here, which rejects both, like the reference safetensors reader
// (serde_json: recursion limit 128).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_JSONPARSE_H
#define LOOM_RUNTIME_SRC_JSONPARSE_H

#include <nlohmann/json.hpp>

#include <string>

namespace loom::rt {

/// Nesting deeper than this is rejected.
constexpr int kMaxJsonDepth = 128;

/// Parses [first, last) into `result`. On failure returns false and sets
/// `problem` to a sentence without nlohmann's "[json.exception...]" prefix,
/// e.g. "duplicate key \"a\"" or "number overflow parsing '1e309'".
bool parseJson(const char *first, const char *last, nlohmann::json &result,
               std::string &problem);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_JSONPARSE_H
