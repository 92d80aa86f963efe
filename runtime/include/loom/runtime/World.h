//===- World.h - The job this process belongs to ----------------*- C++ -*-===//
//
// A process is either alone (LocalCommunicator, no MPI initialisation) or
// one rank of a job started by a parallel launcher. Launchers announce
// themselves through the environment (OpenMPI's mpirun: OMPI_COMM_WORLD_*,
// PMI-1/2 launchers such as MPICH's hydra or srun: PMI_SIZE, PMIx: PMIX_RANK),
// and only then is MPI initialised.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_WORLD_H
#define LOOM_RUNTIME_WORLD_H

#include <memory>
#include <string>

namespace loom::rt {

class Communicator;
struct Manifest;
struct MeshSpec;

struct JobInfo {
  /// The environment variable that revealed a launcher ("" if none).
  std::string launcherVar;
  /// Ranks announced by the launcher; 0 if it does not say (PMIx alone).
  int announcedSize = 1;
  /// This rank's index among the ranks on its machine and their number, as
  /// launchers announce them (LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK,
  /// MPI_LOCALRANKID, SLURM_LOCALID, ...); -1 and 0 when none does. A GPU
  /// rank uses device localRank modulo the devices it sees.
  int localRank = -1;
  int localSize = 0;

  bool underLauncher() const { return !launcherVar.empty(); }
};

/// Reads the environment.
JobInfo detectJob();

struct WorldOptions {
  /// See Communicator::setCollectiveTimeout.
  double collectiveTimeout = 60;
  /// loom-run --reduce-order=rank: floating-point sums of all-reduces and
  /// reduce-scatters add the ranks' values in rank order, ((x0 + x1) + x2)
  /// + ..., whatever the collective, so an all-reduce and a reduce-scatter
  /// of the same values give the same bits (ZeRO equals plain data
  /// parallelism exactly). Otherwise the MPI library's algorithm picks the
  /// order, which differs between the two collectives above 2 ranks.
  bool rankOrderedSums = false;
};

/// LocalCommunicator for a process without a launcher; otherwise loads the
/// MPI plugin (libLoomMpi.so), initialises MPI (MPI_THREAD_MULTIPLE if the
/// library has it) and returns the MPI communicator of all ranks. Throws
/// Error if the plugin cannot be loaded or MPI cannot start.
std::unique_ptr<Communicator> connectWorld(const JobInfo &job,
                                           const WorldOptions &options);

/// Whether this runtime can run multi-rank jobs: its MPI plugin
/// (libLoomMpi.so) exists and loads (MPI is not initialised).
bool haveMpi();

/// Throws Error if a job of `ranks` ranks cannot run an artifact compiled
/// for `mesh`, saying how to fix it. `external`: the job was started by an
/// external launcher (so "--ranks N" is not the advice to give).
void checkJobMatchesMesh(const MeshSpec &mesh, int64_t ranks, bool external);

/// Throws Error if `manifest` is a ZeRO artifact's and a job of `ranks`
/// ranks cannot run it: it splits its optimizer state (and at stage 3 its
/// params) over zero.ranks ranks. Checked before checkJobMatchesMesh, whose
/// advice (recompile with
/// --dp) would drop --zero. `external` as there.
void checkZeroJob(const Manifest &manifest, int64_t ranks, bool external);

} // namespace loom::rt

#endif // LOOM_RUNTIME_WORLD_H
