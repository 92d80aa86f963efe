//===- ExitDeadline.h - Ending a rank whose way out is stuck ----*- C++ -*-===//
//
// Internal to the runtime. Stopping a job goes through calls that may never
// return: MPI_Abort waits for the launcher's daemon, which may be gone or
// unreachable, and the watchdog's flight record is a write to a file system
// that may hang (docs/reliability.md, scenarios 5 and 6). Before such a
// step the caller arms a deadline: a thread that, unless the process has
// ended by then, says so and exits, which a launcher sees as a failed rank.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMM_EXITDEADLINE_H
#define LOOM_RUNTIME_SRC_COMM_EXITDEADLINE_H

#include <string>

namespace loom::rt {

/// Seconds: LOOM_ABORT_DEADLINE_S, default 30 (also when it is malformed:
/// checkExitDeadlineSetting() refuses that when the job starts).
double exitDeadlineSeconds();

/// Throws Error when LOOM_ABORT_DEADLINE_S is set to anything but a number
/// of seconds from 0.1 to 86400 (a typo would otherwise surface only when a
/// job stops, as another deadline).
void checkExitDeadlineSetting();

/// In exitDeadlineSeconds(), unless the process has ended, prints
/// "<tool>: error: <rankPrefix><what> did not end this rank within N s;
/// exiting" and exits with `status`.
void armExitDeadline(const std::string &rankPrefix, const std::string &what,
                     int status);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMM_EXITDEADLINE_H
