//===- CurrentCommunicator.cpp - The process's communicator -----*- C++ -*-===//
//
// The one slot ScopedCurrentCommunicator fills, and stopping the job
// through it. Here rather than beside the loom_rt_* collectives because the
// communicators (CheckedCommunicator, the MPI and NCCL plugins) stop the job
// too, and must not depend on the layers above them.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/CurrentCommunicator.h"
#include "ExitDeadline.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace loom::rt {

namespace {

LocalCommunicator localWorld;
std::atomic<Communicator *> current{nullptr};

} // namespace

Communicator &currentCommunicator() {
  Communicator *comm = current.load();
  return comm ? *comm : localWorld;
}

Communicator *exchangeCurrentCommunicator(Communicator *comm) {
  return current.exchange(comm);
}

void abortJob(const std::string &message, Communicator *comm, int status) {
  Communicator &target = comm ? *comm : currentCommunicator();
  std::string rank =
      target.size() > 1 ? formatString("rank %d: ", target.rank()) : "";
  std::fprintf(stderr, "%s: error: %s%s\n", toolName(), rank.c_str(),
               message.c_str());
  std::fflush(stderr);
  // The abort itself may never return (ExitDeadline.h).
  armExitDeadline(rank, "stopping the job (the communication library's abort)",
                  status);
  target.abort(status);
  std::_Exit(status); // abort() does not return; this tells the compiler so
}

} // namespace loom::rt
