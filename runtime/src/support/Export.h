//===- Export.h - Visibility of the ABI service symbols ---------*- C++ -*-===//
//
// Internal to the runtime. A dlopen'ed artifact resolves the abi.h services
// from libLoomRuntime.so, so they must stay exported even if the library is
// one day built with -fvisibility=hidden.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_EXPORT_H
#define LOOM_RUNTIME_SRC_EXPORT_H

#define LOOM_RT_ABI_EXPORT __attribute__((visibility("default")))

#endif // LOOM_RUNTIME_SRC_EXPORT_H
