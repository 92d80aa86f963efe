//===- loom-run.cpp - Train a compiled Loom artifact ------------*- C++ -*-===//
//
// Thin main: parses flags into TrainOptions and hands them to the runtime's
// Trainer, or with --calibrate measures the machine for loomc's cost model
// (Calibrate.h) instead; either mode runs in one of three roles:
//   - alone (no launcher in the environment, no --ranks): one process;
//   - launcher (--ranks N, N > 1): checks what it can, then runs mpiexec on
//     itself without --ranks and reports how the job ended;
//   - rank (started by mpirun/srun/..., or by the launcher): joins the MPI
//     job and trains its slice (or takes part in the measurements).
// A cuda artifact (loomc --target=cuda) trains on this rank's GPU; the
// runtime loads its CUDA plugin for it (docs/gpu.md), and --device only
// states or checks the target.
// Every failure is one line `loom-run: error: ...` and a non-zero exit status
// (2 for command-line mistakes, 1 for everything else, or the status of a
// failed job).
//
//===----------------------------------------------------------------------===//

#include "Help.h"

#include "loom/Version.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Blas.h"
#include "loom/runtime/Calibrate.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Data.h"
#include "loom/runtime/Flags.h"
#include "loom/runtime/HangReport.h"
#include "loom/runtime/Launcher.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/StopRequest.h"
#include "loom/runtime/Target.h"
#include "loom/runtime/Trainer.h"
#include "loom/runtime/World.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <unistd.h>

using namespace loom::rt;

