//===- NoMpi.cpp - The MPI backend of a runtime built without MPI -*- C++
//-*-===//
//
// Compiled instead of MpiCommunicator.cpp when CMake finds no MPI, so that
// single-process training still builds and runs; a multi-rank job then
// fails with a message saying why.
//
//===----------------------------------------------------------------------===//

#include "Backends.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

namespace loom::rt {

std::unique_ptr<Communicator> createMpiCommunicator(const WorldOptions &) {
  fail("this runtime was built without MPI, so it cannot run multi-rank "
       "jobs (install libopenmpi-dev and rebuild)");
}

bool mpiBackendBuilt() { return false; }

} // namespace loom::rt
