//===- loom-run.cpp - Train a compiled Loom artifact ------------*- C++ -*-===//
//
// Thin main: takes the flags (CommandLine.h) and hands their TrainOptions to
// the runtime's Trainer, or with --calibrate measures the machine for loomc's
// cost model (Calibrate.h) instead; either mode runs in one of three roles:
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

#include "CommandLine.h"

#include "loom/runtime/Artifact.h"
#include "loom/runtime/Blas.h"
#include "loom/runtime/Calibrate.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Flags.h"
#include "loom/runtime/HangReport.h"
#include "loom/runtime/Launcher.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/StopRequest.h"
#include "loom/runtime/Target.h"
#include "loom/runtime/Trainer.h"
#include "loom/runtime/Transfers.h"
#include "loom/runtime/World.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <unistd.h>

using namespace loom::rt;
using loom::run::Command;

namespace {

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
    // First, so that a ZeRO artifact's advice keeps --zero.
    checkZeroJob(manifest, command.ranks, /*external=*/false);
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
  setOffloadBandwidth(command.offloadBandwidth);
  WorldOptions world;
  world.collectiveTimeout = command.collectiveTimeout;
  world.rankOrderedSums = command.rankOrderedSums;
  std::unique_ptr<Communicator> comm = connectWorld(job, world);
  try {
    if (comm->size() > 1) {
      // The check is itself a collective, so a rank that checks and one
      // that does not would pair the check with a collective of the job.
      agreeOnSettings(
          *comm,
          {{"--check-collectives",
            command.checkCollectives ? "given" : "not given"},
           {"--reduce-order", command.rankOrderedSums ? "rank" : "mpi"},
           {"--async-collectives", loom::run::asyncCollectivesName(
                                       command.options.asyncCollectives)}});
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
      // NCCL adds in its own order, which no flag of ours changes.
      if (command.rankOrderedSums && artifact->onDevice() && comm.size() > 1)
        throw Error("--reduce-order rank applies to host (MPI) collectives; "
                    "this artifact's run on the GPU through NCCL, in NCCL's "
                    "order");
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
    Command command = loom::run::parseCommandLine(argc, argv);
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
