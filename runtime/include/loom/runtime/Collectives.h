//===- Collectives.h - The communicator behind loom_rt_* --------*- C++ -*-===//
//
// Compiled code calls the abi.h collectives (loom_rt_all_reduce, ...) with no
// communicator argument, so the process has a current one: the Trainer (or a
// tool) installs its communicator for as long as compiled code may run, and
// without one the collectives use a LocalCommunicator (one rank), which is
// why single-process runs need no MPI initialisation.
//
// The collectives also count the time spent inside them, which the trainer
// reports per step as comm_time_s.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_COLLECTIVES_H
#define LOOM_RUNTIME_COLLECTIVES_H

#include <string>

namespace loom::rt {

class Communicator;

/// The communicator the loom_rt_* collectives use now.
Communicator &currentCommunicator();

/// Makes `comm` current until destroyed, then restores the previous one.
class ScopedCurrentCommunicator {
public:
  explicit ScopedCurrentCommunicator(Communicator &comm);
  ~ScopedCurrentCommunicator();
  ScopedCurrentCommunicator(const ScopedCurrentCommunicator &) = delete;
  ScopedCurrentCommunicator &
  operator=(const ScopedCurrentCommunicator &) = delete;

private:
  Communicator *previous;
};

/// Total seconds this process has spent inside loom_rt_* collectives.
double collectiveSeconds();

/// Prints `<tool>: error: [rank R: ]message` to stderr and ends the job
/// through `comm` (default: the current communicator): every rank of a
/// multi-rank job, or this process. For failures where no exception can be
/// thrown (inside compiled code) or where the peers cannot be told otherwise
/// (a collective that will never complete).
[[noreturn]] void abortJob(const std::string &message,
                           Communicator *comm = nullptr);

} // namespace loom::rt

#endif // LOOM_RUNTIME_COLLECTIVES_H
