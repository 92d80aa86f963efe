//===- Plugin.h - Loading the runtime's optional backends -------*- C++ -*-===//
//
// Internal to the runtime. Backends that need libraries a machine may not
// have live in plugins beside libLoomRuntime.so: libLoomMpi.so (MPI, for
// multi-rank jobs) and libLoomCuda.so (the CUDA driver, cuBLAS and NCCL, for
// cuda artifacts). libLoomRuntime.so and loom-run therefore have no DT_NEEDED
// on any of those libraries and start everywhere; a plugin is dlopen'ed only
// when a job needs it, and a machine without its libraries gets a message
// saying what is missing instead of a loader error before main().
//
// Each plugin exports one C entry point that takes kPluginAbiVersion, so a
// plugin left over from another build is refused rather than misused.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_PLUGIN_H
#define LOOM_RUNTIME_SRC_PLUGIN_H

#include <string>

namespace loom::rt {

/// Bumped whenever an interface a plugin implements (Communicator,
/// src/device/Device.h) or a plugin entry point changes.
constexpr int kPluginAbiVersion = 4; // 4: WorldOptions::rankOrderedSums

/// Throws Error unless `callerVersion` (the core's kPluginAbiVersion) equals
/// the plugin's own. Called first by every plugin entry point.
void checkPluginAbi(int callerVersion, int pluginVersion, const char *plugin);

/// dlopen's plugin `fileName` (e.g. "libLoomMpi.so") with RTLD_NOW |
/// RTLD_GLOBAL (artifacts and MPI's own components resolve symbols from it):
/// the path in environment variable `envVar` if that is set (and nothing
/// else), otherwise the file beside libLoomRuntime.so. Returns the handle, or
/// nullptr with `error` saying why (dlerror's text, which names the path and
/// any missing dependency). Loading an already loaded plugin is cheap.
void *loadPlugin(const char *fileName, const char *envVar, std::string &error);

/// The directory holding libLoomRuntime.so ("" if unknown).
std::string runtimeLibraryDirectory();

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_PLUGIN_H
