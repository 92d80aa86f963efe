//===- World.cpp - The job this process belongs to --------------*- C++ -*-===//
//
// Launcher detection from the environment, the choice of backend, and the
// check that the job has the rank count the artifact was compiled for.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/World.h"
#include "Backends.h"
#include "ExitDeadline.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Flags.h"
#include "loom/runtime/Manifest.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

namespace loom::rt {

namespace {

/// The first of `vars` that holds a non-negative integer, or -1.
int firstInteger(std::initializer_list<const char *> vars) {
  for (const char *var : vars) {
    const char *value = std::getenv(var);
    int64_t number = -1;
    if (value && parseInteger(value, number) && number >= 0 &&
        number < (1 << 20))
      return static_cast<int>(number);
  }
  return -1;
}

} // namespace

JobInfo detectJob() {
  JobInfo job;
  // torchrun/srun-style, Open MPI, MPICH's hydra, Slurm, MVAPICH.
  job.localRank = firstInteger({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                "MPI_LOCALRANKID", "SLURM_LOCALID",
                                "MV2_COMM_WORLD_LOCAL_RANK"});
  job.localSize = std::max(
      0, firstInteger({"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                       "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE",
                       "MV2_COMM_WORLD_LOCAL_SIZE"}));
  // In order of how much they tell: OpenMPI and PMI give the size, PMIx
  // (without OpenMPI's variables) only the rank.
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    const char *value = std::getenv(var);
    if (!value || !*value)
      continue;
    job.launcherVar = var;
    int64_t size = 0;
    job.announcedSize = std::string(var) == "PMIX_RANK" ||
                                !parseInteger(value, size) || size < 1
                            ? 0
                            : int(size);
    break;
  }
  return job;
}

bool haveMpi() { return mpiBackendBuilt(); }

std::unique_ptr<Communicator> connectWorld(const JobInfo &job,
                                           const WorldOptions &options) {
  checkExitDeadlineSetting();
  if (!job.underLauncher())
    return std::make_unique<LocalCommunicator>();
  return createMpiCommunicator(options);
}

void checkJobMatchesMesh(const MeshSpec &mesh, int64_t ranks, bool external) {
  int64_t compiled = mesh.ranks();
  if (compiled == ranks)
    return;
  std::string what =
      mesh.axes.empty()
          ? std::string("1 rank (no mesh)")
          : formatString("%lld rank%s (mesh %s)",
                         static_cast<long long>(compiled),
                         compiled == 1 ? "" : "s", mesh.describe().c_str());
  std::string recompile;
  if (ranks == 1)
    recompile = mesh.axes.size() <= 1
                    ? "recompile without --dp"
                    : "recompile for one rank (without --dp or --tp)";
  else if (mesh.axes.size() <= 1)
    recompile = formatString("recompile with loomc --dp=%lld",
                             static_cast<long long>(ranks));
  else
    recompile =
        formatString("recompile for %lld ranks", static_cast<long long>(ranks));
  std::string rerun;
  if (external)
    rerun = formatString("start %lld rank%s", static_cast<long long>(compiled),
                         compiled == 1 ? "" : "s");
  else if (compiled == 1)
    rerun = "run without --ranks";
  else
    rerun =
        formatString("run with --ranks %lld", static_cast<long long>(compiled));
  fail("the artifact was compiled for %s but the job has %lld; %s or %s",
       what.c_str(), static_cast<long long>(ranks), recompile.c_str(),
       rerun.c_str());
}

void checkZeroJob(const Manifest &manifest, int64_t ranks, bool external) {
  const ZeroSpec &zero = manifest.zero;
  // With tensor or pipeline parallelism ZeRO shards over the mesh's dp
  // axis, and the mesh's own check names the job's ranks.
  if (!zero.enabled() || zero.ranks == ranks || manifest.mesh.axes.size() > 1)
    return;
  const long long compiled = zero.ranks;
  // ZeRO needs 2 ranks or more; one rank runs the model compiled without.
  std::string recompile =
      ranks < 2 ? std::string("without --dp and --zero")
                : formatString("with loomc --dp=%lld --zero=%lld",
                               static_cast<long long>(ranks),
                               static_cast<long long>(zero.stage));
  fail("%s: the artifact splits its optimizer state%s over %lld ranks "
       "(ZeRO stage %lld, zero.ranks) but the job has %lld; run it with %s "
       "%lld, or recompile %s (its checkpoints resume under any rank count)",
       manifest.source.c_str(), zero.stage >= 3 ? " and params" : "", compiled,
       static_cast<long long>(zero.stage), static_cast<long long>(ranks),
       external ? "-np" : "--ranks", compiled, recompile.c_str());
}

} // namespace loom::rt
