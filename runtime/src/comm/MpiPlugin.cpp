//===- MpiPlugin.cpp - Loading the MPI backend ------------------*- C++ -*-===//
//
// Multi-rank jobs talk through MPI, which lives in the plugin libLoomMpi.so
// (src/mpi/MpiCommunicator.cpp) so that libLoomRuntime.so and loom-run have
// no dependency on libmpi: one-process runs, and cuda runs whose ranks
// talk through NCCL once they have met, start on machines without MPI.
//
//===----------------------------------------------------------------------===//

#include "Backends.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "support/Plugin.h"

#include <cstdlib>
#include <dlfcn.h>

namespace loom::rt {

namespace {

constexpr const char *kMpiPlugin = "libLoomMpi.so";
constexpr const char *kMpiPluginEnv = "LOOM_MPI_PLUGIN";

using ConnectFn = Communicator *(*)(int, const WorldOptions *);

/// The plugin's entry point, or nullptr with `error` saying why.
ConnectFn loadMpiPlugin(std::string &error) {
#ifndef LOOM_HAVE_MPI_PLUGIN
  if (!std::getenv(kMpiPluginEnv)) {
    error = "this runtime was built without MPI, so libLoomMpi.so does not "
            "exist (install libopenmpi-dev and rebuild)";
    return nullptr;
  }
#endif
  void *handle = loadPlugin(kMpiPlugin, kMpiPluginEnv, error);
  if (!handle) {
    error = std::string("cannot load ") + kMpiPlugin + ": " + error;
    return nullptr;
  }
  void *symbol = ::dlsym(handle, "loom_mpi_plugin_connect");
  if (!symbol) {
    error = std::string(kMpiPlugin) +
            " does not export loom_mpi_plugin_connect (not a Loom MPI plugin)";
    return nullptr;
  }
  return reinterpret_cast<ConnectFn>(symbol);
}

} // namespace

std::unique_ptr<Communicator>
createMpiCommunicator(const WorldOptions &options) {
  std::string error;
  ConnectFn connect = loadMpiPlugin(error);
  if (!connect)
    fail("multi-rank jobs need MPI: %s", error.c_str());
  return std::unique_ptr<Communicator>(connect(kPluginAbiVersion, &options));
}

bool mpiBackendBuilt() {
  std::string error;
  return loadMpiPlugin(error) != nullptr;
}

} // namespace loom::rt
