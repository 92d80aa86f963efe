//===- Backends.h - Constructors of the communicator backends ---*- C++ -*-===//
//
// Internal to the runtime. World.cpp picks a backend. The MPI backend is a
// plugin (src/mpi/MpiCommunicator.cpp, built as libLoomMpi.so) that
// MpiPlugin.cpp loads on first use, so that nothing in libLoomRuntime.so
// needs libmpi.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMM_BACKENDS_H
#define LOOM_RUNTIME_SRC_COMM_BACKENDS_H

#include "loom/runtime/World.h"

#include <memory>

namespace loom::rt {

/// Loads libLoomMpi.so, initialises MPI if needed and wraps a duplicate of
/// MPI_COMM_WORLD. Throws Error("multi-rank jobs need MPI: cannot load
/// libLoomMpi.so: <dlerror>") when the plugin (or libmpi) cannot be loaded.
std::unique_ptr<Communicator>
createMpiCommunicator(const WorldOptions &options);

/// Whether libLoomMpi.so can be loaded (it is not initialised).
bool mpiBackendBuilt();

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMM_BACKENDS_H