namespace {

/// The most --threads a rank takes (OpenBLAS's own limit, which it applies
/// silently, is lower on most builds: a warning says so).
constexpr int64_t kMaxThreads = 1024;

struct Command {
  TrainOptions options;
  std::string artifactDir;
  /// --calibrate FILE; "" when training.
  std::string calibratePath;
  /// --hang-report DIR; "" when training.
  std::string hangReportDir;
  /// --eval: evaluate the loss instead of training.
  bool eval = false;
  /// Training-only flags given (refused with --eval).
  std::vector<std::string> trainOnly;
  int64_t threads = 1;
  int64_t ranks = 0; // 0: not given
  int64_t maxRestarts = 0;
  /// --stop-timeout: seconds the launcher's ranks have to stop on request.
  double stopTimeout = 120;
  bool stopTimeoutGiven = false;
  /// --device; empty: the artifact's target.
  std::optional<Target> device;
  double collectiveTimeout = 60;
  bool checkCollectives = false;
  /// argv without --ranks and its value, for the ranks the launcher starts.
  std::vector<std::string> rankArgs;
};

Command parse(int argc, char **argv) {
  Command command;
  TrainOptions &options = command.options;
  std::string value;
  bool stepsGiven = false;
  // The first training-only flag seen, which --calibrate refuses.
  std::string trainingFlag;
  // The first argument other than --hang-report, which it refuses.
  std::string otherArgument;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const size_t start = args.consumed();
    if (args.flag("-h") || args.flag("--help")) {
      std::cout << loom::run::kHelp;
      std::exit(0);
    }
    if (args.flag("--version")) {
      std::cout << "loom-run: " LOOM_VERSION_STRING "\n";
      std::exit(0);
    }
    if (args.value("--ranks", value)) {
      // The ranks run the same command without it.
      command.ranks = parseIntFlag("--ranks", value, 1);
      continue;
    }
    if (args.value("--max-restarts", value)) {
      // The launcher's alone, like --ranks.
      command.maxRestarts = parseIntFlag("--max-restarts", value, 0);
      continue;
    }
    if (args.value("--stop-timeout", value)) {
      command.stopTimeout =
          parsePositiveFlag("--stop-timeout", value, /*allowZero=*/true);
      // The timer takes whole seconds in a time_t; 0 already means none.
      if (command.stopTimeout > 1e6)
        throw UsageError("--stop-timeout: expected at most 1000000 seconds "
                         "(0: no limit), got " +
                         value);
      command.stopTimeoutGiven = true;
      continue;
    }
    const std::string arg = args.current();
    if (args.value("--hang-report", value)) {
      if (value.empty())
        throw UsageError("--hang-report: expected a DIR of flight records");
      command.hangReportDir = value;
    } else if (args.value("--calibrate", value)) {
      if (value.empty())
        throw UsageError("--calibrate: expected a FILE to write");
      command.calibratePath = value;
    } else if (args.flag("--eval")) {
      command.eval = true;
    } else if (args.value("--eval-data", value)) {
      if (std::string problem = dataSpecProblem(value); !problem.empty())
        throw UsageError("--eval-data: " + problem);
      options.evalData = value;
    } else if (args.value("--eval-every", value)) {
      options.evalEvery = parseIntFlag("--eval-every", value, 1);
    } else if (args.value("--eval-batches", value)) {
      options.evalBatches = parseIntFlag("--eval-batches", value, 1);
    } else if (args.value("--steps", value)) {
      options.steps = parseIntFlag("--steps", value, 0);
      stepsGiven = true;
    } else if (args.value("--data", value)) {
      // Its form is the command line's (exit status 2); a file it names
      // that cannot be read is bad input (1), found when it is opened.
      if (std::string problem = dataSpecProblem(value); !problem.empty())
        throw UsageError(problem);
      options.data = value;
    } else if (args.flag("--shuffle")) {
      options.shuffle = true;
    } else if (args.value("--seed", value)) {
      options.seed = parseSeedFlag("--seed", value);
      options.seedGiven = true;
    } else if (args.value("--device", value)) {
      command.device = parseTargetName(value);
      if (!command.device)
        throw UsageError("--device: expected cpu or cuda, got '" + value + "'");
    } else if (args.value("--threads", value)) {
      command.threads = parseIntFlag("--threads", value, 1);
      // OpenBLAS allocates per thread; no machine has this many cores.
      if (command.threads > kMaxThreads)
        throw UsageError("--threads: expected at most " +
                         std::to_string(kMaxThreads) +
                         " BLAS threads per rank, got " + value);
    } else if (args.value("--log-every", value)) {
      options.logEvery = parseIntFlag("--log-every", value, 0);
    } else if (args.value("--metrics", value)) {
      options.metricsPath = value;
    } else if (args.value("--trace", value)) {
      options.tracePath = value;
    } else if (args.value("--load", value)) {
      options.loadPath = value;
    } else if (args.value("--save", value)) {
      options.savePath = value;
    } else if (args.flag("--save-async")) {
      options.saveAsync = true;
    } else if (args.value("--save-every", value)) {
      options.saveEvery = parseIntFlag("--save-every", value, 1);
    } else if (args.flag("--check-collectives")) {
      command.checkCollectives = true;
    } else if (args.value("--collective-timeout", value)) {
      command.collectiveTimeout =
          parsePositiveFlag("--collective-timeout", value, /*allowZero=*/true);
    } else if (args.current().size() > 1 && args.current()[0] == '-') {
      throw UsageError("unknown option '" + args.current() + "'");
    } else if (command.artifactDir.empty()) {
      command.artifactDir = args.take();
    } else {
      throw UsageError("unexpected argument '" + args.current() +
                       "' (only one ARTIFACT_DIR)");
    }
    const std::string name = arg.substr(0, arg.find('='));
    if (otherArgument.empty() && name != "--hang-report")
      otherArgument = arg;
    for (const char *only :
         {"--save", "--save-every", "--save-async", "--shuffle", "--trace",
          "--eval-data", "--eval-every"})
      if (name == only)
        command.trainOnly.push_back(name);
    if (trainingFlag.empty() && name.rfind("--", 0) == 0 &&
        name != "--calibrate" && name != "--threads" &&
        name != "--collective-timeout" && name != "--check-collectives")
      trainingFlag = name;
    command.rankArgs.insert(command.rankArgs.end(), argv + 1 + start,
                            argv + 1 + args.consumed());
  }
  if (command.maxRestarts > 0) {
    if (command.ranks < 2)
      throw UsageError("--max-restarts needs --ranks N (N > 1): the launcher "
                       "it starts restarts the job (under mpirun or srun, "
                       "use their restart options)");
    if (!command.calibratePath.empty() || command.eval)
      throw UsageError("--max-restarts is for training");
    if (options.savePath.empty())
      throw UsageError("--max-restarts needs --save PATH (and --save-every "
                       "K): a restart resumes from the job's last "
                       "checkpoint");
  }
  if (command.stopTimeoutGiven && command.ranks < 2)
    throw UsageError("--stop-timeout needs --ranks N (N > 1): it is how long "
                     "the launcher waits for its ranks to stop on request "
                     "(alone, a second Ctrl-C stops at once)");
  if (command.stopTimeoutGiven &&
      (!command.calibratePath.empty() || command.eval))
    throw UsageError("--stop-timeout is for training");
  if (!command.hangReportDir.empty()) {
    if (!otherArgument.empty())
      throw UsageError("--hang-report DIR takes no other arguments (got '" +
                       otherArgument + "')");
    return command;
  }
  if (!command.calibratePath.empty()) {
    const char *separate =
        " are separate modes: calibrate first (loom-run --calibrate FILE), "
        "compile with loomc --calibration=FILE, then train (loom-run "
        "ARTIFACT_DIR --steps N)";
    if (!command.artifactDir.empty())
      throw UsageError("--calibrate and ARTIFACT_DIR" + std::string(separate));
    if (stepsGiven)
      throw UsageError("--calibrate and --steps" + std::string(separate));
    if (!trainingFlag.empty())
      throw UsageError("--calibrate takes no " + trainingFlag +
                       " (a training option); only --ranks, --threads, "
                       "--collective-timeout and --check-collectives apply "
                       "to it");
    return command;
  }
  if (command.artifactDir.empty())
    throw UsageError("missing ARTIFACT_DIR");
  if (command.eval) {
    if (stepsGiven)
      throw UsageError("--eval runs no steps; use --eval-batches N for how "
                       "many batches to evaluate");
    if (!command.trainOnly.empty())
      throw UsageError("--eval takes no " + command.trainOnly.front() +
                       " (a training option)");
    return command;
  }
  if (options.evalBatches > 0 && options.evalData.empty())
    throw UsageError("--eval-batches needs --eval or --eval-data");
  if (options.evalEvery > 0 && options.evalData.empty())
    throw UsageError("--eval-every needs --eval-data SRC");
  if (!stepsGiven)
    throw UsageError("missing --steps N");
  if (options.saveEvery > 0 && options.savePath.empty())
    throw UsageError("--save-every needs --save PATH");
  if (options.saveAsync && options.savePath.empty())
    throw UsageError("--save-async needs --save PATH");
  return command;
}

