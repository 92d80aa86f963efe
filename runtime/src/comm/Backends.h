//===- Backends.h - Constructors of the communicator backends ---*- C++ -*-===//
//
// Internal to the runtime. World.cpp picks a backend; each backend lives in
// its own file so that MPI headers appear in MpiCommunicator.cpp only (and a
// build without MPI compiles NoMpi.cpp instead).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMM_BACKENDS_H
#define LOOM_RUNTIME_SRC_COMM_BACKENDS_H

#include "loom/runtime/World.h"

#include <memory>

namespace loom::rt {

/// Initialises MPI if needed and wraps a duplicate of MPI_COMM_WORLD.
std::unique_ptr<Communicator>
createMpiCommunicator(const WorldOptions &options);

/// Whether createMpiCommunicator can succeed in this build.
bool mpiBackendBuilt();

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMM_BACKENDS_H
