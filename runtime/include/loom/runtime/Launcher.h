//===- Launcher.h - Starting the ranks of a local job -----------*- C++ -*-===//
//
// `loom-run DIR --ranks N` starts N ranks on this machine by running the MPI
// launcher (Open MPI's mpirun, or MPICH's hydra mpiexec) on the same
// executable with the same arguments minus --ranks. The launcher stays in
// between: it forwards the job's output, replaces Open MPI's multi-line
// notices about a failed rank by one `loom-run: error:` line naming the rank,
// and exits with mpirun's status.
//
// mpiexec runs in a process group of its own, so that the terminal's Ctrl-C
// and Ctrl-Z reach the launcher alone, which decides what the job gets: a
// training job's first SIGINT or SIGTERM becomes SIGUSR2 for the ranks,
// which stop together after a step and save (StopRequest.h); a second, or
// the ranks not ending within the stop timeout, stops the job at once.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_LAUNCHER_H
#define LOOM_RUNTIME_LAUNCHER_H

#include <cstdint>
#include <string>
#include <vector>

namespace loom::rt {

struct LaunchOptions {
  int ranks = 1;
  /// The command each rank runs: args[0] is the executable.
  std::vector<std::string> args;
  /// A training job: the first SIGINT or SIGTERM asks the ranks to stop
  /// and save (SIGUSR2) instead of stopping them; after `stopTimeout`
  /// seconds (0: no limit) without the job ending they are stopped.
  bool stopOnRequest = false;
  double stopTimeout = 0;
};

/// The MPI launcher to run: $LOOM_MPIEXEC, else the one of the MPI the
/// runtime was built with; "" if none is known.
std::string defaultMpiexec();

/// The launcher command line for `options` (mpiexec, flags, rank command).
std::vector<std::string> mpiexecCommand(const std::string &mpiexec,
                                        const LaunchOptions &options);

struct LaunchResult {
  /// The exit status for the calling process: 0, or mpiexec's non-zero
  /// status (after printing why the job failed).
  int status = 0;
  /// Whether a restart from the last checkpoint may get past the failure
  /// (MpirunOutputFilter::crashed); false for a job stopped by a signal the
  /// launcher passed on or asked to stop (then `status` is 128 + the
  /// signal the launcher got, when the ranks stopped as asked).
  bool restartable = false;
};

/// Runs the job. Throws Error if the launcher cannot be started.
LaunchResult launchLocalRanks(const LaunchOptions &options);

/// `loom-run --max-restarts`: what the job trains and where it saves.
struct RestartOptions {
  /// How many times a crashed job is started again (0: never).
  int64_t maxRestarts = 0;
  /// The job's --save (the checkpoints it resumes from), --load, --steps
  /// and --metrics.
  std::string savePath;
  std::string loadPath;
  int64_t steps = 0;
  std::string metricsPath;
};

/// Runs the job like launchLocalRanks and, while it fails restartably
/// (LaunchResult::restartable), up to maxRestarts more times: from the last
/// checkpoint the job saved at savePath, with the steps left to reach the
/// first attempt's last step (or from the start when it saved none yet).
/// Each attempt's ranks see LOOM_RUN_ATTEMPT (1, 2, ...); the metrics of a
/// failed attempt are kept as FILE.attempt<k>. Returns the last attempt's
/// status, or 0 when the job had saved its last step before it failed.
int launchWithRestarts(LaunchOptions launch, const RestartOptions &restarts);

/// Reads Open MPI's mpirun output line by line: passes job output through
/// and holds back mpirun's boxed notices, keeping from them which rank
/// failed and how.
class MpirunOutputFilter {
public:
  /// One line without its newline; returns what to print now (each line
  /// with its newline, possibly none).
  std::string line(const std::string &text);
  /// What is still held back when the output ends.
  std::string finish();
  /// The one-line summary of the failure mpirun reported, e.g. "rank 1 (on
  /// node n1) was killed by signal 9 (Killed)"; "" if none was seen.
  const std::string &failure() const { return why; }
  /// Whether the failure was a rank that exited with an error status, as
  /// opposed to a crash, a signal or an abort.
  bool failureIsErrorExit() const { return errorExit; }
  /// Whether a rank printed its own "<tool>: error:" line.
  bool rankPrintedError() const { return sawError; }
  /// Whether a rank crashed, was killed, aborted the job alone (a dead peer,
  /// a watchdog timeout, any failure its peers did not share) or exited
  /// without finishing MPI: what `loom-run --max-restarts` retries. Ranks
  /// that all stop on an error they agreed on (bad input, a NaN loss) exit
  /// with their error status instead, which a restart would only repeat.
  bool crashed() const { return crash; }

private:
  std::string closeBox();
  std::vector<std::string> box;
  bool inBox = false;
  std::string why;
  bool errorExit = false;
  bool sawError = false;
  bool crash = false;
};

/// The line the launcher prints when the job failed with `status`: says
/// which rank failed and how, or "" when a rank already printed its error.
std::string launchFailureMessage(const MpirunOutputFilter &filter, int status);

} // namespace loom::rt

#endif // LOOM_RUNTIME_LAUNCHER_H
