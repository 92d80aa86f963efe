//===- StopRequest.h - Stopping a training run on request -------*- C++ -*-===//
//
// A signal asks a training run to stop early without losing its work
// (docs/robustness.md, "Stopping a run"): the ranks finish the step in
// progress, agree on the step to stop after, save there when --save was
// given, and exit. The agreement rides on collectives the ranks run anyway
// (the step's loss reduction; with CO2 a one-number all-reduce started
// beside each round's), so every rank stops after the same step and no
// collective is left unmatched.
//
// A rank asks on SIGUSR2, which mpirun passes on to every rank; a process
// that is the whole job (no launcher) also asks on SIGINT and SIGTERM, and
// a second SIGINT or SIGTERM then ends it at once, as the signal would have.
// `loom-run --ranks` turns its own first SIGINT or SIGTERM into SIGUSR2 for
// the job (Launcher.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_STOPREQUEST_H
#define LOOM_RUNTIME_STOPREQUEST_H

namespace loom::rt {

/// Installs the handlers: SIGUSR2, plus SIGINT and SIGTERM when
/// `interrupts` (the process is the whole job; under a launcher these stay
/// fatal, since mpirun follows its SIGTERM to the ranks with SIGKILL a
/// second later whatever they do).
void installStopHandlers(bool interrupts);

/// The signal that asked this process to stop, 0 if none did. Async-signal
/// safe to set, safe to read from any thread.
int stopSignal();

/// "SIGINT", "SIGTERM" or "SIGUSR2" ("a signal" for any other).
const char *stopSignalName(int signal);

} // namespace loom::rt

#endif // LOOM_RUNTIME_STOPREQUEST_H
