//===- Launcher.cpp - Starting the ranks of a local job ---------*- C++ -*-===//
//
// fork + exec of mpiexec with its stderr on a pipe that the launcher reads
// line by line (MpirunOutputFilter); stdout is inherited, so rank 0's result
// line reaches our stdout unchanged. mpiexec gets a process group of its own
// and no stdin (a background group reading the terminal would be stopped),
// so terminal signals reach the launcher only: it passes SIGINT, SIGTERM
// and SIGHUP on (a training job's first SIGINT or SIGTERM as SIGUSR2, a
// request to stop and save), passes Ctrl-Z and the continue after it on and
// stops with the job, and has mpiexec get SIGTERM if the launcher itself
// dies, so the job never outlives it.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Launcher.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/HangReport.h"

#include "comm/ExitDeadline.h"
#include "support/Plugin.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LOOM_MPIEXEC
#define LOOM_MPIEXEC ""
#endif
#ifndef LOOM_MPI_FLAVOR
#define LOOM_MPI_FLAVOR ""
#endif

namespace loom::rt {

namespace {

volatile sig_atomic_t childPid = 0;
volatile sig_atomic_t forwarded = 0;
/// The signal that asked a training job to stop (SIGUSR2 to the ranks), and
/// whether the ranks then took longer than the stop timeout.
volatile sig_atomic_t stopAsked = 0;
volatile sig_atomic_t stopExpired = 0;
/// What the launcher says when it asks, one line per signal, written from
/// the handler (write(2) is async-signal-safe, stdio is not).
std::string stopNoteInt, stopNoteTerm;
double stopTimeoutSeconds = 0;

/// SIGUSR1 is only passed on (mpiexec passes it to the ranks, whose
/// watchdogs print what they are doing; the job goes on).
void passOn(int signal) {
  if (childPid > 0)
    kill(childPid, signal);
}

void forwardSignal(int signal) {
  forwarded = signal;
  passOn(signal);
}

void setHandler(int signal, void (*handler)(int)) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART; // reads of the pipe go on after a signal
  sigaction(signal, &action, nullptr);
}

/// A training job's first SIGINT or SIGTERM: the ranks stop after a step
/// they agree on and save; the second stops them at once.
void requestStop(int signal) {
  if (stopAsked || childPid <= 0) {
    forwardSignal(signal);
    return;
  }
  stopAsked = signal;
  passOn(SIGUSR2);
  const std::string &note = signal == SIGINT ? stopNoteInt : stopNoteTerm;
  ssize_t ignored = write(STDERR_FILENO, note.data(), note.size());
  (void)ignored;
  if (stopTimeoutSeconds > 0) {
    struct itimerval timer;
    std::memset(&timer, 0, sizeof(timer));
    timer.it_value.tv_sec = static_cast<time_t>(stopTimeoutSeconds);
    timer.it_value.tv_usec = static_cast<suseconds_t>(
        (stopTimeoutSeconds - static_cast<double>(timer.it_value.tv_sec)) *
        1e6);
    setitimer(ITIMER_REAL, &timer, nullptr);
  }
}

void stopTimedOut(int) {
  stopExpired = 1;
  passOn(SIGTERM);
}

/// Ctrl-Z: the job stops (mpiexec passes SIGTSTP to the ranks), then the
/// launcher; `fg` or SIGCONT continues both.
void suspendJob(int) {
  passOn(SIGTSTP);
  setHandler(SIGTSTP, SIG_DFL); // arrives as the handler returns
  raise(SIGTSTP);
}

void resumeJob(int) {
  passOn(SIGCONT);
  setHandler(SIGTSTP, suspendJob);
}

bool isExecutable(const std::string &path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

/// A temporary directory for the ranks' flight records (FlightRecord.h),
/// named to them in the environment, removed with its files at the end
/// unless kept (they describe a hang).
class FlightDir {
public:
  FlightDir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/loom-run-flight.XXXXXX";
    if (mkdtemp(pattern.data())) {
      path = pattern;
      setenv(kFlightDirEnv, path.c_str(), /*overwrite=*/1);
    }
  }
  ~FlightDir() {
    if (path.empty() || kept)
      return;
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  /// Empty when it could not be made.
  const std::string &directory() const { return path; }
  std::vector<FlightRecord> records() const {
    return path.empty() ? std::vector<FlightRecord>{} : readFlightRecords(path);
  }
  /// Leaves the directory in place; returns its path.
  const std::string &keep() {
    kept = true;
    return path;
  }

private:
  std::string path;
  bool kept = false;
};

/// Open MPI keeps a job's session files under <tmpdir>/ompi.<host>.<uid>,
/// one directory every job of the user shares, which a job that ends
/// removes when it is empty: a job starting beside it then fails with "A
/// call to mkdir was unable to create the desired directory" (seen with two
/// --ranks jobs at once). Each job gets its own base, inside its flight
/// directory, unless the user chose one.
void useOwnSessionDir(const FlightDir &flight) {
  const std::string &dir = flight.directory();
  if (dir.empty())
    return;
  setenv("OMPI_MCA_orte_tmpdir_base", dir.c_str(), /*overwrite=*/0);
  setenv("PRTE_MCA_prte_tmpdir_base", dir.c_str(), /*overwrite=*/0);
}

/// Whether `mpiexec` is MPICH's hydra (its flags differ from Open MPI's).
bool isHydra(const std::string &mpiexec) {
  if (mpiexec.find("mpich") != std::string::npos ||
      mpiexec.find("hydra") != std::string::npos)
    return true;
  if (mpiexec.find("openmpi") != std::string::npos)
    return false;
  return std::string(LOOM_MPI_FLAVOR) == "mpich";
}

/// Adds libLoomLoopbackOnly.so (beside libLoomRuntime.so) to LD_PRELOAD,
/// after whatever the user preloads; nothing if it is missing.
void preloadLoopbackOnly() {
  std::string dir = runtimeLibraryDirectory();
  std::string shim = (dir.empty() ? "." : dir) + "/libLoomLoopbackOnly.so";
  if (access(shim.c_str(), R_OK) != 0)
    return;
  const char *preload = std::getenv("LD_PRELOAD");
  std::string value =
      preload && *preload ? std::string(preload) + ":" + shim : shim;
  setenv("LD_PRELOAD", value.c_str(), /*overwrite=*/1);
}

} // namespace

std::string defaultMpiexec() {
  if (const char *path = std::getenv("LOOM_MPIEXEC"); path && *path)
    return path;
  return LOOM_MPIEXEC;
}

std::vector<std::string> mpiexecCommand(const std::string &mpiexec,
                                        const LaunchOptions &options) {
  std::vector<std::string> command = {mpiexec};
  if (isHydra(mpiexec)) {
    command.insert(command.end(),
                   {"-n", std::to_string(options.ranks), "-bind-to", "none"});
  } else {
    // Ranks share the machine with each other and with whatever else runs:
    // no pinning, and more ranks than cores is allowed.
    command.insert(command.end(),
                   {"-np", std::to_string(options.ranks), "--bind-to", "none",
                    "--oversubscribe", "--stdin", "none"});
    if (geteuid() == 0)
      command.push_back("--allow-run-as-root");
  }
  command.insert(command.end(), options.args.begin(), options.args.end());
  return command;
}

LaunchResult launchLocalRanks(const LaunchOptions &options) {
  // Every rank would refuse it, each with the same line.
  checkExitDeadlineSetting();
  std::string mpiexec = defaultMpiexec();
  if (!isExecutable(mpiexec)) {
    std::string problem = mpiexec.empty()
                              ? "no MPI launcher is known"
                              : "the MPI launcher " + mpiexec + " is missing";
    fail("cannot start %d ranks: %s (install openmpi-bin, or set "
         "LOOM_MPIEXEC to the mpiexec of the MPI this runtime was built "
         "with)",
         options.ranks, problem.c_str());
  }
  std::vector<std::string> command = mpiexecCommand(mpiexec, options);
  std::vector<char *> argv;
  for (std::string &arg : command)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  // Ranks that busy-poll starve each other on small machines (toolchain.md);
  // the ranks inherit this unless the user chose otherwise.
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
  // The ranks of this job are on this machine and talk through shared
  // memory: none of them listens on the network (Open MPI's TCP transport
  // would on every interface), and mpiexec's own channel to them stays on
  // the loopback interface (docs/reliability.md, scenario 19). The
  // user's settings win; MPICH's hydra has none of these.
  if (!isHydra(mpiexec)) {
    const bool defaults = !std::getenv("OMPI_MCA_btl") &&
                          !std::getenv("OMPI_MCA_oob_tcp_if_include");
    setenv("OMPI_MCA_btl", "self,vader", /*overwrite=*/0);
    setenv("OMPI_MCA_oob_tcp_if_include", "lo", /*overwrite=*/0);
    // mpiexec binds its own listeners to every interface regardless;
    // LoopbackOnly.c moves them to the loopback. Only with the defaults
    // above: a transport the user chose may advertise other addresses.
    if (defaults)
      preloadLoopbackOnly();
  }
  // Tells the ranks that `--ranks` (not an external launcher) started them.
  setenv("LOOM_RUN_LAUNCHED", "1", /*overwrite=*/1);
  // Where ranks that time out in a collective say what they wait in.
  FlightDir flight;
  useOwnSessionDir(flight);

  int fds[2];
  if (pipe(fds) != 0)
    fail("cannot start %d ranks: pipe: %s", options.ranks,
         std::strerror(errno));
  std::fflush(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0)
    fail("cannot start %d ranks: fork: %s", options.ranks,
         std::strerror(errno));
  if (pid == 0) {
    // mpiexec (and with it the job) ends when the launcher does, even when
    // the launcher is killed outright.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
      _exit(1);
    setpgid(0, 0);
    if (int null = open("/dev/null", O_RDONLY); null >= 0) {
      dup2(null, STDIN_FILENO);
      close(null);
    }
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(argv[0], argv.data());
    std::fprintf(stderr, "%s: error: cannot run %s: %s\n", toolName(), argv[0],
                 std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  // Also here: a Ctrl-C right after the fork must not reach mpiexec first.
  setpgid(pid, pid);
  forwarded = stopAsked = stopExpired = 0;
  stopTimeoutSeconds = options.stopTimeout;
  for (int signal : {SIGINT, SIGTERM}) {
    std::string limit = options.stopTimeout > 0
                            ? formatString(" within %g s", options.stopTimeout)
                            : std::string();
    (signal == SIGINT ? stopNoteInt : stopNoteTerm) = formatString(
        "%s: %s: the ranks stop after the next step they agree on (and save, "
        "with --save)%s; %s again stops them at once\n",
        toolName(), signal == SIGINT ? "SIGINT" : "SIGTERM", limit.c_str(),
        signal == SIGINT ? "Ctrl-C" : "SIGTERM");
  }
  childPid = pid;
  setHandler(SIGINT, options.stopOnRequest ? requestStop : forwardSignal);
  setHandler(SIGTERM, options.stopOnRequest ? requestStop : forwardSignal);
  setHandler(SIGHUP, forwardSignal);
  setHandler(SIGUSR1, passOn);
  setHandler(SIGALRM, stopTimedOut);
  setHandler(SIGTSTP, suspendJob);
  setHandler(SIGCONT, resumeJob);

  MpirunOutputFilter filter;
  std::FILE *input = fdopen(fds[0], "r");
  char *line = nullptr;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, input)) >= 0) {
    std::string text(line, static_cast<size_t>(length));
    if (!text.empty() && text.back() == '\n')
      text.pop_back();
    std::fputs(filter.line(text).c_str(), stderr);
    std::fflush(stderr);
  }
  std::free(line);
  std::fclose(input);
  std::fputs(filter.finish().c_str(), stderr);

