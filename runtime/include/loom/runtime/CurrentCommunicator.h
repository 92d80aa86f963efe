//===- CurrentCommunicator.h - The process's communicator -------*- C++ -*-===//
//
// Compiled code calls the abi.h collectives with no communicator argument,
// and code that must stop the job (inside compiled code, in a communication
// library's callback) has none at hand either, so the process has a current
// communicator. ScopedCurrentCommunicator (Collectives.h) installs it; this
// header is the part the communicators themselves need (abortJob), kept in
// src/comm/ apart from the loom_rt_* entry points, which sit above the
// device layer (src/artifact/Collectives.cpp says why).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_CURRENTCOMMUNICATOR_H
#define LOOM_RUNTIME_CURRENTCOMMUNICATOR_H

#include <string>

namespace loom::rt {

class Communicator;

/// The communicator the loom_rt_* collectives use now: the one installed,
/// else a LocalCommunicator (one rank), which is why single-process runs
/// need no MPI initialisation.
Communicator &currentCommunicator();

/// Installs `comm` (nullptr: none) and returns the one installed before.
/// For ScopedCurrentCommunicator, which restores it; use that instead.
Communicator *exchangeCurrentCommunicator(Communicator *comm);

/// Prints `<tool>: error: [rank R: ]message` to stderr and ends the job
/// through `comm` (default: the current communicator): every rank of a
/// multi-rank job, or this process. For failures where no exception can be
/// thrown (inside compiled code) or where the peers cannot be told otherwise
/// (a collective that will never complete).
///
/// `status` is the process's exit status (MPI_Abort's error code); with
/// kAbortStatusFinal, `loom-run --max-restarts` does not restart the job.
[[noreturn]] void abortJob(const std::string &message,
                           Communicator *comm = nullptr, int status = 1);

/// The abortJob status of a rank that stopped the job alone on an error a
/// restart from the last checkpoint would meet again (a non-finite loss of
/// its own: resume is bit-exact), as opposed to a crash.
constexpr int kAbortStatusFinal = 3;

} // namespace loom::rt

#endif // LOOM_RUNTIME_CURRENTCOMMUNICATOR_H
