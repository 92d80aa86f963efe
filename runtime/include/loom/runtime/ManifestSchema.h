//===- ManifestSchema.h - The keys of manifest.json as C++ names -*- C++
//-*-===//
//
// loom::manifest::<object>::<key> is the string "<key>", for every key that
// ManifestSchema.def lists: loomc's writer and the runtime's reader name
// keys only through these, so a key is spelled once, in the .def, and one
// the .def lacks does not compile. Each name is one object (an inline
// variable), so its address says which object's key it is: the runtime's
// schema test tells task::kind from model::kind that way.
//
// Plain C++17 without LLVM: the compiler includes it too.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_MANIFESTSCHEMA_H
#define LOOM_RUNTIME_MANIFESTSCHEMA_H

namespace loom::manifest {

#define LOOM_MANIFEST_KEY(Object, Key, Type, Use)                              \
  namespace Object {                                                           \
  inline constexpr char Key[] = #Key;                                          \
  }
#include "loom/runtime/ManifestSchema.def"

} // namespace loom::manifest

#endif // LOOM_RUNTIME_MANIFESTSCHEMA_H
