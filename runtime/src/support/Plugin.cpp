//===- Plugin.cpp - Loading the runtime's optional backends -----*- C++ -*-===//
//
// Plugins are found beside libLoomRuntime.so (its path comes from dladdr, so
// build trees and installs both work) unless an environment variable names
// one; nothing searches LD_LIBRARY_PATH, so a plugin from another build is
// not picked up by accident.
//
//===----------------------------------------------------------------------===//

#include "support/Plugin.h"
#include "loom/runtime/Error.h"

#include <cstdlib>
#include <dlfcn.h>

namespace loom::rt {

void checkPluginAbi(int callerVersion, int pluginVersion, const char *plugin) {
  if (callerVersion != pluginVersion)
    fail("%s implements plugin interface version %d but libLoomRuntime.so "
         "expects version %d (the plugin comes from another build of Loom; "
         "rebuild the runtime and its plugins together)",
         plugin, pluginVersion, callerVersion);
}

std::string runtimeLibraryDirectory() {
  Dl_info info;
  if (!::dladdr(reinterpret_cast<void *>(&runtimeLibraryDirectory), &info) ||
      !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

void *loadPlugin(const char *fileName, const char *envVar, std::string &error) {
  std::string path;
  if (const char *override = std::getenv(envVar); override && *override) {
    path = override;
  } else {
    std::string dir = runtimeLibraryDirectory();
    path = dir.empty() ? fileName : dir + "/" + fileName;
  }
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char *why = ::dlerror();
    error = why ? why : path + ": cannot be loaded";
  }
  return handle;
}

} // namespace loom::rt