  int waitStatus = 0;
  while (waitpid(pid, &waitStatus, 0) < 0 && errno == EINTR) {
  }
  childPid = 0;
  struct itimerval off;
  std::memset(&off, 0, sizeof(off));
  setitimer(ITIMER_REAL, &off, nullptr);
  int status = WIFEXITED(waitStatus)     ? WEXITSTATUS(waitStatus)
               : WIFSIGNALED(waitStatus) ? 128 + WTERMSIG(waitStatus)
                                         : 1;
  std::string message;
  if (forwarded)
    message = formatString("the job was stopped by signal %d (%s)",
                           static_cast<int>(forwarded), strsignal(forwarded));
  else if (stopExpired)
    message = formatString("the ranks did not stop within %g s of %s "
                           "(--stop-timeout); stopped them",
                           options.stopTimeout,
                           stopAsked == SIGINT ? "SIGINT" : "SIGTERM");
  else if (stopAsked && status == 0)
    status = 128 + stopAsked; // stopped and saved as asked
  else
    message = launchFailureMessage(filter, status);
  if (!message.empty())
    std::fprintf(stderr, "%s: error: %s\n", toolName(), message.c_str());
  if (status != 0) {
    std::string hang = describeHang(flight.records(), options.ranks);
    if (!hang.empty()) {
      std::fprintf(stderr, "%s: note: %s\n", toolName(), hang.c_str());
      std::fprintf(stderr,
                   "%s: note: each rank's last %d collectives before the one "
                   "it waits in: %s --hang-report %s\n",
                   toolName(), kRecentCollectives, toolName(),
                   flight.keep().c_str());
    }
  }
  std::fflush(stderr);
  LaunchResult result;
  result.status = status;
  // A signal from mpiexec's side that no rank reported is a crash too.
  result.restartable =
      status != 0 && !forwarded && !stopAsked &&
      (filter.crashed() || (status > 128 && !filter.rankPrintedError()));
  return result;
}

} // namespace loom::rt