/// The path of this executable, for the ranks the launcher starts.
std::string selfPath(const char *argv0) {
  char buffer[4096];
  ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (length <= 0)
    return argv0;
  return std::string(buffer, static_cast<size_t>(length));
}

int launch(const Command &command, const char *argv0) {
  // Calibration has no artifact: any rank count will do.
  if (command.calibratePath.empty()) {
    Manifest manifest = readManifest(command.artifactDir);
    checkJobMatchesMesh(manifest.mesh, command.ranks, /*external=*/false);
  }
  LaunchOptions launch;
  launch.ranks = static_cast<int>(command.ranks);
  launch.args.push_back(selfPath(argv0));
  launch.args.insert(launch.args.end(), command.rankArgs.begin(),
                     command.rankArgs.end());
  launch.stopOnRequest = command.calibratePath.empty() && !command.eval;
  launch.stopTimeout = command.stopTimeout;
  RestartOptions restarts;
  restarts.maxRestarts = command.maxRestarts;
  restarts.savePath = command.options.savePath;
  restarts.loadPath = command.options.loadPath;
  restarts.steps = command.options.steps;
  restarts.metricsPath = command.options.metricsPath;
  return launchWithRestarts(launch, restarts);
}

/// The rank a launcher gave this process, before MPI is initialised; -1 if
/// none. Used to print command-line errors once, not once per rank.
int launcherRank() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char *value = std::getenv(var); value && *value)
      return std::atoi(value);
  return -1;
}

/// Runs `body` as one rank of the job `job` (or alone), turning its failures
/// into one message for the whole job.
int runAsRank(const Command &command, const JobInfo &job,
              const std::function<void(Communicator &)> &body) {
  if (command.ranks > 0 && job.announcedSize > 0 &&
      command.ranks != job.announcedSize)
    throw UsageError("--ranks " + std::to_string(command.ranks) +
                     " but the launcher started " +
                     std::to_string(job.announcedSize) +
                     " ranks; leave --ranks out under mpirun/srun");
  setBlasThreads(static_cast<int>(command.threads));
  if (const int used = getBlasThreads();
      used != command.threads && launcherRank() <= 0)
    std::cerr << "loom-run: warning: --threads " << command.threads
              << ": OpenBLAS runs at most " << used << " threads here; using "
              << used << std::endl;
  WorldOptions world;
  world.collectiveTimeout = command.collectiveTimeout;
  std::unique_ptr<Communicator> comm = connectWorld(job, world);
  try {
    if (comm->size() > 1) {
      // The check is itself a collective, so a rank that checks and one
      // that does not would pair the check with a collective of the job.
      agreeOnSettings(*comm,
                      {{"--check-collectives",
                        command.checkCollectives ? "given" : "not given"}});
      if (command.checkCollectives)
        comm = checkEveryCollective(std::move(comm));
    }
    body(*comm);
  } catch (const JobError &e) {
    // Printed while MPI is up, and no rank exits before it is out: a
    // launcher stops the job as soon as any rank exits non-zero, which
    // could otherwise kill the reporting rank before it prints.
    std::cerr << "loom-run: error: " << e.what() << std::endl;
    comm->barrier();
    throw SilentError();
  } catch (const SilentError &) {
    comm->barrier();
    throw;
  } catch (const std::exception &e) {
    // A failure of this rank alone: its peers may be waiting for it in a
    // collective, so the whole job must stop.
    if (comm->size() > 1)
      abortJob(e.what(), comm.get());
    throw;
  }
  return 0;
}

