//===- NotedKeys.h - Which manifest keys the parser looks up ----*- C++ -*-===//
//
// Internal to the runtime, for ManifestTest's schema tests: they check that
// the parser looks up exactly the keys ManifestSchema.def marks Read, which
// they can only learn from the parser itself.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_MANIFEST_NOTEDKEYS_H
#define LOOM_RUNTIME_SRC_MANIFEST_NOTEDKEYS_H

#include "loom/runtime/Manifest.h"

#include <set>
#include <string>

namespace loom::rt {

/// parseManifest, also adding to `keysRead` every key it looks up, present
/// or not: the address of its loom::manifest::<object>::<key> name
/// (ManifestSchema.h), which tells task.kind from model.kind.
Manifest parseManifestNotingKeys(const std::string &text,
                                 const std::string &source,
                                 std::set<const char *> &keysRead);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_MANIFEST_NOTEDKEYS_H