/// Trains as one rank of the job `job` (or alone).
int train(Command &command, const JobInfo &job) {
  command.options.externalLauncher =
      job.underLauncher() && !std::getenv("LOOM_RUN_LAUNCHED");
  // Before MPI starts: a SIGUSR2 that came first would end the rank.
  if (!command.eval)
    installStopHandlers(/*interrupts=*/!job.underLauncher());
  int stoppedBy = 0;
  int status = runAsRank(command, job, [&](Communicator &comm) {
    std::unique_ptr<Artifact> artifact;
    std::string failure;
    try {
      // An explicit --device cuda is checked first: on a machine without a
      // GPU that is the thing to fix, whatever the artifact.
      if (command.device == Target::CUDA) {
        try {
          requireTarget(Target::CUDA);
        } catch (const Error &e) {
          throw Error(std::string("--device cuda: ") + e.what());
        }
      }
      ArtifactOptions options;
      options.target = command.device;
      artifact = Artifact::load(command.artifactDir, options);
    } catch (const std::exception &e) {
      failure = e.what();
    }
    agreeOnFailure(comm, failure);
    if (artifact->onDevice() && comm.isRoot())
      std::cerr << "device: " << describeTarget(Target::CUDA)
                << (comm.size() > 1 ? " (rank 0)" : "") << std::endl;
    Trainer trainer(*artifact, command.options, comm, std::cerr, std::cout);
    if (command.eval) {
      trainer.evaluate();
      return;
    }
    TrainResult result = trainer.run();
    if (result.stopped)
      stoppedBy = result.stopSignal;
  });
  // Stopped on request, the whole job in this process: what the signal
  // would have given, after the save. Ranks under a launcher exit 0 (one
  // that exits otherwise has mpirun stop the others before they are done);
  // `loom-run --ranks` exits with the status of its own signal.
  if (status == 0 && stoppedBy && !job.underLauncher())
    return 128 + stoppedBy;
  return status;
}

/// Measures the machine as one rank of the job `job` (or alone); rank 0
/// writes the calibration file.
int calibrateMachine(const Command &command, const JobInfo &job) {
  const std::string &path = command.calibratePath;
  return runAsRank(command, job, [&](Communicator &comm) {
    // Only rank 0 writes, but every rank must stop if it cannot; and a bad
    // path is better found before the measurements than after them.
    auto rootAttempt = [&](const std::function<void()> &fn) {
      std::string failure;
      if (comm.isRoot()) {
        try {
          fn();
        } catch (const std::exception &e) {
          failure = e.what();
        }
      }
      agreeOnFailure(comm, failure);
    };
    rootAttempt([&] { checkCalibrationPath(path); });
    CalibrationResult result =
        calibrate(comm, static_cast<int>(command.threads), std::cerr);
    rootAttempt([&] { writeCalibration(path, result); });
    if (comm.isRoot())
      std::cerr << "calibrated " << describeCalibration(result) << " -> "
                << path << std::endl;
  });
}

/// --hang-report DIR: prints what the flight records in `dir` say.
int hangReport(const std::string &dir) {
  std::vector<std::string> skipped;
  std::vector<FlightRecord> records = readFlightRecords(dir, &skipped);
  // Said before "no flight records", which would otherwise hide why.
  std::sort(skipped.begin(), skipped.end());
  for (const std::string &line : skipped)
    std::cerr << "loom-run: warning: " << line << std::endl;
  if (records.empty())
    throw Error("no flight records in " + dir +
                " (a rank writes DIR/rank<R>.json when one of its collectives "
                "times out and LOOM_RUN_FLIGHT_DIR names DIR)");
  int ranks = 0;
  for (const FlightRecord &r : records)
    ranks = std::max({ranks, r.ranks, r.rank + 1});
  std::cout << describeHang(records, ranks) << "\n" << describeRecords(records);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  setToolName("loom-run");
  try {
    Command command = parse(argc, argv);
    JobInfo job = detectJob();
    if (!job.underLauncher() && command.ranks > 1)
      return launch(command, argv[0]);
    if (!command.hangReportDir.empty())
      return hangReport(command.hangReportDir);
    if (!command.calibratePath.empty())
      return calibrateMachine(command, job);
    return train(command, job);
  } catch (const UsageError &e) {
    if (launcherRank() <= 0)
      std::cerr << "loom-run: error: " << e.what()
                << "\n(run 'loom-run --help' for usage)" << std::endl;
    return 2;
  } catch (const SilentError &) {
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "loom-run: error: " << e.what() << std::endl;
    return 1;
  } catch (...) {
    std::cerr << "loom-run: error: unknown internal error" << std::endl;
    return 1;
  }
}
